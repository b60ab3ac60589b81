"""Shared test setup: never touch the learner's progress database."""

import os

import pytest
from lab_server import CHROMIUM, CHROMIUM_ARGS, LabServer

# Grading fixtures are notebooks meant to be graded, not nbval-tested.
collect_ignore = ["fixtures"]


@pytest.fixture(autouse=True)
def _isolated_course_env(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_PROGRESS_DB", str(tmp_path / "progress.sqlite"))
    for name in ("COURSE_DEVICE", "COURSE_STRICT", "COURSE_GRADING_DIR"):
        monkeypatch.delenv(name, raising=False)
    # a COURSE_DEVICE that setup_notebook replaced by the CPU is remembered for the process
    # (one decision per kernel): each test starts as a fresh kernel would
    monkeypatch.setattr("course_helpers.environment.device._fell_back_from", None)
    yield


# The lesson-13 notebooks are the slowest: the lesson launches real torchrun three times
# (about 40 s under nbval), the solutions start a rank template (about 10 s).
# Collected last, one worker ran them alone at the end of `make test`; started first, the
# many small items fill the other worker around them (pytest-xdist --dist loadfile with
# --no-loadscope-reorder hands out files in this order).
SLOW_NOTEBOOKS = (
    "notebooks/13_distributed_data_parallel.ipynb::",
    "solutions/13_distributed_data_parallel.ipynb::",
)


def pytest_collection_modifyitems(config, items):
    slow = [item for item in items if item.nodeid.startswith(SLOW_NOTEBOOKS)]
    if slow:
        items[:] = slow + [item for item in items if not item.nodeid.startswith(SLOW_NOTEBOOKS)]


def pytest_report_header(config):
    return f"course env: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"


# ------------------------------------------------------------------ browser tests (lab, Chromium)


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


@pytest.fixture(scope="module")
def lab_page(browser, lab):
    """One JupyterLab page for many notebooks: each is opened in it and closed after, which
    spares the page load and application start (~5 s) of a fresh page per notebook."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{lab.base_url}/lab?reset&token={lab.token}")
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.restored)")
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    yield page
    context.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
