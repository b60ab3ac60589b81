"""A learner opens, runs and answers in JupyterLab, then updates the course with one command
(issue 28, item 3): a real clone, `make lab`'s own commands, a newer commit in the origin, and
`make update`, which must succeed, keep the learner's answer and bring the new lesson text.

The clone uses this checkout's virtual environment (``VENV=``); ``-o`` tells make that the
environment is up to date, so nothing is installed.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from browser_support import (
    CELLS_DONE,
    RUN_CELLS,
    _cell,
    _first_value_exercise,
    _type_into_cell,
    open_notebook,
    require_browser,
    screenshot,
    setup_cell_index,
)
from lab_server import ROOT, LabServer, make_lab_command

pytestmark = pytest.mark.browser
require_browser()

VENV = ROOT / ".venv"
MAKE_ARGS = (f"VENV={VENV}", "-o", str(VENV / ".course-installed"))
LESSON = "01_tensors.ipynb"
EXERCISE = "exercises/03_shapes_and_views.ipynb"
NEW_TEXT = "A sentence the course added after the learner's clone."


DIRTY = "() => window.jupyterapp.shell.currentWidget.context.model.dirty"
SAVE = "async () => { await window.jupyterapp.shell.currentWidget.context.save(); }"


def _git(cwd, *args) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=Course", "-c", "user.email=course@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def _lab_commands_before_jupyter(checkout) -> None:
    """What `make lab` runs before JupyterLab (the doctor, filling work/), run for real."""
    dry_run = subprocess.run(
        ["make", "-n", "-s", *MAKE_ARGS, "lab"], cwd=checkout, capture_output=True, text=True
    ).stdout
    jupyter = " ".join(make_lab_command(checkout, MAKE_ARGS))
    for line in dry_run.splitlines():
        if "jupyter" in line and "lab" in line and "course_helpers" not in line:
            continue
        done = subprocess.run(line, shell=True, cwd=checkout, capture_output=True, text=True)
        assert done.returncode == 0, f"{line}: {done.stdout}{done.stderr}"
    assert "work/notebooks/00_start_here.ipynb" in jupyter


def _source(path, index: int) -> str:
    cell = json.loads(path.read_text())["cells"][index]
    return "".join(cell["source"])


def test_a_learner_runs_answers_saves_and_updates_with_one_command(tmp_path, browser):
    origin, learner = tmp_path / "origin", tmp_path / "learner"
    _git(tmp_path, "clone", "-q", str(ROOT), str(origin))
    _git(tmp_path, "clone", "-q", str(origin), str(learner))
    _lab_commands_before_jupyter(learner)
    assert (learner / "work" / "notebooks" / LESSON).exists()

    lab = LabServer(tmp_path / "lab", source=learner, make_lab=True, make_args=MAKE_ARGS)
    lab.start()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        # a lesson: run its first cells, save
        open_notebook(page, lab, f"work/notebooks/{LESSON}")
        time.sleep(2.0)  # the kernel is ready: JupyterLab has written its language_info
        assert page.evaluate(DIRTY) is False, "opening an untouched lesson modified it"
        setup = setup_cell_index(learner / "work" / "notebooks" / LESSON)
        page.evaluate(RUN_CELLS, [setup, setup + 1])
        page.wait_for_function(CELLS_DONE, arg=[setup, setup + 1], timeout=120_000, polling=300)
        page.evaluate(SAVE)
        # an exercise: the setup cell, then an answer typed in, run and saved
        index, exercise = _first_value_exercise(EXERCISE)
        open_notebook(page, lab, f"work/{EXERCISE}")
        setup = setup_cell_index(learner / "work" / EXERCISE)
        page.evaluate(RUN_CELLS, [setup])
        page.wait_for_function(CELLS_DONE, arg=[setup], timeout=120_000, polling=300)
        typed = f'{exercise.solution.strip()}\ncheck("{exercise.id}", answer)'
        _type_into_cell(page, index, typed)
        page.wait_for_function(CELLS_DONE, arg=[index], timeout=120_000, polling=300)
        verdict = _cell(page, index).locator(".course-check-passed")
        verdict.get_by_text(exercise.id).first.wait_for(timeout=30_000)
        page.evaluate(SAVE)
        time.sleep(1.0)
        screenshot(page, "work__exercises__03_shapes_and_views.ipynb")
    finally:
        context.close()
        lab.stop()
    answered = _source(learner / "work" / EXERCISE, index)
    assert answered.strip() == typed
    # JupyterLab saved what the learner did, and none of it is in a file git tracks
    assert _git(learner, "status", "--porcelain") == ""

    # the course moves on: a newer commit changes the lesson's text
    lesson = origin / "notebooks" / LESSON
    nb = json.loads(lesson.read_text())
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    first["source"] = "".join(first["source"]) + "\n\n" + NEW_TEXT
    lesson.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    _git(origin, "commit", "-qam", "lesson 01: one more sentence")

    done = subprocess.run(["make", "-s", *MAKE_ARGS, "update"], cwd=learner, text=True,
                          capture_output=True)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"updated:  work/notebooks/{LESSON}" in done.stdout, done.stdout
    assert _git(learner, "rev-parse", "HEAD") == _git(origin, "rev-parse", "HEAD")
    assert NEW_TEXT in (learner / "work" / "notebooks" / LESSON).read_text()
    assert _source(learner / "work" / EXERCISE, index) == answered  # the answer is kept
    assert _git(learner, "status", "--porcelain") == ""
