"""The course as a learner sees it: JupyterLab in headless Chromium.

For every notebook in notebooks/, exercises/ and solutions/: open it, Run All, wait for the
kernel to go idle, and assert that no cell shows an unexpected error, that every widget
rendered, and that every graph picture is on the page. One exercise is also worked through
by hand: a wrong answer, the diagnosis, the Hint button, then the right answer.

Needs Chromium (Debian: ``apt-get install chromium``) and the ``playwright`` package. Without
them the module is skipped with the reason; ``COURSE_REQUIRE_BROWSER=1`` (set by .ci/run)
turns that skip into a failure.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from lab_server import CHROMIUM, CHROMIUM_ARGS, ROOT, SCREENSHOTS, LabServer

pytestmark = pytest.mark.browser


def _why_unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the 'playwright' package is not installed (pip install playwright)"
    if not os.access(CHROMIUM, os.X_OK):
        return (
            f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set COURSE_CHROMIUM)"
        )
    return None


_REASON = _why_unavailable()
if _REASON:
    if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
        raise RuntimeError(f"browser tests are required here but cannot run: {_REASON}")
    pytest.skip(f"BROWSER TESTS SKIPPED: {_REASON}", allow_module_level=True)

NOTEBOOKS = sorted(
    str(p.relative_to(ROOT))
    for d in ("notebooks", "exercises", "solutions")
    for p in (ROOT / d).glob("*.ipynb")
)

APP_READY = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!(k && k.status === 'idle' && w.content && w.content.model);
}"""

ALL_DONE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  for (const c of w.content.model.cells) {
    const pending = c.type === 'code' && c.sharedModel.source.trim() && c.executionCount === null;
    if (pending) return false;
  }
  const prompts = [...document.querySelectorAll('.jp-InputPrompt')];
  return !prompts.some(p => p.textContent.includes('[*]'));
}"""

CELL_REPORT = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return [...w.content.model.cells].map((c, index) => ({
    index,
    type: c.type,
    source: c.sharedModel.source,
    tags: (c.getMetadata && c.getMetadata('tags')) || [],
    outputs: c.type === 'code' ? c.outputs.toJSON() : [],
  }));
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    server = LabServer(tmp_path_factory.mktemp("lab"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


def open_notebook(page, lab, relative: str):
    page.goto(lab.url(relative))
    page.wait_for_function(APP_READY, timeout=90_000)


def wait_until_idle(page, timeout_s: float = 240) -> None:
    page.wait_for_function(ALL_DONE, timeout=timeout_s * 1000, polling=500)
    time.sleep(1.0)  # let the last outputs render
    page.wait_for_function(ALL_DONE, timeout=timeout_s * 1000, polling=500)


def shutdown_kernel(page) -> None:
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")


def screenshot(page, relative: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / (relative.replace("/", "__") + ".png")))


def _mime_count(cells, mime: str) -> int:
    return sum(mime in o.get("data", {}) for c in cells for o in c["outputs"])


@pytest.mark.parametrize("relative", NOTEBOOKS)
def test_run_all_shows_no_errors_and_renders_everything(page, lab, relative):
    open_notebook(page, lab, relative)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_until_idle(page)
    cells = page.evaluate(CELL_REPORT)
    screenshot(page, relative)

    code_cells = [c for c in cells if c["type"] == "code" and c["source"].strip()]
    unexpected = [
        (c["index"], o.get("ename"), o.get("evalue"))
        for c in code_cells
        for o in c["outputs"]
        if o["output_type"] == "error" and "raises-exception" not in c["tags"]
    ]
    assert unexpected == [], f"{relative}: cells raised unexpectedly: {unexpected}"
    expected_errors = [c["index"] for c in code_cells if "raises-exception" in c["tags"]]
    for index in expected_errors:
        outputs = cells[index]["outputs"]
        assert any(o["output_type"] == "error" for o in outputs), (
            f"{relative}: cell {index} is tagged raises-exception but raised nothing"
        )

    body = page.inner_text("#main")
    assert "Error displaying widget" not in body, f"{relative}: a widget failed to render"
    widgets = _mime_count(cells, "application/vnd.jupyter.widget-view+json")
    rendered = page.locator(".jp-OutputArea-output .jupyter-widgets").count()
    assert rendered >= widgets, f"{relative}: {widgets} widget outputs but {rendered} rendered"

    pictures = _mime_count(cells, "image/svg+xml")
    shown = page.locator(
        ".course-graph img, .jp-RenderedSVG svg, .jp-RenderedSVG img, .jp-RenderedImage img"
    ).count()
    assert shown >= pictures, f"{relative}: {pictures} graph pictures but {shown} on the page"

    texts = [
        "\n".join(
            "".join(o.get("data", {}).get("text/plain", "")) + "".join(o.get("text", ""))
            for o in c["outputs"]
        )
        for c in code_cells
        if re.search(r"\bcheck\(", c["source"])
    ]
    if relative.startswith("solutions/"):
        assert not any(re.search(r"Not yet|\bError\b|Not attempted", t) for t in texts), (
            f"{relative}: a reference solution did not pass its check"
        )
    if relative.startswith("exercises/"):
        assert texts and all(re.search(r"not attempted", t, re.I) for t in texts), (
            f"{relative}: an untouched exercise should say 'not attempted'"
        )
    shutdown_kernel(page)


def _first_value_exercise(relative: str):
    import nbformat

    from course_helpers.exercises import get

    nb = nbformat.read(ROOT / relative, as_version=4)
    for index, cell in enumerate(nb.cells):
        match = re.search(r'check\("([\w.]+)", answer\)', cell.source)
        if cell.cell_type == "code" and match:
            exercise = get(match.group(1))
            if exercise.kind == "value" and exercise.solution.startswith("answer ="):
                return index, exercise
    raise AssertionError(f"{relative} has no value exercise answered by 'answer = ...'")


def _cell(page, index: int):
    return page.locator(f'.jp-Notebook .jp-Cell[data-windowed-list-index="{index}"]')


def _type_into_cell(page, index: int, text: str) -> None:
    """Select cell `index`, replace its text by typing, and run it with Shift+Enter."""
    page.evaluate(
        """(i) => {
          const nb = window.jupyterapp.shell.currentWidget.content;
          nb.activeCellIndex = i;
          nb.scrollToItem(i);
        }""",
        index,
    )
    _cell(page, index).locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    for number, line in enumerate(text.split("\n")):
        if number:
            page.keyboard.press("Enter")
            page.keyboard.press("Home")  # undo auto-indent: our lines are top level
        page.keyboard.type(line)
    page.keyboard.press("Shift+Enter")


def test_a_learner_fails_takes_a_hint_and_then_passes(page, lab):
    relative = "exercises/01_tensors.ipynb"
    index, exercise = _first_value_exercise(relative)
    open_notebook(page, lab, relative)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_until_idle(page)

    _type_into_cell(page, index, f'answer = "not a tensor"\ncheck("{exercise.id}", answer)')
    wait_until_idle(page)
    output = _cell(page, index).locator(".jp-Cell-outputWrapper")
    output.get_by_text(re.compile("Not yet", re.I)).first.wait_for(timeout=30_000)
    assert "is a string" in output.inner_text(), "the diagnosis should name the wrong type"

    output.get_by_role("button", name=re.compile("hint", re.I)).first.click()
    output.get_by_text(re.compile(r"Hint 1", re.I)).first.wait_for(timeout=30_000)
    assert exercise.hints[0][:30] in output.inner_text()

    _type_into_cell(page, index, f'{exercise.solution.strip()}\ncheck("{exercise.id}", answer)')
    wait_until_idle(page)
    output.get_by_text(re.compile("passed", re.I)).first.wait_for(timeout=30_000)
    screenshot(page, "interactive__" + Path(relative).name)
    shutdown_kernel(page)
