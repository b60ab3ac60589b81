"""benchmarks/gpu_check.py: what it reads and prints, checked on a machine without a GPU."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks/gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check"] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["gpu_check"]


def test_without_cuda_it_says_so_and_runs_nothing(gpu_check, monkeypatch, capsys):
    monkeypatch.setattr(
        gpu_check, "machine", lambda: ("no CUDA device", "2.13.0+cpu", "none", False)
    )
    monkeypatch.setattr(gpu_check, "run_pytest", lambda *a: pytest.fail("nothing may run"))
    assert gpu_check.main([]) == gpu_check.NO_CUDA_EXIT
    out = capsys.readouterr().out
    assert out.startswith("gpu-check: NO CUDA DEVICE on this machine; nothing was run.")
    assert "torch.cuda.is_available() is False" in out
    assert "device  no CUDA device" in out


def test_the_table_names_the_gpu_counts_and_timings(gpu_check, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(gpu_check.tempfile, "tempdir", str(tmp_path))  # its log folder, here
    monkeypatch.setattr(
        gpu_check, "machine", lambda: ("NVIDIA H100 80GB HBM3", "2.11.0+cu130", "13.0", True)
    )
    ran = []

    def fake_pytest(name, arguments, jobs, logs):
        ran.append((name, arguments))
        return gpu_check.Counts(passed=552, failed=16, seconds=300.0, exit_code=1)

    monkeypatch.setattr(gpu_check, "run_pytest", fake_pytest)
    report = tmp_path / "gpu.json"
    assert gpu_check.main(["--steps", "nbval,lesson13", "--json", str(report)]) == 1  # failures
    out = capsys.readouterr().out
    assert [name for name, _ in ran] == ["nbval", "lesson13"]
    assert ran[0][1] == ["--nbval", "notebooks", "solutions"]
    assert "device  " in out and "NVIDIA H100 80GB HBM3" in out
    assert "2.11.0+cu130 (CUDA 13.0)" in out
    assert "552 passed, 16 failed, 0 errors, 0 skipped in 300.0 s" in out
    assert "nbval time" in out
    assert json.loads(report.read_text())["runs"]["nbval"]["failed"] == 16
    (logs,) = tmp_path.glob("gpu_check_*")  # kept for the reader, and named in the table
    assert f"pytest output and JUnit reports: {logs}" in out


def test_a_run_without_pytest_steps_leaves_no_log_folder(gpu_check, monkeypatch, tmp_path):
    monkeypatch.setattr(gpu_check.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(gpu_check, "machine", lambda: ("NVIDIA H100", "2.11.0+cu130", "13.0", True))
    monkeypatch.setattr(gpu_check, "run_pytest", lambda *a: pytest.fail("no pytest step here"))
    cells = [
        {"cell_type": "code", "source": first, "outputs": []}
        for first in (gpu_check.SYNC_CELL, gpu_check.NON_BLOCKING_CELL)
    ]
    monkeypatch.setattr(gpu_check, "execute_lesson11", lambda: {"cells": cells})
    assert gpu_check.main(["--steps", "lesson11"]) == 0
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_step_is_a_usage_error(gpu_check):
    with pytest.raises(SystemExit):
        gpu_check.main(["--steps", "everything"])


def test_junit_counts(gpu_check, tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest" tests="5" failures="1" errors="1" skipped="1">'
        '<testcase classname="a" name="ok"/><testcase classname="a" name="bad"><failure/>'
        '</testcase><testcase classname="b" name="broke"><error/></testcase>'
        "</testsuite></testsuites>"
    )
    counts = gpu_check.counts_from_junit(report)
    assert (counts.passed, counts.failed, counts.errors, counts.skipped) == (2, 1, 1, 1)
    assert counts.failures == ["a::bad", "b::broke"]


def test_lesson_11s_stored_outputs_are_read(gpu_check):
    nb = json.loads(gpu_check.LESSON11.read_text())
    (cpu,) = gpu_check.sync_rows(gpu_check.cell_text(nb, gpu_check.SYNC_CELL))
    assert (cpu["device"], cpu["batch"]) == ("cpu", "256 x 64")
    assert cpu["sum"] == pytest.approx(cpu["loader"] + cpu["steps"], abs=0.11)
    # stored from a machine without a GPU: the copy timings are not there
    assert gpu_check.non_blocking_rows(gpu_check.cell_text(nb, gpu_check.NON_BLOCKING_CELL)) == []


def test_gpu_rows_in_the_lessons_format_are_read(gpu_check):
    # the rows as lesson 11's cells print them on a GPU machine (numbers made up)
    sync = (
        f"{'cuda':7}{'2048 x 4096':>12}{170.0:>9.1f}{70.0:>9.1f}{240.0:>9.1f}"
        f"{245.5:>20.1f}{175.2:>16.1f}\n"
    )
    copies = (
        f"{'pageable':8}: returned after {80.12:8.2f} ms; queued work done after {82.0:8.1f} ms\n"
        f"{'pinned':8}: returned after {0.05:8.2f} ms; queued work done after {81.5:8.1f} ms\n"
    )
    assert gpu_check.sync_rows(sync) == [
        {"device": "cuda", "batch": "2048 x 4096", "loader": 170.0, "steps": 70.0,
         "sum": 240.0, "every": 245.5, "end": 175.2}
    ]  # fmt: skip
    assert [r["memory"] for r in gpu_check.non_blocking_rows(copies)] == ["pageable", "pinned"]
    assert gpu_check.non_blocking_rows(copies)[1]["returned"] == 0.05


def test_the_lesson_cells_it_reads_exist_and_print_in_that_format():
    nb = json.loads((ROOT / "notebooks/11_training_loops.ipynb").read_text())
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    sync = next(s for s in sources if s.startswith("def sync_cost_ms("))
    copies = next(s for s in sources if s.startswith("def non_blocking_return_ms("))
    assert "f\"{dev.type:7}{f'{batch} x {features}':>12}{ms['loader']:>9.1f}" in sync
    assert 'f"{memory:8}: returned after {returned:8.2f} ms; queued work done after "' in copies
