"""The test-run profile (COURSE_TEST_PROFILE, benchmarks/profile_tests.py): what it records
is what happened, and its summary groups pytest processes into the lanes they ran in."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import subprocess, sys

def test_spends_cpu_in_a_subprocess():
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)

def test_fails():
    assert False
"""


def _profile_tool():
    spec = importlib.util.spec_from_file_location(
        "profile_tests", ROOT / "benchmarks" / "profile_tests.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_test_is_written_with_its_time_children_cpu_and_outcome(tmp_path):
    (tmp_path / "test_probe.py").write_text(PROBE)
    folder = tmp_path / "profile"
    env = dict(os.environ, COURSE_TEST_PROFILE=str(folder))
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "course_helpers.testing.pytest_plugin", "test_probe.py"],
        cwd=tmp_path, env=env, capture_output=True, check=False,
    )  # fmt: skip
    (log,) = folder.glob("tests-*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["event"] for r in records] == ["session", "test", "test", "end"]
    spent, failed = records[1], records[2]
    assert spent["nodeid"] == "test_probe.py::test_spends_cpu_in_a_subprocess"
    assert spent["outcome"] == "passed" and failed["outcome"] == "failed"
    assert spent["children"] > 0.05 > failed["children"]  # the subprocess's CPU, not the test's
    assert spent["wall"] >= spent["children"] * 0.5
    assert records[3]["status"] == 1


def test_nothing_is_written_without_the_variable(tmp_path):
    (tmp_path / "test_probe.py").write_text("def test_ok():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k != "COURSE_TEST_PROFILE"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "course_helpers.testing.pytest_plugin", "test_probe.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == [
        "test_probe.py"
    ]


def _write(folder: Path, pid: int, records: list[dict]) -> None:
    with open(folder / f"tests-{pid}.jsonl", "w") as f:
        for record in records:
            f.write(json.dumps(dict(record, pid=pid)) + "\n")


def test_the_summary_counts_each_lane_apart_from_child_runs_and_names_kernels(tmp_path):
    """A controller with two xdist workers, one of which starts a child pytest (which inherits
    PYTEST_XDIST_WORKER), and a second top-level command; kernels forked and fresh."""
    tests = tmp_path / "tests"
    tests.mkdir()
    session = {"event": "session", "start": 0.0}
    test = {"event": "test", "cpu": 0.1, "children": 0.5, "outcome": "passed"}
    _write(tests, 10, [dict(session, args=["-n", "2", "lane-one"], worker="", parent=1)])
    _write(tests, 11, [dict(session, args=[], worker="gw0", parent=10),
                       dict(test, nodeid="tests/a.py::t1", wall=2.0)])  # fmt: skip
    failed = dict(test, outcome="failed")
    _write(tests, 12, [dict(session, args=[], worker="gw1", parent=10),
                       dict(test, nodeid="tests/b.py::t2", wall=3.0),
                       dict(failed, nodeid="tests/b.py::t3", wall=1.0)])  # fmt: skip
    _write(tests, 13, [dict(session, args=["probe"], worker="gw1", parent=12),
                       dict(test, nodeid="probe.ipynb::Cell 0", wall=1.0)])  # fmt: skip
    _write(tests, 20, [dict(session, args=["lane-two"], worker="", parent=1),
                       dict(test, nodeid="notebooks/x.ipynb::Cell 0", wall=4.0)])  # fmt: skip
    kernel = {"event": "kernel", "cwd": "/", "start": 0.0, "cpu": 2.0}
    for pid, parents, forked, nodeid in [
        (30, (99, 11), True, "tests/a.py::t1 (call)"),
        (31, (12, 10), False, "tests/b.py::t2 (call)"),
        (32, (98, 20), True, "notebooks/x.ipynb::Cell 0 (setup)"),
    ]:
        record = dict(kernel, pid=pid, ppid=parents[0], pppid=parents[1], forked=forked)
        (tests / f"kernel-{pid}.json").write_text(json.dumps(dict(record, test=nodeid)))
    run = {"command": ["make", "test"], "status": 0, "host": "x", "load_start": "1 1 1",
           "load_end": "1 1 1", "start": 0.0, "end": 60.0, "user": 50.0, "sys": 5.0,
           "phases": [[1.0, "make test (at 0 s)"]]}  # fmt: skip
    (tmp_path / "run.json").write_text(json.dumps(run))

    summary = _profile_tool().report(tmp_path)

    rows = {line.split("|")[1]: line for line in summary.splitlines() if line.startswith("| `")}
    one = next(line for key, line in rows.items() if "lane-one" in key)
    two = next(line for key, line in rows.items() if "lane-two" in key)
    child = next(line for key, line in rows.items() if "child pytest" in key)
    # lane one: 3 tests (2 passed, 1 failed), 6 s, 2 kernels; the child's probe is apart
    assert [c.strip() for c in one.split("|")[2:11]] == [
        "3",
        "2",
        "0",
        "1",
        "6",
        "0",
        "2",
        "2",
        "4",
    ]
    assert [c.strip() for c in two.split("|")[2:6]] == ["1", "1", "0", "0"]
    assert [c.strip() for c in child.split("|")[2:3]] == ["1"]
    assert "CPU of the whole process tree: 55 s" in summary
    assert "kernels started: 3 (2 forked, 1 fresh processes)" in summary
    assert "| make test (at 0 s) | 1 |" in summary
    assert "machine speed" not in summary  # a run.json of before the speed was sampled
    run["speed"] = {"samples": 2, "python": 0.1, "native": 0.1, "reference": 0.2,
                    "fastest": 0.1, "slowest": 0.4}  # fmt: skip
    (tmp_path / "run.json").write_text(json.dumps(run))
    # 55 s of CPU: 275 references at the median, 138 to 550 at the slowest and fastest
    assert ("the tree's CPU is about 275 references (138 to 550 at the slowest and fastest "
            "samples)") in _profile_tool().report(tmp_path)  # fmt: skip


ORPHAN_MAKER = (
    "import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
    "'import time; sum(i * i for i in range(4_000_000)); time.sleep(0.5)'])"
)


def test_a_process_orphaned_by_its_parent_is_counted_by_kind(tmp_path):
    """A grading sandbox outlives the worker that started it; the profile still counts it."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "profile_tests.py"), "--out", str(tmp_path),
         "--", sys.executable, "-c", ORPHAN_MAKER],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["orphaned"]["other"] > 0.1, run["orphaned"]  # the loop's CPU, in a child's child
    # the orphans' CPU is rounded to a tenth of a second in run.json; the tree's is not
    assert run["user"] + run["sys"] >= run["orphaned"]["other"] - 0.05
    summary = (tmp_path / "summary.md").read_text()
    assert "re-parented here): other" in summary
    # ... and names the command line that cost it
    ((words, cpu),) = run["orphaned_other"].items()
    assert words.endswith("-c import time; sum(i * i for i in range(4_000_000)); time.sleep(0.5)")
    assert cpu == run["orphaned"]["other"]
    assert f"- {cpu:.1f} `{words}`" in summary
    # the machine's speed, sampled through the run, and the tree's CPU in its units
    assert run["speed"]["samples"] >= 1 and run["speed"]["reference"] > 0, run["speed"]
    assert "machine speed: reference " in summary and "the tree's CPU is about " in summary
    assert "(steal, all processors together)" in summary and run["stolen_s"] >= 0, summary


def test_a_command_that_cannot_run_is_a_clear_message_not_a_traceback(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "profile_tests.py"), "--out", str(tmp_path),
         "--", "no-such-program-here"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "cannot run 'no-such-program-here' (No such file or directory)" in done.stderr
