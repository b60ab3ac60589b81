"""Issue 37, items 3 and 5: one resource budget per notebook, as root and as a normal user.

Per-process limits multiplied (each forked child got the whole address space), the sandbox's
/tmp and /dev/shm had no size, and a normal user's process limit was shared by every notebook
(463 sleepers left by one notebook made the next one fail to start). The same small batch
(tests/fixtures/grading/budget/ next to an honest notebook, two at a time) is graded as the
user running the tests (root in CI: control groups count memory, tmpfs and processes per
notebook) and as `nobody` (no control group: sized tmpfs, a process limit per sandbox).
The run as this user is part of the attack batch
(`test_grading_attacks.py::test_one_budget_per_notebook_as_this_user`); here, a normal user's
runs, which need a Python that user can execute with the course installed: where there is
none, they are skipped and say why.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from course_helpers.grading import sandbox

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "grading"
NOBODY = 65534
LIMITS = ["--disk-mb", "64", "--processes", "64"]  # no --memory-mb: see test_grading_attacks


def _as(uid: int | None):
    def demote():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    return None if uid is None else demote


def _python_for(uid: int | None) -> tuple[list[str], dict] | None:
    """A Python that ``uid`` can run with torch, the notebook tools and this course, and the
    environment it needs; None where there is none."""
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_GRADING_DIR", "PYTHONPATH")}
    env.update(OMP_NUM_THREADS="1", COURSE_PROGRESS="off", HOME="/tmp")
    site = [p for p in sys.path if p.endswith("site-packages")]
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [(sys.executable, {})]
    system = shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")  # not a venv's link
    if system:
        paths = os.pathsep.join([str(ROOT), *site])
        candidates.append((system, {"PYTHONPATH": paths}))
    for python, extra in candidates:
        probe = "import torch, nbclient, ipykernel, course_helpers.grading.command"
        try:
            done = subprocess.run(
                [python, "-c", probe],
                env={**env, **extra},
                preexec_fn=_as(uid),
                capture_output=True,
                cwd="/",
                check=False,
            )
        except OSError:  # not even executable for that user
            continue
        if done.returncode == 0:
            return [python], {**env, **extra}
    return None


def _grade(folder: Path, notebooks: dict[str, str], uid, *extra: str) -> dict:
    """Grade ``notebooks`` (file name: text) as ``uid`` (None: as this user)."""
    found = _python_for(uid)
    if found is None:
        pytest.skip(f"no Python that uid {uid} can run with this course installed")
    python, env = found
    subs = folder / "subs"
    subs.mkdir()
    for name, text in notebooks.items():
        (subs / name).write_text(text)
    if uid is not None:
        for path in (folder, subs, *subs.iterdir()):
            os.chown(path, uid, uid)
    done = subprocess.run(
        [*python, "-m", "course_helpers", "grade", str(subs), "--jobs", "2", "--timeout", "60"]
        + ["--json", str(folder / "r.json"), *extra],
        env=env,
        preexec_fn=_as(uid),
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=900,
        check=False,
    )
    assert (folder / "r.json").exists(), done.stderr[-3000:]
    report = json.loads((folder / "r.json").read_text())
    by_name = {Path(nb["path"]).stem: nb for nb in report["notebooks"]}
    return {"by_name": by_name, "stderr": done.stderr, "status": done.returncode}


def _fixtures(*names: str) -> dict[str, str]:
    return {f"{Path(n).name}.ipynb": (FIXTURES / f"{n}.ipynb").read_text() for n in names}


@pytest.fixture
def shared_folder():
    """A folder `nobody` can use (pytest's own tmp folders are private to their owner)."""
    folder = Path(tempfile.mkdtemp(prefix="course-budget-test-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _status(nb: dict, exercise: str) -> str:
    return next(e["status"] for e in nb["exercises"] if e["exercise_id"] == exercise)


def _assert_bounded(result: dict) -> None:
    by_name = result["by_name"]
    assert _status(by_name["fills_tmp"], "00.how_to_run") == "passed", by_name["fills_tmp"]
    assert _status(by_name["forks"], "00.how_to_run") == "passed", by_name["forks"]
    victim = by_name["victim"]
    assert victim["run"] == "completed" and _status(victim, "00.how_to_run") == "passed"


NAMES = ["budget/fills_tmp", "budget/forks", "attacks/victim"]


@pytest.mark.skipif(os.geteuid() != 0, reason="becomes `nobody`: run the tests as root")
@pytest.mark.skipif(not sandbox.bwrap_works(), reason="needs bubblewrap (apt install bubblewrap)")
def test_one_budget_per_notebook_as_a_normal_user(shared_folder):
    # no control group for a normal user: the process limit is set inside each sandbox's
    # own user namespace, where it counts that notebook's processes only
    result = _grade(shared_folder, _fixtures(*NAMES), NOBODY, *LIMITS)
    assert "isolation: bubblewrap" in result["stderr"] and "no control group" in result["stderr"]
    _assert_bounded(result)


@pytest.mark.skipif(os.geteuid() != 0, reason="becomes `nobody`: run the tests as root")
def test_without_the_sandbox_nothing_a_notebook_leaves_behind_outlives_it(shared_folder):
    # item 3: without bubblewrap, a process left behind by a blank notebook rewrote the
    # results in the ~10 s after grading. The worker is now the subreaper of everything its
    # kernel starts and kills it all before it reports; the worker and the grader are not
    # dumpable, so the kernel cannot reach their descriptors either. As `nobody` there is
    # no control group: this is the worker's doing alone.
    results = shared_folder / "results"
    results.mkdir()
    os.chown(results, NOBODY, NOBODY)
    writer = (FIXTURES / "platform" / "leaves_a_writer.ipynb").read_text()
    target = json.dumps(str(results / "results.json")).replace('"', '\\"')
    notebooks = {"00_start_here.ipynb": writer.replace("@RESULTS@", target)}
    notebooks |= _fixtures("attacks/probes_proc")
    platform = ["--results-format", "gradescope", "--assignment", "00_start_here"]
    platform += ["--results", str(results / "results.json")]
    result = _grade(shared_folder, notebooks, NOBODY, "--no-sandbox", *platform)
    assert "NOT ISOLATED" in result["stderr"] and "no control group" in result["stderr"]
    assert (shared_folder / "writer-started").exists()  # the leftover process did start
    graded = json.loads((results / "results.json").read_text())
    assert graded["score"] == 1  # probes_proc's answer, not the writer's 100
    time.sleep(3)
    assert json.loads((results / "results.json").read_text()) == graded  # ... and is gone
    assert _status(result["by_name"]["probes_proc"], "00.how_to_run") == "passed"


def _cpu_quota_group(share: float) -> Path | None:
    """A cgroup v1 ``cpu`` group below this process's own, allowed ``share`` of one processor
    (a small machine, the same on any machine), or None where none can be made."""
    from course_helpers.grading import budget

    own = budget._own_groups().get("cpu")
    if own is None or not (budget.CGROUP_FS / "cpu" / "cgroup.procs").is_file():
        return None
    group = budget.CGROUP_FS / "cpu" / own.lstrip("/") / f"course-test-cpu-{os.getpid()}"
    try:
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text(str(int(100000 * share)))
    except OSError:
        shutil.rmtree(group, ignore_errors=True)
        return None
    return group


@pytest.mark.skipif(os.geteuid() != 0, reason="makes control groups: run the tests as root")
@pytest.mark.skipif(not sandbox.bwrap_works(), reason="needs bubblewrap (apt install bubblewrap)")
def test_busy_processes_of_one_notebook_do_not_starve_another(tmp_path):
    # r4 attack: a notebook forked 40 busy processes; with no share of the processors per
    # notebook, CFS gave the honest notebook beside it 1/41 of the machine and its cells
    # timed out (0 points for a full-marks notebook). The grader runs here on half a
    # processor, so that the attack bites the same on any machine.
    group = _cpu_quota_group(0.5)
    if group is None:
        pytest.skip("needs the cgroup v1 cpu controller, writable (root in this container)")
    found = _python_for(None)
    assert found is not None
    python, env = found
    subs = tmp_path / "subs"
    subs.mkdir()
    for name, text in _fixtures("budget/spins", "attacks/victim").items():
        (subs / name).write_text(text)

    def join():
        (group / "cgroup.procs").write_text(str(os.getpid()))

    try:
        done = subprocess.run(
            [*python, "-m", "course_helpers", "grade", str(subs), "--jobs", "2"]
            + ["--timeout", "30", "--json", str(tmp_path / "r.json")],
            env=env,
            preexec_fn=join,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        for _ in range(100):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    report = json.loads((tmp_path / "r.json").read_text())
    victim = next(nb for nb in report["notebooks"] if Path(nb["path"]).stem == "victim")
    assert victim["run"] == "completed", victim["run"]
    assert _status(victim, "00.how_to_run") == "passed"
    assert "an equal share of the processors" in done.stderr.splitlines()[0]
