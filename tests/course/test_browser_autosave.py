"""What a learner once saw survives reopening and JupyterLab's autosave (issue 28, item 1).

Reopening a notebook with saved widget state marks it modified (jupyterlab-manager marks the
document dirty for every widget model it restores), and the autosave that follows saves only
widgets with a live kernel connection: none, so the saved state becomes empty. The picture of
the backward replay and the hints a learner revealed must still be there at the next opening.

The server here has JupyterLab's autosave on, every 3 s instead of every 120 s (its
``autosaveInterval`` setting, written by tests/lab_server.py), and the course's saveState
setting, as ``make lab`` has.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from browser_support import (
    CELLS_DONE,
    FRONT_ENDS,
    MISSING_NOTES,
    RUN_CELLS,
    TRUST_AND_SAVE,
    WIDGETS_SETTLED,
    _cell,
    expect_restored_widgets,
    once_more_if_widgets_lost,
    open_in,
    require_browser,
    setup_cell_index,
    shutdown_kernel,
)
from lab_server import ROOT, SCREENSHOTS, LabServer

pytestmark = pytest.mark.browser
require_browser()

AUTOSAVE_S = 3
LESSON = "notebooks/05_autograd_graphs.ipynb"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    server = LabServer(tmp_path_factory.mktemp("lab-autosave"), autosave_interval=AUTOSAVE_S)
    server.start()
    yield server
    server.stop()


# JupyterLab's saves of one document do not wait for each other: its autosave re-arms its
# timer before the save it started has finished, and a save that finds on disk what another
# save wrote meanwhile asks "has changed on disk ... Overwrite or Revert?" and waits for an
# answer (two saves started together open it: test_two_saves_at_once_ask_about_the_disk).
# With autosave every 3 s on 2 busy cores, a CI run stopped at TRUST_AND_SAVE ("not saved
# within 60 s"). The page's saves are queued, one after the other, as soon as its notebook is
# there: the test is about what the saves keep, not about JupyterLab's race between two saves.
ONE_SAVE_AT_A_TIME = """() => {
  const context = window.jupyterapp.shell.currentWidget.context;
  if (context.__oneSaveAtATime) return;
  const save = context.save.bind(context);
  let last = Promise.resolve();
  context.save = () => (last = last.catch(() => {}).then(save));
  context.__oneSaveAtATime = true;
}"""


def _open(browser, lab, relative: str, front_end: str = "jupyterlab"):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    open_in(page, lab, relative, front_end, first=ONE_SAVE_AT_A_TIME)
    return page


def _close(page) -> None:
    shutdown_kernel(page)
    page.context.close()


def _saved(lab, relative: str) -> dict:
    return json.loads((lab.workdir / "course" / relative).read_text())


def _wait_for_autosave(lab, relative: str, since: float) -> None:
    """Until JupyterLab's autosave has written the file (it is modified on reopening)."""
    path = lab.workdir / "course" / relative
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.stat().st_mtime > since:
            time.sleep(AUTOSAVE_S)  # let a save under way finish
            return
        time.sleep(0.5)
    raise AssertionError(f"{relative} was not autosaved within 60 s of reopening")


def _shows_what_was_seen(
    page, replay: int, check_cell: int, hint_text: str, when: str, copies_shown: bool
):
    """The replay's picture and the revealed hint are on screen, once each: from the widgets
    (restored) or from their saved copies (``copies_shown``: the widgets could not be)."""
    page.wait_for_function(WIDGETS_SETTLED, timeout=60_000, polling=500)
    cell = _cell(page, replay)
    # what rendering still changes after the widgets settled is waited for (30 s), not slept on
    for index, copy in ((replay, ".course-replay-saved"), (check_cell, ".course-saved-hints")):
        _settles(_cell(page, index).locator(copy).first, copies_shown, f"{when}: {copy} shown")
    pictures = cell.locator(".jp-OutputArea-output svg, .jp-OutputArea-output img")
    shown = pictures.locator("visible=true").first
    _settles(shown, True, f"{when}: the replay shows no picture: {cell.inner_text()[:500]!r}")
    hint_cell = _cell(page, check_cell)
    hint = hint_cell.get_by_text(hint_text).locator("visible=true").first
    _settles(hint, True, f"{when}: the revealed hint is gone: {hint_cell.inner_text()[:500]!r}")
    if copies_shown:  # where the buttons were not saved, the note says how to get them back,
        # in today's words even where outputs saved earlier carry an older stylesheet
        from course_helpers.widgets import MISSING_NOTE

        notes = page.evaluate(MISSING_NOTES, [replay, check_cell])
        assert notes and all(MISSING_NOTE in note for note in notes), f"{when}: {notes}"


def _settles(locator, visible: bool, message: str) -> None:
    """``locator`` is (or becomes, within 30 s) visible, or hidden where ``visible`` is False."""
    try:
        locator.wait_for(state="visible" if visible else "hidden", timeout=30_000)
    except Exception as error:  # playwright's TimeoutError
        raise AssertionError(f"{message} (expected {'' if visible else 'not '}visible)") from error


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@once_more_if_widgets_lost
def test_replay_picture_and_revealed_hint_survive_reopen_autosave_reopen(browser, lab, front_end):
    """In JupyterLab 4 and in Notebook 7 (which autosaves with the same settings)."""
    import shutil

    import nbformat

    nb = nbformat.read(ROOT / LESSON, as_version=4)
    relative = f"notebooks/05_autosave_{front_end}.ipynb"
    shutil.copy(ROOT / LESSON, lab.workdir / "course" / relative)
    setup = setup_cell_index(ROOT / LESSON)
    replay = next(i for i, c in enumerate(nb.cells) if "replay_backward(" in c.source)
    check_cell = next(i for i, c in enumerate(nb.cells) if c.source.startswith("check("))
    exercise_id = re.match(r'check\("([\w.]+)"', nb.cells[check_cell].source).group(1)

    # day 1: run the replay, step to 2, reveal a hint, save
    page = _open(browser, lab, relative, front_end)
    indices = [setup, replay, check_cell]
    page.evaluate(RUN_CELLS, indices)
    page.wait_for_function(CELLS_DONE, arg=indices, timeout=180_000, polling=300)
    _cell(page, replay).get_by_role("button", name="next").click()
    page.wait_for_function(
        "(i) => document.querySelector("
        "`.jp-Cell[data-windowed-list-index='${i}'] .widget-readout`).textContent.trim() === '2'",
        arg=replay,
        timeout=30_000,
        polling=250,
    )
    hint_text = re.compile(rf"Hint 1/\d+ for {re.escape(exercise_id)}")
    _cell(page, check_cell).get_by_role("button", name="Hint").click()
    _cell(page, check_cell).get_by_text(hint_text).locator("visible=true").first.wait_for(
        timeout=30_000
    )
    saved_hints = _cell(page, check_cell).locator(".course-saved-hints")
    saved_hints.wait_for(state="attached", timeout=30_000)  # the kernel's copy reached the cell
    assert not saved_hints.is_visible()  # ... and is hidden while the Hint box shows the hint
    assert not _cell(page, replay).locator(".course-replay-saved").is_visible()
    page.evaluate(TRUST_AND_SAVE)
    _close(page)
    day1 = _saved(lab, relative)
    assert day1["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]

    # day 2: reopen (the widgets come back from the saved state), leave it to autosave
    saved_at = (lab.workdir / "course" / relative).stat().st_mtime
    page = _open(browser, lab, relative, front_end)
    expect_restored_widgets(page, [replay, check_cell], f"05_{front_end}_day2")
    _shows_what_was_seen(page, replay, check_cell, hint_text, "reopened", copies_shown=False)
    _wait_for_autosave(lab, relative, saved_at)
    _close(page)

    # day 3: what the autosave kept
    page = _open(browser, lab, relative, front_end)
    try:
        _shows_what_was_seen(
            page, replay, check_cell, hint_text, "reopened after an autosave", copies_shown=True
        )
        # the step the learner had reached, not only step 1
        assert "step 2 of" in _cell(page, replay).inner_text()
    finally:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for name, index in (("replay", replay), ("hint", check_cell)):
            _cell(page, index).scroll_into_view_if_needed()
            _cell(page, index).screenshot(
                path=str(SCREENSHOTS / f"third_opening_05_{name}__{front_end}.png")
            )
        _close(page)


QUIZ_LESSON = "notebooks/04_broadcasting_and_matmul.ipynb"


def _shows_the_checked_answer(page, cell_index: int, picked: str, when: str, copy_shown: bool):
    """The option checked and its verdict are on screen, once each: from the quiz widget
    (restored) or from the question's saved copy (``copy_shown``: the widget could not be)."""
    page.wait_for_function(WIDGETS_SETTLED, timeout=60_000, polling=500)
    cell = _cell(page, cell_index)
    copy = cell.locator(".course-saved-quiz").first
    _settles(copy, copy_shown, f"{when}: the quiz's saved copy shown")
    verdicts = cell.locator(".course-check-passed")
    _settles(verdicts.locator("visible=true").first, True, f"{when}: no verdict shown")
    visible = [verdicts.nth(k).is_visible() for k in range(verdicts.count())]
    assert visible.count(True) == 1, f"{when}: {visible.count(True)} verdicts shown"
    if copy_shown:  # the widget's menu shows the choice itself
        text = cell.locator(".course-saved-quiz").inner_text()
        assert f"Your answer: {picked}" in text, f"{when}: {text!r}"


@once_more_if_widgets_lost
def test_a_checked_quiz_answer_survives_reopen_autosave_reopen(browser, lab):
    import nbformat

    nb = nbformat.read(ROOT / QUIZ_LESSON, as_version=4)
    setup = setup_cell_index(ROOT / QUIZ_LESSON)
    imports = next(i for i, c in enumerate(nb.cells) if "import quiz" in c.source)
    quiz_cell = next(i for i, c in enumerate(nb.cells) if c.source.startswith("quiz("))
    exercise_id = re.search(r'quiz\(\s*"([\w.]+)"', nb.cells[quiz_cell].source).group(1)

    from course_helpers.lessons import get

    exercise = get(exercise_id)
    right = exercise.build_reference()
    picked = f"{right}: {exercise.options[right]}"

    # day 1: run the quiz, pick the right option, check it, save
    page = _open(browser, lab, QUIZ_LESSON)
    indices = [setup, imports, quiz_cell]
    page.evaluate(RUN_CELLS, indices)
    page.wait_for_function(CELLS_DONE, arg=indices, timeout=180_000, polling=300)
    cell = _cell(page, quiz_cell)
    cell.locator("select").select_option(label=picked)
    cell.get_by_role("button", name="Check").click()
    cell.locator(".course-check-passed").locator("visible=true").first.wait_for(timeout=30_000)
    saved = cell.locator(".course-saved-quiz")
    saved.wait_for(state="attached", timeout=30_000)  # the kernel's copy reached the cell
    assert not saved.is_visible()  # ... and is hidden while the menu shows the verdict
    page.evaluate(TRUST_AND_SAVE)
    _close(page)

    # day 2: reopen (the quiz comes back from the saved widget state), leave it to autosave
    saved_at = (lab.workdir / "course" / QUIZ_LESSON).stat().st_mtime
    page = _open(browser, lab, QUIZ_LESSON)
    expect_restored_widgets(page, [quiz_cell], "04_quiz_day2")
    _shows_the_checked_answer(page, quiz_cell, picked, "reopened", copy_shown=False)
    _wait_for_autosave(lab, QUIZ_LESSON, saved_at)
    _close(page)
    widgets = _saved(lab, QUIZ_LESSON)["metadata"].get("widgets", {})
    assert not widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state")

    # day 3: what the autosave kept
    page = _open(browser, lab, QUIZ_LESSON)
    try:
        _shows_the_checked_answer(
            page, quiz_cell, picked, "reopened after an autosave", copy_shown=True
        )
    finally:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        _cell(page, quiz_cell).scroll_into_view_if_needed()
        _cell(page, quiz_cell).screenshot(path=str(SCREENSHOTS / "third_opening_04_quiz.png"))
        _close(page)


# A change, then a first save: its file is on disk, its answer held back until a dialog opens
# (or 3 s pass), and a second save starts meanwhile, as an autosave can beside a slow save.
TWO_SAVES_AT_ONCE = """async () => {
  const context = window.jupyterapp.shell.currentWidget.context;
  const contents = context._manager.contents;
  const write = contents.save;
  context.model.cells.get(0).sharedModel.setSource(`changed at ${Date.now()}`);  // new bytes
  const dialogOpen = () => !!document.querySelector('.jp-Dialog');
  let second = null;
  contents.save = async function (...args) {
    const written = await write.apply(this, args);
    if (second === null) {
      second = context.save().catch(() => {});
      for (let t = 0; t < 30 && !dialogOpen(); t++) await new Promise(r => setTimeout(r, 100));
    }
    return written;
  };
  try {
    await context.save();
    for (let t = 0; t < 20 && !dialogOpen(); t++) await new Promise(r => setTimeout(r, 100));
    const dialog = document.querySelector('.jp-Dialog');
    if (!dialog) await second;
    return {dialog: dialog ? dialog.innerText : null, dirty: context.model.dirty};
  } finally {
    contents.save = write;
  }
}"""


def test_two_saves_at_once_ask_about_the_disk(browser, lab):
    """Why the tests above queue their page's saves (ONE_SAVE_AT_A_TIME): without the queue,
    JupyterLab asks about a file it wrote itself; with it, both saves finish and nothing asks."""
    import nbformat

    relative = "notebooks/two_saves.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_markdown_cell("saved twice")],
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        ),
        lab.workdir / "course" / relative,
    )
    page = _open(browser, lab, relative)  # queued
    try:
        queued = page.evaluate(TWO_SAVES_AT_ONCE)
        assert queued == {"dialog": None, "dirty": False}
        page.evaluate(
            "() => { const c = window.jupyterapp.shell.currentWidget.context;"
            " delete c.save; delete c.__oneSaveAtATime; }"
        )  # JupyterLab's own save
        alone = page.evaluate(TWO_SAVES_AT_ONCE)
        assert alone["dialog"] and "has changed on disk" in alone["dialog"], alone
        page.locator(".jp-Dialog").get_by_role("button", name="Overwrite").click()
    finally:
        _close(page)
