"""The Colab-like lane (tests/colab/, `make test-colab`) is wired so that it cannot drop out
unseen: `make test` deselects it by its marker (it needs ipywidgets 7, this venv has 8), the
lane's own target and CI run it, and its venv installs the course the way a learner does on
Colab (with its dependencies) and then checks that Colab's versions were kept."""

import re
from pathlib import Path

import pytest
from ci_calls import make_calls

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text()
# Packages the lane pins to Colab's versions, or that it does not need (front-end only).
NOT_FROM_PYPROJECT = {"ipywidgets", "ipykernel", "jupyterlab"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0].strip().lower()


def _recipe(target: str) -> str:
    found = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n?)+)", MAKEFILE, re.M)
    assert found, f"no {target} target in the Makefile"
    return found.group(1)


def test_every_test_in_tests_colab_carries_the_colab_marker():
    for path in (ROOT / "tests" / "colab").glob("test_*.py"):
        assert re.search(r"^pytestmark = pytest\.mark\.colab$", path.read_text(), re.M), path


def test_make_test_deselects_the_lane_and_make_test_colab_runs_it():
    for target in ("test", "unit", "test-compat"):
        assert re.search(r'-m "[^"]*not colab[^"]*"', _recipe(target)), target
    assert re.search(r"-m colab tests/colab\b", _recipe("test-colab"))


def test_ci_runs_the_lane():
    assert "make test-colab" in make_calls()


def test_the_lane_installs_the_course_with_its_dependencies_and_checks_colabs_versions():
    recipe = _recipe("$(COLAB_VENV)/.course-installed")
    course = [line for line in recipe.splitlines() if re.search(r"pip install .*-e \.$", line)]
    assert course and "--no-deps" not in course[0], course
    after = recipe[recipe.index(course[0]) :]
    assert '-c "$$COLAB_VERSIONS_KEPT" $(COLAB_PINS)' in after, "no version check after it"
    assert "import re, sys" in MAKEFILE and "export COLAB_VERSIONS_KEPT" in MAKEFILE


def test_the_lane_installs_every_runtime_dependency_of_the_course():
    pins = (ROOT / "requirements" / "colab.txt").read_text()
    listed = {_name(line) for line in pins.splitlines() if line.strip() and line[0] != "#"}
    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    missing = {_name(r) for r in wanted} - NOT_FROM_PYPROJECT - listed
    assert not missing, f"requirements/colab.txt lacks {missing}"


def test_the_lane_pins_the_versions_its_test_expects():
    pins = (ROOT / "requirements" / "colab.txt").read_text()
    expected = (ROOT / "tests" / "colab" / "test_colab_lane.py").read_text()
    for name, pinned in re.findall(r"^(ipywidgets|ipykernel|ipython)==(\S+)$", pins, re.M):
        assert f'"{name}": "{pinned}"' in expected, name
