"""Every notebook of the course in JupyterLab, in headless Chromium.

Exercise notebooks (stored without outputs) are opened and Run All in the page, as a learner
first meets them. Lessons and solutions are opened as a fresh clone shows them, with the
outputs the build stored and nbval re-checks. For each: no cell shows an unexpected error,
every expected error is there, every widget and every graph picture is on the page.

Needs Chromium (Debian: ``apt-get install chromium``) and the ``playwright`` package; see
browser_support.require_browser for what happens without them.
"""

from __future__ import annotations

import pytest
from browser_support import (
    APP_READY,
    CELL_REPORT,
    EXERCISE_NOTEBOOKS,
    RENDERED,
    STORED_NOTEBOOKS,
    _assert_renders_everything,
    _cell,
    _mime_count,
    opened,
    require_browser,
    screenshot,
    wait_until_idle,
)

pytestmark = pytest.mark.browser
require_browser()


@pytest.mark.parametrize("relative", EXERCISE_NOTEBOOKS)
def test_run_all_shows_no_errors_and_renders_everything(lab_page, relative):
    """An exercise notebook as the learner first meets it: no outputs; Run All in the page."""
    with opened(lab_page, relative) as page:
        page.wait_for_function(APP_READY, timeout=90_000)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        wait_until_idle(page)
        cells = page.evaluate(CELL_REPORT)
        screenshot(page, relative)
        _assert_renders_everything(page, cells, relative, live=True)


@pytest.mark.parametrize("relative", STORED_NOTEBOOKS)
def test_stored_outputs_render_without_errors(lab_page, relative):
    """A lesson or solution as a fresh clone shows it before anything runs: the outputs the
    build stored (nbval re-executes every one of them and compares them with these). Cells
    that only the browser can show live (widgets driven by a kernel) are exercised by the
    exercise notebooks above and the journey tests below."""
    with opened(lab_page, relative) as page:
        page.wait_for_function(RENDERED, timeout=60_000, polling=200)
        cells = page.evaluate(CELL_REPORT)
        screenshot(page, relative)
        _assert_renders_everything(page, cells, relative, live=False)
        for c in cells:  # widget outputs of an untrusted notebook show their text/HTML form
            if _mime_count([c], "application/vnd.jupyter.widget-view+json"):
                shown = _cell(page, c["index"]).locator(".jp-OutputArea").inner_text().strip()
                assert shown, f"{relative}: cell {c['index']}'s widget output shows nothing"
