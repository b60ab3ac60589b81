"""The package's layout holds what docs/architecture.md says: no import circles, a learner's
kernel never loads the instructors' or CI's code, and no module grows into a second one."""

import ast
import importlib
from pathlib import Path

import pytest

import course_helpers

PACKAGE = Path(course_helpers.__file__).resolve().parent
# what a learner's kernel may load (docs/architecture.md)
LEARNER_SIDE = ("environment", "checking", "graphs", "lessons", "errors", "records", "widgets")
INSTRUCTOR_SIDE = ("grading", "authoring", "testing")
MAX_LINES = 600
# modules allowed past MAX_LINES because their content is one indivisible idea: none today
LONG_MODULES: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """Every course module ``name`` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            # the package root only maps public names lazily; importing it loads nothing else
            if candidate and candidate not in (name, "course_helpers"):
                found.add(candidate)
                break
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def _concern(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_the_import_graph_is_read_from_the_real_imports():
    # a sanity check of the reader itself: known edges are seen, with and without aliases
    assert "course_helpers.checking.judges" in GRAPH["course_helpers.checking.checker"]
    assert "course_helpers.lessons" in GRAPH["course_helpers.checking.misconceptions"]
    assert "course_helpers.graphs.styles" in GRAPH["course_helpers.graphs.svg"]  # in a function


def test_no_module_imports_itself_in_a_circle():
    assert _cycles(GRAPH) == []


def test_no_concern_imports_another_in_a_circle():
    concerns: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        concerns.setdefault(_concern(module), set()).update(
            _concern(t) for t in targets if _concern(t) != _concern(module)
        )
    assert _cycles(concerns) == []


def test_a_learners_kernel_never_loads_instructor_or_ci_code():
    leaks = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if _concern(module) in LEARNER_SIDE
        for target in targets
        if _concern(target) in INSTRUCTOR_SIDE
    )
    assert leaks == []


def test_every_module_belongs_to_a_concern():
    top_level = {m for m in MODULES if m.count(".") == 1 and not MODULES[m].name == "__init__.py"}
    assert top_level == {
        "course_helpers.__main__",
        "course_helpers.errors",
        "course_helpers.records",
        "course_helpers.widgets",
        "course_helpers.pytest_plugin",  # the old plugin name, one re-export
    }


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_grows_past_the_limit(name):
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES or name in LONG_MODULES, f"{name}: {lines} lines"


def test_every_lesson_has_its_exercises_and_misconceptions_side_by_side():
    lessons = sorted(p for p in (PACKAGE / "lessons").iterdir() if p.name.startswith("lesson"))
    assert [p.name for p in lessons] == [f"lesson{n:02d}" for n in range(len(lessons))]
    for folder in lessons:
        assert sorted(p.name for p in folder.glob("*.py")) == [
            "__init__.py",
            "exercises.py",
            "misconceptions.py",
        ], folder.name


def test_the_public_api_and_the_old_plugin_name_still_import():
    for name in course_helpers.__all__:
        assert getattr(course_helpers, name) is not None
    old = importlib.import_module("course_helpers.pytest_plugin")
    new = importlib.import_module("course_helpers.testing.pytest_plugin")
    for hook in new.__all__:
        assert getattr(old, hook) is getattr(new, hook)


def test_every_folder_is_a_regular_package_so_an_install_ships_it():
    # setuptools' find_packages (pyproject.toml) skips folders without __init__.py
    folders = {p.parent for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    missing = sorted(
        str(f.relative_to(PACKAGE)) for f in folders if not (f / "__init__.py").exists()
    )
    assert missing == []
