"""A learner opens, runs and answers in JupyterLab, then updates the course with one command
(issue 28, item 3; issue 36, items 3 and 4): a real clone, `make lab`'s own commands, a newer
commit in the origin, and `make update`, which must succeed, bring the new lesson text, keep
the learner's answers (the answers to a lesson's check-yourself questions travel into its new
version), and write the course's new version beside an exercise notebook the learner changed
beyond its answers. Then, in JupyterLab at 1366x768: a lesson, its exercises and that new
version never look alike, in the tabs or in the file browser, which follows the open notebook.

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
from lab_server import ROOT, SCREENSHOTS, LabServer, make_lab_command

from course_helpers.environment.work_layout import work_path

pytestmark = pytest.mark.browser
require_browser()

VENV = ROOT / ".venv"
MAKE_ARGS = (f"VENV={VENV}", "-o", str(VENV / ".course-installed"))
STEM = "01_tensors"
LESSON = work_path("notebooks", STEM)
EXERCISES = work_path("exercises", "03_shapes_and_views")
NEW_EXERCISES = work_path("exercises", "03_shapes_and_views", new=True)
NEW_TEXT = "A sentence the course added after the learner's clone."
QUIZ = 'check("01.quiz_numel", "b")'


DIRTY = "() => window.jupyterapp.shell.currentWidget.context.model.dirty"
SAVE = "async () => { await window.jupyterapp.shell.currentWidget.context.save(); }"
OPEN = """async (path) => {
  await window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'});
}"""


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
        assert "problem:" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert work_path("notebooks", "00_start_here") in jupyter


def _cells(path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _source(path, index: int) -> str:
    return "".join(_cells(path)[index]["source"])


def _index(path, start: str) -> int:
    return next(i for i, c in enumerate(_cells(path)) if "".join(c["source"]).startswith(start))


def _course_moves_on(origin) -> None:
    """A newer commit: a sentence in lesson 01's first Markdown cell, and one in exercise 03's."""
    for relative in (f"notebooks/{STEM}.ipynb", "exercises/03_shapes_and_views.ipynb"):
        path = origin / relative
        nb = json.loads(path.read_text())
        first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
        first["source"] = "".join(first["source"]) + "\n\n" + NEW_TEXT
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    _git(origin, "commit", "-qam", "lessons 01 and 03: one more sentence")


# What a name cut off with an ellipsis shows: the longest start of its text that ends left of
# the space the "..." takes (measured with a Range over the text, in the page's own font)
VISIBLE_TEXT = """(elements) => elements.map(e => {
  const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  const node = walker.nextNode();
  const text = node ? node.textContent : '';
  if (e.scrollWidth <= e.clientWidth) return text;
  const right = e.getBoundingClientRect().right - 0.8 * parseFloat(getComputedStyle(e).fontSize);
  const range = document.createRange();
  let shown = 0;
  for (let k = 1; k <= text.length; k++) {
    range.setStart(node, 0);
    range.setEnd(node, k);
    if (range.getBoundingClientRect().right > right) break;
    shown = k;
  }
  return text.slice(0, shown) + '\u2026';
})"""


def test_a_learner_runs_answers_saves_and_updates_with_one_command(tmp_path, browser):
    origin, learner = tmp_path / "origin", tmp_path / "learner"
    _git(tmp_path, "clone", "-q", str(ROOT), str(origin))
    _git(tmp_path, "clone", "-q", str(origin), str(learner))
    _lab_commands_before_jupyter(learner)
    assert (learner / LESSON).exists()

    lab = LabServer(tmp_path / "lab", source=learner, make_lab=True, make_args=MAKE_ARGS)
    lab.start()
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        page = context.new_page()
        # a lesson: opening does not modify it; run its setup, answer a quiz by typing, save
        open_notebook(page, lab, LESSON)
        time.sleep(2.0)  # the kernel is ready: JupyterLab has written its language_info
        assert page.evaluate(DIRTY) is False, "opening an untouched lesson modified it"
        setup = setup_cell_index(learner / LESSON)
        quiz = _index(learner / LESSON, 'check("01.quiz_numel"')
        page.evaluate(RUN_CELLS, [setup])
        page.wait_for_function(CELLS_DONE, arg=[setup], timeout=120_000, polling=300)
        _type_into_cell(page, quiz, QUIZ)
        _cell(page, quiz).locator(".course-check-passed").first.wait_for(timeout=60_000)
        page.evaluate(SAVE)
        # an exercise: the setup cell, an answer typed in, and a cell of the learner's own
        index, exercise = _first_value_exercise("exercises/03_shapes_and_views.ipynb")
        open_notebook(page, lab, EXERCISES)
        setup = setup_cell_index(learner / EXERCISES)
        page.evaluate(RUN_CELLS, [setup])
        page.wait_for_function(CELLS_DONE, arg=[setup], timeout=120_000, polling=300)
        typed = f'{exercise.solution.strip()}\ncheck("{exercise.id}", answer)'
        _type_into_cell(page, index, typed)
        page.wait_for_function(CELLS_DONE, arg=[index], timeout=120_000, polling=300)
        verdict = _cell(page, index).locator(".course-check-passed")
        verdict.get_by_text(exercise.id).first.wait_for(timeout=30_000)
        page.evaluate(
            "(i) => { const nb = window.jupyterapp.shell.currentWidget.content;"
            " nb.activeCellIndex = i; }",
            index,
        )
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:insert-cell-below')")
        _type_into_cell(page, index + 1, "my_note = answer.shape")
        page.wait_for_function(CELLS_DONE, arg=[index + 1], timeout=120_000, polling=300)
        page.evaluate(SAVE)
        time.sleep(1.0)
        screenshot(page, "work__exercises__03_exercises_shapes_and_views.ipynb")
        answered = _source(learner / EXERCISES, index)
        assert answered.strip() == typed
        assert _source(learner / LESSON, quiz) == QUIZ
        # JupyterLab saved what the learner did, and none of it is in a file git tracks
        assert _git(learner, "status", "--porcelain") == ""

        _course_moves_on(origin)
        done = subprocess.run(["make", "-s", *MAKE_ARGS, "update"], cwd=learner, text=True,
                              capture_output=True)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        # the lesson, with only a quiz answered, takes the new version and keeps the answer
        assert f"updated:  {LESSON} (your answers kept: 01.quiz_numel)" in done.stdout, done.stdout
        assert f"kept:     {EXERCISES}" in done.stdout and NEW_EXERCISES in done.stdout
        assert _git(learner, "rev-parse", "HEAD") == _git(origin, "rev-parse", "HEAD")
        assert NEW_TEXT in (learner / LESSON).read_text()
        assert _source(learner / LESSON, quiz) == QUIZ
        assert NEW_TEXT not in (learner / EXERCISES).read_text()
        assert _source(learner / EXERCISES, index) == answered  # the answer is kept
        assert NEW_TEXT in (learner / NEW_EXERCISES).read_text()
        assert _git(learner, "status", "--porcelain") == ""

        # the lesson, its exercises and the new version side by side, as a learner opens them
        page.close()
        page = context.new_page()
        open_notebook(page, lab, LESSON)
        for path in (EXERCISES, NEW_EXERCISES):
            page.evaluate(OPEN, path)
        page.wait_for_function(
            "(p) => window.jupyterapp.shell.currentWidget.context.path === p",
            arg=NEW_EXERCISES,
            timeout=60_000,
            polling=250,
        )
        # the file browser follows the notebook in front (navigateToCurrentDirectory)
        crumbs = page.locator(".jp-FileBrowser .jp-BreadCrumbs")
        crumbs.get_by_text("exercises").wait_for(timeout=30_000)
        names = page.locator(".jp-DirListing-item .jp-DirListing-itemText")
        shown = [names.nth(k).inner_text() for k in range(names.count())]
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "work_tabs_and_file_browser_1366x768.png"))
        tabs = page.locator("#jp-main-dock-panel .lm-TabBar-tab .lm-TabBar-tabLabel")
        labels = tabs.evaluate_all(VISIBLE_TEXT)
        assert len(labels) == 3 and len(set(labels)) == 3, f"two tabs look alike: {labels}"
        listed = names.evaluate_all(VISIBLE_TEXT)
        pair = [listed[shown.index(path.split("/")[-1])] for path in (EXERCISES, NEW_EXERCISES)]
        assert pair[0] != pair[1], f"the file browser shows them alike: {pair}"
        assert len(set(listed)) == len(listed), f"names alike in the file browser: {listed}"
    finally:
        context.close()
        lab.stop()
