"""The learner's path in JupyterLab, in headless Chromium: one exercise worked through by
hand (a wrong answer, the diagnosis, the Hint button, the right answer), `make lab`'s own
command and a lesson's link, save, reopen and restart, and the dark theme.
(Every notebook's Run All or stored outputs: test_browser_notebooks.py.)

Needs Chromium (Debian: ``apt-get install chromium-headless-shell``, or ``chromium``) and
the ``playwright`` package; see browser_support.require_browser for what happens without
them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_support import (
    APP_READY,
    CELL_REPORT,
    CELLS_DONE,
    CELLS_SHOW,
    RUN_CELLS,
    TRUST_AND_SAVE,
    WidgetsLost,
    _cell,
    _first_value_exercise,
    _type_into_cell,
    expect_restored_widgets,
    menu,
    once_more_if_widgets_lost,
    open_notebook,
    require_browser,
    screenshot,
    setup_cell_index,
    shutdown_kernel,
    wait_until_idle,
)
from lab_server import ROOT, SCREENSHOTS, LabServer

pytestmark = pytest.mark.browser
require_browser()

START = "work/notebooks/00_lesson_start_here.ipynb"  # what `make lab` opens


def test_a_learner_fails_takes_a_hint_and_then_passes(page, lab):
    relative = "exercises/01_tensors.ipynb"
    index, exercise = _first_value_exercise(relative)
    open_notebook(page, lab, relative)
    _run(page, [setup_cell_index(ROOT / relative)])  # the imports (Run All is tested elsewhere)

    _type_into_cell(page, index, f'answer = "not a tensor"\ncheck("{exercise.id}", answer)')
    page.wait_for_function(CELLS_DONE, arg=[index], timeout=120_000, polling=300)
    output = _cell(page, index).locator(".jp-Cell-outputWrapper")
    output.get_by_text(re.compile("Not yet", re.I)).first.wait_for(timeout=30_000)
    assert "is a string" in output.inner_text(), "the diagnosis should name the wrong type"

    output.get_by_role("button", name=re.compile("hint", re.I)).first.click()
    output.get_by_text(re.compile(r"Hint 1", re.I)).locator(VISIBLE).first.wait_for(timeout=30_000)
    assert exercise.hints[0][:30] in output.inner_text()

    _type_into_cell(page, index, f'{exercise.solution.strip()}\ncheck("{exercise.id}", answer)')
    output.get_by_text(re.compile("passed", re.I)).first.wait_for(timeout=30_000)
    screenshot(page, "interactive__" + Path(relative).name)
    shutdown_kernel(page)


# --------------------------------------------------------------------------- the learner's journey
# (issue 11) `make lab` as the README says; save, close, reopen and restart; dark theme.


@pytest.fixture(scope="module")
def make_lab(tmp_path_factory):
    """One server for this module's tests of `make lab` itself: started by the command `make
    lab` runs (read from `make -n lab`), with only a port, a token, no browser and private
    Jupyter folders added (no settings of the tests': what a learner's first start gets);
    autosave is off, and nothing is saved, so the repository it serves is not written to."""
    server = LabServer(tmp_path_factory.mktemp("make-lab"), make_lab=True)
    server.start()
    yield server
    server.stop()


NOTIFICATION = "@jupyterlab/apputils-extension:notification"


def _setting_defaults(server, plugin: str) -> dict:
    """The defaults the server gives a plugin's settings (its schema with `make lab`'s
    overrides applied), and the learner's own settings (none: a first start)."""
    import json
    import urllib.request

    url = f"{server.base_url}/lab/api/settings/{plugin}?token={server.token}"
    with urllib.request.urlopen(url, timeout=10) as response:
        data = json.loads(response.read())
    properties = data["schema"]["properties"]
    return {name: spec.get("default") for name, spec in properties.items()} | data["settings"]


def _toasts(page) -> list[str]:
    return page.locator(".Toastify__toast").all_inner_texts()


def test_make_lab_asks_no_news_question_in_jupyterlab_or_notebook_7(browser, make_lab):
    """First start: JupyterLab asks "Would you like to get notified about official Jupyter
    news?" unless its fetchNews setting says no (issue 36, item 5); `make lab`'s .jupyter/
    says no, and turns off the update check (the course pins its versions)."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    try:
        for name, url in (
            ("notebook7", make_lab.notebook_url(START)),
            ("jupyterlab", make_lab.url(START)),
        ):
            page.goto(url)
            page.wait_for_function(APP_READY, timeout=90_000, polling=250)
            page.wait_for_timeout(3000)  # the question comes right after the start, if at all
            screenshot(page, f"first_start__{name}")
            assert not [t for t in _toasts(page) if "news" in t.lower()], (name, _toasts(page))
            shutdown_kernel(page)
    finally:
        context.close()
    settings = _setting_defaults(make_lab, NOTIFICATION)
    assert settings["fetchNews"] == "false" and settings["checkForUpdates"] is False, settings


def test_make_lab_opens_lesson_00_and_a_lessons_exercises_link_opens_the_exercises(
    browser, make_lab
):
    """From the course map in work/README.md to a lesson, then to its exercises, as a learner
    clicks: every page is the learner's copy in work/ (named apart: issue 36 item 3)."""
    from course_helpers.environment.work_layout import work_path

    server = make_lab
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        # what `make lab` opens: lesson 00, from a server whose root is the repository
        page.goto(server.url(START))
        page.locator(".jp-NotebookPanel h1", has_text="00 · Start here").wait_for(timeout=90_000)
        page.goto(server.url(work_path("notebooks", "01_tensors")))
        lesson = page.locator(".jp-NotebookPanel:visible")
        link = lesson.locator("a", has_text=re.compile(r"^Exercises$")).first
        link.wait_for(timeout=90_000)
        link.click()
        heading = page.locator(".jp-NotebookPanel:visible h1", has_text="01 · Tensors: exercises")
        heading.wait_for(timeout=60_000)
        assert work_path("exercises", "01_tensors") in page.url  # the open file's address
        assert "Could not find path" not in page.inner_text("body")
    finally:
        context.close()


def test_notebook_7_from_its_file_tree_to_the_exercises_run_all_and_a_hint(browser, make_lab):
    """Notebook 7 on `make lab`'s server (issue 36): from its file tree (it opens README.md,
    the course map, only in its text editor, where links are not followed) a lesson opens in
    a tab of its own; the lesson's Exercises link opens the learner's copy of the exercises in
    another tab; Run > Run All Cells runs it: no error, every check "not attempted"; a Hint
    button shows the first hint."""
    from course_helpers.environment.work_layout import work_path

    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    try:
        folder, lesson_name = work_path("notebooks", "01_tensors").rsplit("/", 1)
        page.goto(f"{make_lab.base_url}/tree/{folder}?token={make_lab.token}")
        with context.expect_page(timeout=90_000) as opened:
            page.locator(".jp-DirListing-item", has_text=lesson_name).dblclick()
        lesson = opened.value
        lesson.wait_for_function(APP_READY, timeout=90_000, polling=250)
        link = lesson.locator(".jp-RenderedMarkdown a", has_text=re.compile(r"^Exercises$"))
        with context.expect_page(timeout=90_000) as opened:
            link.first.click()
        exercises = opened.value
        exercises.wait_for_function(APP_READY, timeout=90_000, polling=250)
        assert f"/notebooks/{work_path('exercises', '01_tensors')}" in exercises.url
        exercises.locator("h1", has_text="01 · Tensors: exercises").wait_for(timeout=30_000)

        menu(exercises, "Run", "Run All Cells")
        wait_until_idle(exercises)
        cells = exercises.evaluate(CELL_REPORT)
        errors = [c["index"] for c in cells for o in c["outputs"] if o["output_type"] == "error"]
        assert errors == [], f"cells raised: {errors}"
        checks = [c for c in cells if c["type"] == "code" and re.search(r"\bcheck\(", c["source"])]
        verdicts = [
            "".join(o.get("data", {}).get("text/plain", "")) for c in checks for o in c["outputs"]
        ]
        assert checks and sum("Not attempted" in v for v in verdicts) == len(checks), verdicts
        hint = exercises.locator(".course-widget button", has_text="Hint").first
        hint.scroll_into_view_if_needed()
        hint.click()
        exercises.get_by_text(re.compile(r"Hint 1/\d+ for ")).locator(VISIBLE).first.wait_for(
            timeout=30_000
        )
        assert "Error displaying widget" not in exercises.inner_text("body")
        screenshot(exercises, "notebook7_run_all__01_exercises_tensors")
        for tab in (exercises, lesson):
            shutdown_kernel(tab)
    finally:
        context.close()


# a revealed hint is on the page twice: in the Hint box, and its saved copy under the verdict
# (hidden while the box shows it; see docs/learner-journey.md)
VISIBLE = "visible=true"


RESTART = """async () => {
  const w = window.jupyterapp.shell.currentWidget;
  await w.sessionContext.restartKernel();
}"""

KERNEL_IDLE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return !!(k && k.status === 'idle');
}"""

PSEUDO = """([selector, which]) => [...document.querySelectorAll(selector)]
  .map(e => getComputedStyle(e, which).content)"""


def _run(page, indices: list[int]) -> None:
    page.evaluate(RUN_CELLS, indices)
    page.wait_for_function(CELLS_DONE, arg=indices, timeout=120_000, polling=300)


def _close(page) -> None:
    """Shut the kernel down and close the browser tab, as a learner who is done for the day."""
    shutdown_kernel(page)
    page.context.close()


def _reopen(browser, lab, relative: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    open_notebook(page, lab, relative)
    return page


def _no_widget_error(page, relative: str) -> None:
    """Once every widget output has settled (restored, or known to have no saved state),
    none shows JupyterLab's "Error displaying widget"."""
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.jp-OutputArea-output')]"
        ".some(e => e.textContent.trim() === 'Loading widget...')",
        timeout=60_000,
        polling=500,
    )
    body = page.inner_text("#main")
    assert "Error displaying widget" not in body, f"{relative}: {body[:2000]}"


def _stale_note(cell):
    return cell.locator(".course-stale-note", has_text="run the notebook down to here")


def _wait_for_stale_note(page, cell, index: int, timeout_ms: int) -> None:
    """Wait for the restored buttons' note; failing, say what the cell showed instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        _stale_note(cell).wait_for(timeout=timeout_ms)
    except PlaywrightTimeout as error:
        state = page.evaluate(CELLS_SHOW, [index])
        screenshot(page, f"no_stale_note__cell_{index}")
        message = f"no stale note on cell {index} after {timeout_ms} ms: {state}"
        raise AssertionError(message) from error


def _saved_widget_state(lab, relative: str) -> dict:
    import json

    nb = json.loads((lab.workdir / "course" / relative).read_text())
    widgets = nb["metadata"].get("widgets", {})
    return widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})


@once_more_if_widgets_lost
def test_an_exercise_notebook_survives_save_reopen_and_restart(browser, lab):
    from course_helpers.widgets import MISSING_NOTE

    relative = "exercises/03_shapes_and_views.ipynb"
    index, exercise = _first_value_exercise(relative)
    page = _reopen(browser, lab, relative)
    # the setup cell, then one untouched exercise: "not attempted"
    _run(page, [setup_cell_index(ROOT / relative), index])
    cell = _cell(page, index)
    cell.get_by_role("button", name="Hint").click()
    cell.get_by_text(re.compile(rf"Hint 1/\d+ for {re.escape(exercise.id)}")).locator(
        VISIBLE
    ).first.wait_for()
    assert not _stale_note(cell).is_visible()  # live buttons carry no note

    # save (widget state goes with it: saveState is on in make lab's settings) and reopen
    page.evaluate(TRUST_AND_SAVE)
    kinds = {m["model_name"] for m in _saved_widget_state(lab, relative).values()}
    assert {"ButtonModel", "OutputModel", "HTMLModel"} <= kinds
    _close(page)
    page = _reopen(browser, lab, relative)
    expect_restored_widgets(page, [index], "03_exercise_reopened")
    cell = _cell(page, index)
    _wait_for_stale_note(page, cell, index, 30_000)  # restored, with the note ...
    # ... and the hint it showed (in another widget view, which may attach a moment later)
    from playwright.sync_api import expect

    expect(cell).to_contain_text(f"Hint 1/{len(exercise.hints)}", timeout=30_000)
    _no_widget_error(page, relative)
    cell.get_by_role("button", name="Hint").click()  # a stale button: the note stays
    assert _stale_note(cell).is_visible()

    # run the cell again: live buttons; restart: they say they are stale when clicked
    _run(page, [setup_cell_index(ROOT / relative), index])
    cell.get_by_role("button", name="Hint").click()
    cell.get_by_text(re.compile(r"Hint 1/")).locator(VISIBLE).first.wait_for()
    assert not _stale_note(cell).is_visible()
    page.evaluate(RESTART)
    page.wait_for_function(KERNEL_IDLE, timeout=60_000, polling=250)
    cell.get_by_role("button", name="Hint").click()
    _stale_note(cell).wait_for(timeout=10_000)
    screenshot(page, "restarted__" + Path(relative).name)

    # saved after the restart, the widgets have no state left to save: reopened, the output
    # says how to get the buttons back instead of "Error displaying widget: model not found"
    page.evaluate(TRUST_AND_SAVE)
    assert _saved_widget_state(lab, relative) == {}
    _close(page)
    page = _reopen(browser, lab, relative)
    selector = ".jp-OutputArea-output.jupyter-widgets"
    page.wait_for_function(
        "(s) => document.querySelectorAll(s).length > 0", arg=selector, timeout=30_000, polling=250
    )
    notes = page.evaluate(PSEUDO, [selector, "::before"])
    assert notes and all(MISSING_NOTE in note for note in notes), notes
    _no_widget_error(page, relative)
    screenshot(page, "reopened_without_state__" + Path(relative).name)
    # what a test whose widgets did not come back is told (and the page closed with it)
    # (how often the page asked for the kernel's widget states depends on when its kernel
    # connected; the console's "not found" is certain here)
    told = r"'text': 'Error displaying widget: model not found'.*states [12] time.*found' [1-9]"
    with pytest.raises(WidgetsLost, match=told):
        expect_restored_widgets(page, [index], "03_deliberate_check", timeout_ms=1_000)
    assert page.is_closed()


def _luminance(rgb) -> float:
    def channel(c: float) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _hex(colour: str):
    colour = colour.lstrip("#")
    return tuple(int(colour[k : k + 2], 16) for k in (0, 2, 4))


DARK_PICTURES = [
    "import os\n\nimport torch\n\nfrom course_helpers import draw_graph\n\n"
    "x = torch.tensor(2.0, requires_grad=True)\ny = 3 * x + 1",
    'os.environ["COURSE_GRAPHVIZ"] = ""  # Graphviz dot\ndraw_graph(y, params={"x": x})',
    'os.environ["COURSE_GRAPHVIZ"] = "off"  # the built-in layout\ndraw_graph(y, params={"x": x})',
]


def test_graph_pictures_are_legible_in_the_dark_theme_with_and_without_dot(page, lab):
    """Screenshots of the pictures in JupyterLab Dark: the edges, sampled where the SVG says
    they are drawn, against the background the picture really shows on the page."""
    import io
    import shutil

    import nbformat
    import numpy as np
    from PIL import Image

    assert shutil.which("dot"), "this test compares pictures drawn with and without dot"
    relative = "notebooks/zz_dark_pictures.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in DARK_PICTURES]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, lab.workdir / "course" / relative)
    open_notebook(page, lab, relative)
    change = "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})"
    page.evaluate(change, "JupyterLab Dark")
    try:
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", polling=250)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        wait_until_idle(page)
        cells = page.evaluate(CELL_REPORT)
        for index, renderer in ((1, "dot"), (2, "built-in")):
            (svg,) = [o["data"]["image/svg+xml"] for o in cells[index]["outputs"] if "data" in o]
            svg = "".join(svg)
            edges = re.findall(r'class="edge">.*?</g>', svg, re.S)
            colours = {_hex(c) for e in edges for c in re.findall(r'stroke="(#[0-9a-fA-F]{6})"', e)}
            assert edges and colours, f"{renderer}: no edges in the picture"
            picture = (
                _cell(page, index)
                .locator(".course-graph img, .jp-RenderedSVG img, .jp-RenderedSVG svg")
                .first
            )
            picture.scroll_into_view_if_needed()
            image = Image.open(io.BytesIO(picture.screenshot())).convert("RGB")
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            image.save(SCREENSHOTS / f"dark_theme__{renderer}.png")
            background = image.getpixel((2, 2))
            page_colour = page.evaluate(
                "() => getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor"
            )
            pixels = np.asarray(image, dtype=float).reshape(-1, 3)
            near = np.min([((pixels - c) ** 2).sum(axis=1) for c in colours], axis=0) < 30**2
            edge_pixels = [tuple(int(v) for v in p) for p in pixels[near]]
            assert len(edge_pixels) >= 20, f"{renderer}: the edges are not on the screenshot"
            edge = sorted(edge_pixels, key=_luminance)[len(edge_pixels) // 2]  # the median
            ratio = contrast(edge, background)
            print(f"{renderer}: edge {edge} on {background} (page {page_colour}): {ratio:.1f}:1")
            assert ratio >= 3.0, (
                f"{renderer}: edges {edge} on the picture's background {background} have a "
                f"contrast of {ratio:.1f}:1 in the dark theme (WCAG asks 3:1 for graphics)"
            )
    finally:
        page.evaluate(change, "JupyterLab Light")
        shutdown_kernel(page)
