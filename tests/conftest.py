"""Shared test setup: never touch the learner's progress database."""

import os
import re

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


# Tests whose outcome cannot change with the torch release: they read the course's files, run
# its build and CI wiring, or check the grader's isolation and plumbing (what torch computes
# inside a graded notebook is judged by the exercise checks, which tests/checking and
# tests/lessons cover, and serialised by torch.save, which test_grading_answers.py covers).
# They carry the marker torch_independent: `make test` runs them once, and the compatibility
# lanes (`make test-compat`, another torch) leave them out. A new test file is not listed, so
# it runs in every lane until someone shows it does not depend on torch.
TORCH_INDEPENDENT = {
    "tests/authoring/": "the build, the Colab links and stub rules work on notebook text",
    "tests/course/test_browser_reruns.py": "when a browser test runs once more, stand-ins",
    "tests/course/test_colab_lane_wiring.py": "reads the Makefile, CI script and pins",
    "tests/course/test_command_line.py": "the command line's arguments and imports",
    "tests/course/test_environment_files.py": "compares environment.yml with pyproject.toml",
    "tests/course/test_lab_command.py": "JupyterLab serves the repository's files",
    "tests/course/test_lab_server_config.py": "the browser tests' server config and start",
    "tests/course/test_notebook_template.py": "reads the notebooks' cells and tags",
    "tests/course/test_prose_names.py": "reads the notebooks' prose and imports",
    "tests/checking/test_progress_store.py": "the progress database's file: corrupted, read-only",
    "tests/environment/test_workspace.py": "copies and compares the learner's notebook files",
    "tests/grading/test_budget.py": "the per-notebook budget: control groups, tmpfs, processes",
    "tests/grading/test_deploy_templates.py": "validates deploy/ templates and scripts",
    "tests/grading/test_grading_attacks.py": "the sandbox keeps tampering out: no credit",
    "tests/grading/test_grading_inputs.py": "what the grader refuses before any kernel starts",
    "tests/grading/test_platforms.py": "Gradescope and PrairieLearn file formats and bundle",
    "tests/grading/test_redact.py": "the catalogue graded kernels see, without answer keys",
    "tests/grading/test_shards.py": "splitting submissions into shards and merging reports",
    "tests/grading/test_worker_report.py": "reading a worker's report pipe, with a stand-in",
    "tests/grading/test_worker_kernel.py": "how a grading worker connects to its kernel",
    "tests/grading/test_package_snapshot.py": "the package snapshot and its bytecode",
    "tests/test_layout.py": "the package's import graph and module sizes",
    "tests/testing/test_ci_script.py": ".ci/run's phases and cache, with stand-ins for make",
    "tests/testing/test_lanes.py": "reads the Makefile, CI script, pyproject and this list",
    "tests/testing/test_machine_speed.py": "times a fixed workload of the standard library",
    "tests/testing/test_profiling.py": "the profile tool counts processes, CPU and lanes",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(tuple(TORCH_INDEPENDENT)):
            item.add_marker(pytest.mark.torch_independent)
    slow = [item for item in items if item.nodeid.startswith(SLOW_NOTEBOOKS)]
    if slow:
        items[:] = slow + [item for item in items if not item.nodeid.startswith(SLOW_NOTEBOOKS)]


# The Colab-like lane (`make test-colab`, --dist loadgroup) runs each notebook once per worker
# process and checks that run in several tests, whose ids end in the notebook's path: those
# tests go to one worker, every other test goes wherever a worker is free. pytest-xdist 3.8's
# own loadgroup cannot do it under pytest 9 (it renames item._nodeid, which pytest 9 no
# longer reads), so it is done here, by the test id.
NOTEBOOK_IN_ID = re.compile(r"\[((?:notebooks|exercises|solutions)/[^\[\]]+\.ipynb)\]$")


def notebook_scope(nodeid: str) -> str:
    """The notebook a test id names as its parameter, else the test id itself."""
    found = NOTEBOOK_IN_ID.search(nodeid)
    return found.group(1) if found else nodeid


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None  # pytest-xdist's own scheduler
    from xdist.scheduler import LoadScopeScheduling

    class ByNotebook(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return notebook_scope(nodeid)

    return ByNotebook(config, log)


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
    # as long as open_in allows a page to start (Playwright's default is 30 s)
    page.wait_for_function(
        "() => !!(window.jupyterapp && window.jupyterapp.restored)", timeout=90_000, polling=250
    )
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    yield page
    context.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
