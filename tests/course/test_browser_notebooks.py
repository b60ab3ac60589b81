"""Every lesson and solution notebook of the course in JupyterLab, in headless Chromium.

They are opened as a fresh clone shows them, with the outputs the build stored and nbval
re-checks: no cell shows an unexpected error, every expected error is there, every widget
output and every graph picture is on the page. The exercise notebooks (stored without
outputs) are run once by tests/course/test_exercise_notebooks.py, which shows that run in the page;
live widgets driven by a kernel are exercised by the journey tests in tests/course/test_browser.py.

Needs Chromium (Debian: ``apt-get install chromium-headless-shell``, or ``chromium``) and
the ``playwright`` package; see browser_support.require_browser for what happens without
them.
"""

from __future__ import annotations

import pytest
from browser_support import STORED_NOTEBOOKS, assert_stored_outputs_render, opened, require_browser

pytestmark = pytest.mark.browser
require_browser()


@pytest.mark.parametrize("relative", STORED_NOTEBOOKS)
def test_stored_outputs_render_without_errors(lab_page, relative):
    """A lesson or solution as a fresh clone shows it before anything runs."""
    with opened(lab_page, relative) as page:
        assert_stored_outputs_render(page, relative)
