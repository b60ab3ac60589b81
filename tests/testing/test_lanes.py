"""CI's lanes cover the oldest and the newest torch the course supports, each over every
notebook and every test that can depend on torch (issue 38), and nothing drops out unseen."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tomllib
from ci_calls import make_calls
from conftest import TORCH_INDEPENDENT
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text()


def _recipe(target: str) -> str:
    found = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n?)+)", MAKEFILE, re.M)
    assert found, f"no {target} target in the Makefile"
    return found.group(1)


def _ci_torch_lanes() -> list[str]:
    lanes = [c.split("TORCH=")[1] for c in make_calls() if c.startswith("make test-compat TORCH=")]
    assert lanes, "CI runs no torch lanes"
    return lanes


def test_ci_runs_the_oldest_and_the_newest_supported_torch():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (torch_range,) = [r for r in dependencies if re.match(r"torch\b", r)]
    supported = SpecifierSet(torch_range.removeprefix("torch"))
    lanes = _ci_torch_lanes()
    assert all(version in supported for version in lanes), (lanes, supported)
    floor = min(s.version for s in supported if s.operator == ">=")
    ceiling = min(s.version for s in supported if s.operator == "<")
    assert any(v.startswith(floor + ".") or v == floor for v in lanes), f"no lane on {floor}"
    newest_minor = f"{ceiling.split('.')[0]}.{int(ceiling.split('.')[1]) - 1}"
    assert any(v.startswith(newest_minor + ".") for v in lanes), f"no lane on {newest_minor}"


def test_the_readme_table_names_every_lane_ci_runs():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("### Tested versions") : readme.index("### When your torch")]
    for version in _ci_torch_lanes():
        rows = [line for line in table.splitlines() if f"| {version}" in line]
        assert rows and "tested in CI" in rows[0], f"torch {version}: no 'tested in CI' row"
        assert f"make test-compat TORCH={version}" in rows[0]


def test_make_test_runs_everything_and_the_lanes_leave_out_only_torch_independent_tests():
    assert "torch_independent" not in _recipe("test")
    compat = _recipe("test-compat")
    assert '-m "not browser and not colab and not torch_independent"' in compat
    assert "--nbval tests notebooks solutions" in compat  # every lesson and solution notebook


def test_every_torch_independent_entry_exists_and_says_why():
    for prefix, reason in TORCH_INDEPENDENT.items():
        assert prefix.startswith("tests/") and (ROOT / prefix.split("::")[0]).exists(), prefix
        assert len(reason.split()) >= 4, f"{prefix}: say why it cannot depend on torch"


def test_no_torch_independent_file_imports_torch():
    """A file that imports torch computes with it: it belongs in the lanes."""
    for prefix in TORCH_INDEPENDENT:
        path = ROOT / prefix
        for file in sorted(path.rglob("test_*.py")) if path.is_dir() else [path]:
            for node in ast.walk(ast.parse(file.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                assert not any(n == "torch" or n.startswith("torch.") for n in names), file


def test_the_colab_lanes_tests_of_one_notebook_share_a_worker():
    """`make test-colab` runs on two workers; a notebook's run is cached per worker, so every
    test of that notebook is scheduled on the same one (tests/conftest.py, --dist loadgroup)."""
    from conftest import notebook_scope

    lane = "tests/colab/test_colab_lane.py::"
    run = f"{lane}test_notebook_runs_and_every_call_gives_its_text[notebooks/05_x.ipynb]"
    widgets = f"{lane}test_every_widget_message_is_one_ipywidgets_7_accepts[notebooks/05_x.ipynb]"
    assert notebook_scope(run) == notebook_scope(widgets) == "notebooks/05_x.ipynb"
    assert notebook_scope(run.replace("notebooks/", "exercises/")) == "exercises/05_x.ipynb"
    plain = f"{lane}test_a_quiz_menu_checks_the_picked_option"
    assert notebook_scope(plain) == plain
    assert "-n 2 --dist loadgroup" in _recipe("test-colab")
