"""The learner's work folder: filled without overwriting, refreshed after an update without
losing what the learner changed (the real clone + browser + `make update` path is
tests/course/test_browser_update.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from course_helpers import CourseError
from course_helpers.environment import workspace


def _nb(*sources: str) -> dict:
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": s} for s in sources]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _write(path, nb) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))


def _course(root):
    _write(root / "notebooks" / "01_a.ipynb", _nb("lesson = 1"))
    _write(root / "exercises" / "01_a.ipynb", _nb("answer = ..."))
    (root / "solutions").mkdir()
    (root / "README.md").write_text("[lesson](notebooks/01_a.ipynb)")


def _sources(path) -> list[str]:
    return [c["source"] for c in json.loads(path.read_text())["cells"]]


def test_fill_copies_what_is_missing_links_the_rest_and_never_overwrites(tmp_path):
    _course(tmp_path)
    made = workspace.fill(tmp_path)
    assert made == ["work/notebooks/01_a.ipynb", "work/exercises/01_a.ipynb"]
    assert (tmp_path / "work" / "README.md").resolve() == (tmp_path / "README.md").resolve()
    assert (tmp_path / "work" / "solutions").is_symlink()
    mine = tmp_path / "work" / "exercises" / "01_a.ipynb"
    _write(mine, {**json.loads(mine.read_text()), "cells": _nb("answer = 42")["cells"]})
    assert workspace.fill(tmp_path) == []
    assert _sources(mine) == ["answer = 42"]
    # what the kernel of this Python will report, so opening the copy does not modify it
    from ipykernel.ipkernel import IPythonKernel

    lesson = json.loads((tmp_path / "work" / "notebooks" / "01_a.ipynb").read_text())
    assert lesson["metadata"]["language_info"] == IPythonKernel.language_info


def test_refresh_replaces_what_was_only_run_and_keeps_what_the_learner_changed(tmp_path):
    _course(tmp_path)
    workspace.fill(tmp_path)
    work = tmp_path / "work"
    # the learner runs the lesson (outputs only) and answers the exercise
    lesson = json.loads((work / "notebooks" / "01_a.ipynb").read_text())
    lesson["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1"}]
    _write(work / "notebooks" / "01_a.ipynb", lesson)
    exercise = json.loads((work / "exercises" / "01_a.ipynb").read_text())
    exercise["cells"][0]["source"] = "answer = 42"
    _write(work / "exercises" / "01_a.ipynb", exercise)
    # the course changes both, and adds a lesson
    _write(tmp_path / "notebooks" / "01_a.ipynb", _nb("lesson = 1", "new = 2"))
    _write(tmp_path / "exercises" / "01_a.ipynb", _nb("answer = ...  # new"))
    _write(tmp_path / "notebooks" / "02_b.ipynb", _nb("b = 2"))

    report = workspace.refresh(tmp_path)

    assert _sources(work / "notebooks" / "01_a.ipynb") == ["lesson = 1", "new = 2"]
    assert _sources(work / "exercises" / "01_a.ipynb") == ["answer = 42"]
    assert _sources(work / "exercises" / "01_a.updated.ipynb") == ["answer = ...  # new"]
    assert _sources(work / "notebooks" / "02_b.ipynb") == ["b = 2"]
    assert any(line.startswith("kept:") and "01_a.updated.ipynb" in line for line in report)
    assert workspace.refresh(tmp_path) == []  # nothing changed since: nothing to do


def test_update_refuses_with_a_fix_when_tracked_files_were_changed(tmp_path):
    _course(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("/work/\n")
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "course"], cwd=tmp_path, check=True)
    _write(tmp_path / "notebooks" / "01_a.ipynb", _nb("edited in place"))
    done = subprocess.run(
        [sys.executable, "-m", "course_helpers", "workspace", "--update", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "notebooks/01_a.ipynb" in done.stderr and "git checkout -- ." in done.stderr
    assert "Traceback" not in done.stderr


def test_a_broken_copy_or_no_checkout_gets_a_message_not_a_traceback(tmp_path):
    _course(tmp_path)
    workspace.fill(tmp_path)
    (tmp_path / "work" / "exercises" / "01_a.ipynb").write_text("{not json")
    _write(tmp_path / "exercises" / "01_a.ipynb", _nb("changed"))
    with pytest.raises(CourseError, match=r"01_a.ipynb is not a readable notebook.*Fix: move"):
        workspace.refresh(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "course_helpers", "workspace", "--update", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "is not a git checkout" in done.stderr
