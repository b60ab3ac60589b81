"""Lesson 05's backward replay on a 1366x768 screen (issue 28, item 6), in JupyterLab.

Once the widget's top is in view, its buttons, its legend (one line) and the whole step
picture must be visible together, without scrolling, with Graphviz's layout and with the
built-in one. Measured on the page's bounding boxes; the screenshots go to
build/screenshots/replay_1366x768__*.png. A taller graph (a two-layer
model) in the same cell checks the scaling.
"""

from __future__ import annotations

import pytest
from browser_support import (
    CELLS_DONE,
    RUN_CELLS,
    open_notebook,
    require_browser,
    setup_cell_index,
    shutdown_kernel,
)
from lab_server import ROOT, SCREENSHOTS

pytestmark = pytest.mark.browser
require_browser()

RELATIVE = "notebooks/05_autograd_graphs.ipynb"


EXECUTE = """async (code) => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  await k.requestExecute({code}).done;
}"""

# the widget's top scrolled to the top of the notebook's scrolling area
SCROLL_TO_WIDGET = """(i) => {
  const cell = document.querySelector(`.jp-Cell[data-windowed-list-index='${i}']`);
  cell.querySelector('.jp-OutputArea-output .widget-vbox').scrollIntoView({block: 'start'});
}"""

MEASURE = """(i) => {
  const cell = document.querySelector(`.jp-Cell[data-windowed-list-index='${i}']`);
  const box = cell.querySelector('.jp-OutputArea-output .widget-vbox');
  let scroller = box.parentElement;
  while (scroller && !(scroller.scrollHeight > scroller.clientHeight
      && /(auto|scroll)/.test(getComputedStyle(scroller).overflowY))) {
    scroller = scroller.parentElement;
  }
  const rect = (e) => {
    const b = e.getBoundingClientRect();
    return {top: b.top, bottom: b.bottom, left: b.left, right: b.right, height: b.height};
  };
  const area = rect(scroller);
  area.top = Math.max(area.top, 0);
  area.bottom = Math.min(area.bottom, window.innerHeight);
  const img = box.querySelector('.course-graph img');
  const legend = box.querySelector('.course-legend');
  return {
    visible: area,
    widget: rect(box),
    controls: rect(box.querySelector('.widget-hbox')),
    legend: rect(legend),
    legend_line: parseFloat(getComputedStyle(legend).fontSize) * 1.6,
    picture: rect(img),
    natural: [img.naturalWidth, img.naturalHeight],
  };
}"""


def _replay_cell() -> int:
    import nbformat

    cells = nbformat.read(ROOT / RELATIVE, as_version=4).cells
    return next(i for i, c in enumerate(cells) if "replay_backward(" in c.source)


# a taller graph in the same cell: a two-layer model's replay (about 600 px high unscaled)
MLP = """torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
replay = replay_backward(model(torch.randn(5, 4)).pow(2).mean(), model)
replay"""

SET_SOURCE = """([i, code]) => {
  window.jupyterapp.shell.currentWidget.content.model.cells.get(i).sharedModel.setSource(code);
}"""


@pytest.mark.parametrize(
    ("graph", "layout"), [("lesson05", "dot"), ("lesson05", "builtin"), ("mlp", "dot")]
)
def test_lesson_05_replay_fits_a_1366x768_screen(browser, lab, graph, layout):
    replay = _replay_cell()
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    try:
        open_notebook(page, lab, RELATIVE)
        setup = setup_cell_index(ROOT / RELATIVE)  # the lesson's imports and setup
        page.evaluate(RUN_CELLS, [setup])
        page.wait_for_function(CELLS_DONE, arg=[setup], timeout=120_000, polling=300)
        if layout == "builtin":  # as on a machine without Graphviz
            page.evaluate(EXECUTE, 'import os; os.environ["COURSE_GRAPHVIZ"] = "off"')
        if graph == "mlp":
            page.evaluate(SET_SOURCE, [replay, MLP])
        page.evaluate(RUN_CELLS, [replay])
        page.wait_for_function(CELLS_DONE, arg=[replay], timeout=120_000, polling=300)
        cell = page.locator(f'.jp-Notebook .jp-Cell[data-windowed-list-index="{replay}"]')
        cell.locator(".widget-vbox .course-graph img").first.wait_for(timeout=30_000)
        for _ in range(2):  # step 3 (lesson 05: the product sends 48 and 32)
            cell.get_by_role("button", name="next").click()
        page.wait_for_function(
            "(i) => document.querySelector(`.jp-Cell[data-windowed-list-index='${i}']"
            " .widget-readout`).textContent.trim() === '3'",
            arg=replay,
            timeout=30_000,
            polling=250,
        )
        page.wait_for_function(
            "(i) => { const img = document.querySelector(`.jp-Cell[data-windowed-list-index="
            "'${i}'] .widget-vbox .course-graph img`); return img && img.complete; }",
            arg=replay,
            polling=250,
        )
        page.evaluate(SCROLL_TO_WIDGET, replay)
        page.wait_for_timeout(500)
        box = page.evaluate(MEASURE, replay)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"replay_1366x768__{graph}_{layout}.png"))
        visible, picture = box["visible"], box["picture"]
        message = f"{graph}, {layout}: {box}"
        assert box["widget"]["top"] >= visible["top"] - 1, message  # the widget's top in view
        assert box["controls"]["bottom"] <= visible["bottom"], message  # the buttons
        assert box["legend"]["height"] <= box["legend_line"], message  # the legend: one line
        assert box["legend"]["bottom"] <= visible["bottom"], message
        assert picture["top"] >= visible["top"] - 1, message
        assert picture["bottom"] <= visible["bottom"] + 1, message  # the whole graph
        assert picture["height"] >= 300, message  # scaled to fit, not to a thumbnail
        shutdown_kernel(page)
    finally:
        context.close()
