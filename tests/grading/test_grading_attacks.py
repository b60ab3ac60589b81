"""Every tampering attack of issue 15, as a fixture notebook: no credit, the batch intact.

The attack notebooks (tests/fixtures/grading/attacks/) are graded in one batch, two at a
time, by a grader run from a temporary copy of ``course_helpers`` (``PYTHONPATH``), so an
attack that edits the package can only reach that copy. A second, smaller batch runs without
the sandbox, where the package checks and process-group kills must hold on their own.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_helpers.grading import budget, sandbox

ROOT = Path(__file__).resolve().parents[2]
ATTACKS = Path(__file__).parents[1] / "fixtures" / "grading" / "attacks"
TIMEOUT = "30"
SECRET = "instructor-secret-7c1e"  # in the grader's environment only (issue 23, item 4)


def _package_files(root: Path) -> dict[str, bytes]:
    """Every file under ``root``, ``__pycache__`` included, by relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def _grade(tmp: Path, names: list[str], *extra: str, links=None) -> dict:
    package = tmp / "lib" / "course_helpers"
    shutil.copytree(ROOT / "course_helpers", package, ignore=shutil.ignore_patterns("__pycache__"))
    subs = tmp / "submissions"
    subs.mkdir()
    for name in names:  # an attack's name, or a path below the fixtures (budget/forks)
        shutil.copy(
            ATTACKS.parent / f"{name}.ipynb" if "/" in name else ATTACKS / f"{name}.ipynb", subs
        )
    for name, target in (links or {}).items():
        (subs / name).symlink_to(target)
    env = dict(os.environ, PYTHONPATH=str(package.parent), PYTHONDONTWRITEBYTECODE="1")
    env["INSTRUCTOR_SECRET"] = SECRET
    env.pop("COURSE_GRADING_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "course_helpers", "grade", str(subs), "--timeout", TIMEOUT]
        + ["--jobs", "2", "--json", "r.json", "--csv", "r.csv", "--per-student", "each"]
        + list(extra),
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads((tmp / "r.json").read_text())
    original = {
        name: data
        for name, data in _package_files(ROOT / "course_helpers").items()
        if "__pycache__" not in name
    }
    return {
        "report": (tmp / "r.json").read_text(),
        "status": done.returncode,
        "stderr": done.stderr,
        "by_name": {Path(nb["path"]).stem: nb for nb in report["notebooks"]},
        "tmp": tmp,
        # byte for byte, __pycache__ included (the copy started without any)
        "package_intact": _package_files(package) == original,
        "payload_ran": (package.parent / "pwned").exists(),
    }


UNSANDBOXED_ONLY = {"plants_module"}  # it grades a lesson-06 answer: heavy, and shown below
LINKS = {"mallory.ipynb": "/dev/null"}  # issue 37, item 2
# issue 37, item 5: the batch is graded within small per-notebook budgets; where this user
# may make control groups (root in CI), memory is one of them (without a group, --memory-mb
# is each process's address space, and 1024 MiB is too little for a kernel to import torch)
GROUPED = budget.available() is not None
BUDGET = ["budget/fills_tmp", "budget/forks"] + ["budget/forks_memory"] * GROUPED
LIMITS = ["--disk-mb", "64", "--processes", "64"] + ["--memory-mb", "1024"] * GROUPED


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    names = sorted(p.stem for p in ATTACKS.glob("*.ipynb") if p.stem not in UNSANDBOXED_ONLY)
    return _grade(tmp_path_factory.mktemp("attacks"), names + BUDGET, *LIMITS, links=LINKS)


def points(nb, exercise_id):
    return next(e for e in nb["exercises"] if e["exercise_id"] == exercise_id)


def test_the_batch_survives_and_reports_every_notebook(batch):
    names = {p.stem for p in ATTACKS.glob("*.ipynb")} - UNSANDBOXED_ONLY | {"mallory"}
    names |= {Path(name).name for name in BUDGET}
    assert set(batch["by_name"]) == names
    assert batch["status"] == 1
    rows = list(csv.DictReader((batch["tmp"] / "r.csv").open()))
    assert {Path(r["notebook"]).stem for r in rows} == names
    # one file per submission, at its key below --per-student (issue 37, item 8)
    each = batch["tmp"] / "each" / "submissions"
    assert {p.stem for p in each.glob("*.json")} == names
    assert f"[{len(names)}/{len(names)}]" in batch["stderr"]  # streamed progress


def test_hand_made_records_with_empty_payloads_are_rejected(batch):
    nb = batch["by_name"]["fake_record"]
    assert nb["score"] == 0
    assert {e["status"] for e in nb["exercises"]} == {"rejected"}
    assert "hand-made record" in points(nb, "00.first_tensor")["message"]
    assert "payload has shape (0,)" in points(nb, "00.how_to_run")["message"]


def test_a_patched_collect_earns_nothing_and_is_flagged(batch):
    nb = batch["by_name"]["patched_collect"]
    assert points(nb, "00.first_tensor")["status"] == "rejected"
    assert any("collect" in reason for reason in nb["review"])


def test_records_written_into_grading_folders_count_for_nothing(batch):
    nb = batch["by_name"]["grading_dir"]
    assert points(nb, "00.first_tensor")["status"] == "failed"
    assert any("COURSE_GRADING_DIR" in reason for reason in nb["review"])


def test_reading_the_reference_earns_nothing_and_is_flagged_for_review(batch):
    # in the sandbox the kernel's exercises package has no references (grading.redact)
    nb = batch["by_name"]["reads_reference"]
    assert points(nb, "00.first_tensor")["points"] == (0 if sandbox.bwrap_works() else 1)
    assert any("reference" in reason for reason in nb["review"])


@pytest.mark.skipif(not sandbox.bwrap_works(), reason="needs bubblewrap (apt install bubblewrap)")
def test_the_sandbox_shows_no_answer_keys(tmp_path):
    probe = """
import pathlib, sys
from course_helpers.lessons import get
from course_helpers.grading.redact import ReferenceHidden
try:
    get("01.every_other_column").reference
except ReferenceHidden:
    print("reference hidden")
print("solution:", repr(get("01.every_other_column").solution))
package = pathlib.Path(sys.argv[1])
lesson01 = package / "lessons" / "lesson01" / "exercises.py"
print("source has it:", "x[:, ::2]" in lesson01.read_text())
for name in ("solutions", ".git"):
    folder = package.parent / name
    print(name, "empty:", not folder.is_dir() or not any(folder.iterdir()))
"""
    package = Path(sandbox.__file__).resolve().parents[1]
    lesson01 = package / "lessons" / "lesson01" / "exercises.py"
    assert "x[:, ::2]" in lesson01.read_text()  # outside the sandbox: there
    done = subprocess.run(
        sandbox.command([sys.executable, "-c", probe, str(package)], []),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.splitlines() == [
        "reference hidden",
        "solution: ''",
        "source has it: False",
        "solutions empty: True",
        ".git empty: True",
    ], done.stderr


def test_guessing_options_shows_attempts_and_first_attempt(batch):
    nb = batch["by_name"]["guesses_options"]
    guessed = points(nb, "00.how_to_run")
    # in the sandbox check() has no answer key to say "passed" with, so the loop tries all 4
    tries = 4 if sandbox.bwrap_works() else 3
    assert (guessed["attempts"], guessed["first_attempt"]) == (tries, "failed")


def test_editing_the_package_changes_no_later_verdict(batch):
    assert batch["package_intact"]
    assert points(batch["by_name"]["edits_package"], "00.first_tensor")["points"] == 0
    assert points(batch["by_name"]["victim"], "00.first_tensor")["status"] == "failed"
    assert points(batch["by_name"]["victim"], "00.how_to_run")["status"] == "passed"


def test_killing_the_parent_costs_only_that_notebook(batch):
    nb = batch["by_name"]["kills_parent"]
    assert nb["run"].startswith("kernel died")
    assert nb["score"] == 0


def test_a_background_forger_reaches_no_other_submission(batch):
    assert batch["by_name"]["background"]["score"] == 0
    assert batch["by_name"]["victim"]["score"] == 1


def test_a_huge_allocation_is_refused_and_the_notebook_goes_on(batch):
    nb = batch["by_name"]["huge_memory"]
    assert nb["run"] == "completed"
    assert points(nb, "00.how_to_run")["status"] == "passed"


def test_a_notebook_without_exercises_is_an_error(batch):
    nb = batch["by_name"]["my_work"]
    assert nb["run"].startswith("error: no recognised exercises")
    assert nb["max_score"] == 0


@pytest.fixture(scope="module")
def unsandboxed(tmp_path_factory):
    # (no background forger here: without a PID namespace a detached process outlives its
    # submission, which docs/grading.md states as a limit of running unsandboxed). The same
    # run grades first attempts: there the kernel's check() can say "passed", so the guessing
    # loop stops at the right option, and only --first-attempt denies it the point.
    names = ["edits_package", "kills_parent", "victim", "guesses_options", "plants_pyc"]
    names += ["plants_module", "rewrites_log", "probes_proc"]  # issue 37, items 1 and 9
    tmp = tmp_path_factory.mktemp("unsandboxed")
    # --jobs 1: a changed package is attributed to exactly the submission that changed it
    return _grade(tmp, names, "--no-sandbox", "--jobs", "1", "--first-attempt")


def test_without_the_sandbox_the_package_is_restored_and_others_unharmed(unsandboxed):
    result = unsandboxed
    assert "NOT ISOLATED" in result["stderr"]
    assert result["package_intact"]
    assert set(result["by_name"]) == {
        "edits_package",
        "kills_parent",
        "victim",
        "guesses_options",
        "plants_pyc",
        "plants_module",
        "rewrites_log",
        "probes_proc",
    }
    edits = result["by_name"]["edits_package"]
    assert any("course package changed" in reason for reason in edits["review"])
    assert result["by_name"]["victim"]["score"] == 1
    assert result["by_name"]["kills_parent"]["score"] == 0


def test_first_attempt_option_gives_guessing_no_credit(unsandboxed):
    nb = unsandboxed["by_name"]["guesses_options"]
    guessed = points(nb, "00.how_to_run")
    assert (guessed["attempts"], guessed["first_attempt"]) == (3, "failed")  # it stopped at "b"
    assert nb["score"] == 0 and guessed["status"] == "failed"


def test_bubblewrap_is_used_where_it_works():
    line = sandbox.isolation()
    assert ("bubblewrap" in line) == sandbox.bwrap_works()
    wrapped = sandbox.command(["python"], [Path("/tmp/subs")])
    if sandbox.bwrap_works():
        assert {"--unshare-net", "--unshare-pid", "--die-with-parent"} <= set(wrapped)
        assert {"--unshare-user", "--disable-userns"} <= set(wrapped)
        assert wrapped[wrapped.index("--cap-drop") + 1] == "ALL"
        binds = [wrapped[i + 1] for i, arg in enumerate(wrapped) if arg == "--ro-bind"]
        assert "/" not in binds  # only what a kernel needs (issue 23, item 3)
    else:
        assert wrapped == ["python"]


@pytest.mark.skipif(not sandbox.bwrap_works(), reason="needs bubblewrap (apt install bubblewrap)")
def test_a_python_under_tmp_stays_visible_in_the_sandbox(tmp_path, monkeypatch):
    # a clone or venv under /tmp would vanish behind the sandbox's private /tmp: the worker
    # then fails to start and every notebook reads "kernel died"
    venv = tmp_path / "a-clone" / ".venv"
    venv.mkdir(parents=True)
    with monkeypatch.context() as patch:
        patch.setattr("sys.prefix", str(venv))
        wrapped = sandbox.command(["python"], [Path("/tmp/subs")])
    binds = [wrapped[i + 1] for i, arg in enumerate(wrapped) if arg == "--ro-bind"]
    assert str(venv) in binds
    assert wrapped.index(str(venv)) < wrapped.index("/tmp/subs")  # hidden folders still win
    # and a real run from this interpreter (wherever it lives) starts and answers
    done = subprocess.run(
        sandbox.command([sys.executable, "-c", "print('up')"], []),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.strip() == "up", done.stderr


# --------------------------------------------------------------------------- issue 23


_PROBE = """
import ctypes, os, pathlib, sys
status = dict(line.split(":", 1) for line in open("/proc/self/status") if line.startswith("Cap"))
print("CapEff", status["CapEff"].strip(), "CapBnd", status["CapBnd"].strip())
libc = ctypes.CDLL(None, use_errno=True)
package = pathlib.Path(sys.argv[1])
print("umount", libc.umount2(str(package / "lessons").encode(), 2))
print("remount", libc.mount(None, b"/", None, 32 | 4096, None))
print("checkout", sorted(os.listdir(package.parent)))
print("above", sorted(os.listdir(package.parent.parent)))
writable = []
for folder in [*sys.path, sys.prefix, str(package), "/", "/dev", "/etc", "/usr"]:
    try:
        with open(os.path.join(folder or ".", "planted.py"), "w") as file:
            file.write("planted")
        writable.append(folder)
    except OSError:
        pass
print("writable", sorted(writable))
"""


@pytest.mark.skipif(not sandbox.bwrap_works(), reason="needs bubblewrap (apt install bubblewrap)")
def test_the_sandbox_holds_no_capabilities_and_shows_only_what_a_kernel_needs(tmp_path):
    # issue 23, items 1 and 3: as root, bubblewrap kept CapEff 000001fffeffffff (umount2,
    # setns, remounts) and bound the whole file system (other clones, other work folders).
    # Issue 37, item 1: no code folder is writable (the root and /dev neither, which were)
    package = Path(sandbox.__file__).resolve().parents[1]
    done = subprocess.run(
        sandbox.command([sys.executable, "-c", _PROBE, str(package)], []),
        capture_output=True,
        text=True,
        check=False,
    )
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["CapEff"] == "0000000000000000 CapBnd 0000000000000000", done.stderr
    assert lines["umount"] == "-1" and lines["remount"] == "-1"
    # the checkout shows only the package (and a virtualenv inside it): no solutions/,
    # .git, tests or notebooks; the folder above shows no other clone
    shown = eval(lines["checkout"])  # noqa: S307 - our own probe's output
    assert "course_helpers" in shown
    allowed = {"course_helpers", ".venv", "venv"}
    prefix = Path(sys.prefix).resolve()  # the running venv, e.g. .venv-compat-2.14.1/
    if prefix.is_relative_to(package.parent):
        allowed.add(prefix.relative_to(package.parent).parts[0])
    assert set(shown) <= allowed, shown
    # (a checkout under /tmp, as in a CI clone, sits in the sandbox's own /tmp, next to its
    # work folder)
    above = package.parent.parent
    expected = {package.parent.name} | ({"work"} if above == Path("/tmp") else set())
    assert set(eval(lines["above"])) == expected  # noqa: S307
    # the only writable places are the work folder (the probe's "" entry) and /tmp
    assert set(eval(lines["writable"])) <= {""}, lines["writable"]  # noqa: S307


def test_an_escape_as_root_changes_nothing_and_runs_nothing_in_the_grader(batch):
    # issue 23, item 1: unmount, remount read-write, append to a module imported late
    assert batch["package_intact"]
    assert not batch["payload_ran"]
    assert batch["by_name"]["escapes_as_root"]["score"] == 0
    assert points(batch["by_name"]["victim"], "00.first_tensor")["status"] == "failed"


def test_a_planted_pyc_never_runs_in_the_grader_and_is_removed(unsandboxed):
    # issue 23, item 2: a .pyc with the .py's header, for a module the grader imported late
    assert not unsandboxed["payload_ran"]
    assert unsandboxed["package_intact"]  # __pycache__ included
    planted = unsandboxed["by_name"]["plants_pyc"]
    assert any("__pycache__" in reason for reason in planted["review"]), planted["review"]
    assert points(unsandboxed["by_name"]["victim"], "00.first_tensor")["status"] == "failed"


def test_the_graders_environment_never_reaches_a_kernel(batch):
    # issue 23, item 4: INSTRUCTOR_SECRET came back in a report's message
    nb = batch["by_name"]["reads_env"]
    assert "no secret here" in points(nb, "00.how_to_run")["message"]
    assert SECRET not in batch["report"]


ISOLATION = Path(__file__).parents[1] / "fixtures" / "grading" / "isolation"


def _grade_pair(tmp: Path, *extra: str) -> dict:
    """Grade reads_other_work.ipynb and other_work.ipynb at once; their reports by name."""
    subs = tmp / "submissions"
    subs.mkdir()
    for path in ISOLATION.glob("*.ipynb"):
        shutil.copy(path, subs)
    env = {k: v for k, v in os.environ.items() if k != "COURSE_GRADING_DIR"}
    done = subprocess.run(
        [sys.executable, "-m", "course_helpers", "grade", str(subs), "--jobs", "2"]
        + ["--timeout", "90", "--json", "r.json", *extra],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads((tmp / "r.json").read_text())
    return {Path(nb["path"]).stem: nb for nb in report["notebooks"]} | {"stderr": done.stderr}


def _read_the_other_notebook(graded: dict) -> bool:
    victim, thief = graded["other_work"], graded["reads_other_work"]
    assert victim["run"] == "completed" and points(victim, "00.how_to_run")["points"] == 1, graded[
        "stderr"
    ]
    assert thief["run"] == "completed", graded["stderr"]
    return points(thief, "00.how_to_run")["points"] == 1


def test_without_the_sandbox_no_submission_lists_another_ones_work_folder(tmp_path):
    # issue 23, item 3: a submission listed the temporary folder and read the notebook
    # graded next to it (every work folder sat in a folder its kernel could list)
    assert not _read_the_other_notebook(_grade_pair(tmp_path, "--no-sandbox"))


@pytest.mark.skipif(not sandbox.bwrap_works(), reason="needs bubblewrap (apt install bubblewrap)")
def test_in_the_sandbox_no_submission_sees_another_ones_work_folder(tmp_path, monkeypatch):
    # with TMPDIR outside /tmp (the case), where the sandbox once showed the others
    monkeypatch.setenv("TMPDIR", str(tmp_path / "grading-tmp"))
    (tmp_path / "grading-tmp").mkdir()
    assert not _read_the_other_notebook(_grade_pair(tmp_path))


# --------------------------------------------------------------------------- issue 37


def test_a_link_to_dev_null_among_submissions_costs_the_others_nothing(batch):
    # item 2: the folders hidden from each sandbox came from the resolved parents of every
    # submission, refused links included: /dev was replaced in every kernel's sandbox and
    # every honest notebook read "could not run: No such file or directory: '/dev/null'"
    assert batch["by_name"]["mallory"]["run"].startswith("refused: a symbolic link")
    victim = batch["by_name"]["victim"]
    assert victim["run"] == "completed", victim["run"]
    assert points(victim, "00.how_to_run")["points"] == 1


def test_a_stride_zero_record_is_refused_before_anything_copies_it(batch):
    # item 4: a few KB of record, 400 MB once copied (answer_fingerprint's .contiguous())
    nb = batch["by_name"]["stride_zero"]
    first = points(nb, "00.first_tensor")
    assert first["status"] == "rejected" and "is a view over 4 bytes" in first["message"]
    assert batch["by_name"]["victim"]["run"] == "completed"


def test_no_kernel_reaches_the_workers_or_the_graders_file_descriptors(batch, unsandboxed):
    # item 1: the worker and the grader are not dumpable: a kernel of the same user cannot
    # open their descriptors through /proc (the worker's report, the judging pipes)
    for result in (batch, unsandboxed):
        nb = result["by_name"]["probes_proc"]
        assert points(nb, "00.how_to_run")["status"] == "passed", nb


def test_a_module_planted_on_the_graders_path_never_runs_in_the_grader(unsandboxed):
    # item 1: judging imported modules on first use (here sympy, through the reference of
    # 06.fix_training_loop), after submissions had run: a kernel that could write a folder
    # on the grader's path ran its code in the grader. Everything judging needs is now
    # imported before the first submission runs, and judging refuses every later import.
    assert not unsandboxed["payload_ran"]
    nb = unsandboxed["by_name"]["plants_module"]
    assert points(nb, "06.fix_training_loop")["status"] in ("failed", "error")
    assert not any("refused to import" in reason for reason in nb["review"]), nb["review"]
    assert points(unsandboxed["by_name"]["victim"], "00.how_to_run")["points"] == 1


def test_first_attempt_is_what_the_grader_saw_first(unsandboxed):
    # item 9: the notebook rewrote the attempts its kernel kept and was graded "first attempt
    # passed"; attempts now reach the grader as check() makes them
    nb = unsandboxed["by_name"]["rewrites_log"]
    first = points(nb, "00.first_tensor")
    assert (first["first_attempt"], first["status"], first["points"]) == ("failed", "failed", 0)
    assert first["attempts"] == 2


@pytest.mark.skipif(not sandbox.bwrap_works(), reason="needs bubblewrap (apt install bubblewrap)")
def test_one_budget_per_notebook_as_this_user(batch):
    # item 5: /tmp, the work folder and /dev/shm are size-limited tmpfs (128 MiB written into
    # each stops at 64); the process limit counts this notebook's processes (200 sleepers
    # stop at 64) while the others of the batch run; with control groups (root in CI), four
    # children filling 320 MiB each cannot take more than the notebook's 1024 MiB, which
    # counts their tmpfs too. The same as a normal user: tests/grading/test_budget.py.
    by_name = batch["by_name"]
    for name in ("fills_tmp", "forks"):
        assert points(by_name[name], "00.how_to_run")["status"] == "passed", by_name[name]
    assert points(by_name["victim"], "00.how_to_run")["points"] == 1
    if GROUPED:
        nb = by_name["forks_memory"]
        assert "ran out of its 1024 MiB of memory" in nb["run"], nb["run"]
        assert points(nb, "00.how_to_run")["status"] == "passed"  # the answers before it count
        assert points(nb, "00.first_tensor")["status"] != "passed"
