"""environment.yml must offer conda users the same packages as pyproject.toml."""

import re
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")

ROOT = Path(__file__).resolve().parents[2]
# conda-forge names for PyPI distributions whose names differ
CONDA_NAME = {"torch": "pytorch", "graphviz": "python-graphviz"}
CONDA_ONLY = {"python", "pip", "graphviz"}  # graphviz here is the program, not the PyPI package


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0].strip().lower()


def _pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["test"]
    return {CONDA_NAME.get(_name(r), _name(r)): r for r in requirements}


def _conda_requirements() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    found = {}
    for item in env["dependencies"]:
        entries = item["pip"] if isinstance(item, dict) else [item]
        for entry in entries:
            found[_name(entry)] = entry
    return found


def test_environment_yml_lists_the_same_packages_as_pyproject():
    pyproject = _pyproject_requirements()
    conda = _conda_requirements()
    assert set(pyproject) == set(conda) - CONDA_ONLY


def test_environment_yml_uses_the_same_version_ranges():
    pyproject = _pyproject_requirements()
    conda = _conda_requirements()
    for name, requirement in pyproject.items():
        bounds = requirement[len(_name(requirement)) :].replace(" ", "")
        assert conda[name].replace(" ", "").endswith(bounds), (name, requirement, conda[name])


def test_environment_yml_installs_graphviz_programs():
    assert "graphviz" in _conda_requirements()
    assert _conda_requirements()["graphviz"] == "graphviz"


def test_constraints_pin_every_direct_dependency_and_torch_exactly():
    pins = {}
    for line in (ROOT / "requirements/constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.lower().replace("_", "-")] = version
    assert pins["torch"] == "2.13.0"
    for name in _pyproject_requirements():
        pypi = {v: k for k, v in CONDA_NAME.items()}.get(name, name)
        assert pypi in pins, f"{pypi} is not pinned in requirements/constraints.txt"
