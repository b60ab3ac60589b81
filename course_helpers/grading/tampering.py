"""What a submission may have tampered with: code that reaches into the checker or torch
(flagged for review), and the course package's own files (snapshotted, restored, named)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from course_helpers.checking import syntax_trees

PACKAGE = Path(__file__).resolve().parents[1]  # course_helpers/

UNREADABLE = "the review scan could not read it (nested too deeply or too large): read it by hand"


_SUSPECT_NAMES = {
    "reference": "reads an exercise's reference answer (.reference)",
    "build_reference": "reads an exercise's reference answer (.build_reference)",
    "COURSE_GRADING_DIR": "touches COURSE_GRADING_DIR",
    "modules": "touches sys.modules",
    "_grader_log": "touches the checker's answer log",
    "dump_for_grader": "touches the grader's answer channel",
    "collect": "touches course internals (collect)",
    "judge": "touches course internals (judge)",
    "getppid": "looks up its parent process",
    "kill": "sends signals to processes",
    "killpg": "sends signals to processes",
    "fork": "forks processes",
    "setsid": "detaches processes",
    "Popen": "starts other processes",
    "system": "starts other processes",
}


_COURSE_MODULES = ("course_helpers.checking", "course_helpers.lessons", "course_helpers.records")


# names honest code uses for its own variables (only `.reference` as an attribute is flagged)
_COMMON_NAMES = {"modules", "reference"}


# what the course's own exercise notebooks import from those modules (not internals)
_NOTEBOOK_HELPERS = {"course_helpers.lessons.lesson13.exercises.run_on_two_ranks"}


_TORCH_COMPARISONS = {"allclose", "equal", "isclose", "eq", "testing", "__eq__"}


def suspicious_code(notebook) -> list[str]:
    """Reasons (each once) to look at a notebook by hand: code cells that touch the course's
    internals, ``COURSE_GRADING_DIR``, ``sys.modules``, torch's comparisons or the references.
    A flag for a person to read, not a verdict: honest code can trip it."""
    import ast

    found: dict[str, None] = {}
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        source = "\n".join(
            "pass" if line.lstrip().startswith(("%", "!")) else line
            for line in cell.source.splitlines()
        )
        try:
            tree = syntax_trees.build(source)
        except SyntaxError:
            continue
        except (RecursionError, MemoryError, ValueError, SystemError):  # one cell's cost only
            found.setdefault(f"cell {number}: {UNREADABLE}", None)
            continue
        for node in ast.walk(tree):
            reason = _suspect(node)
            if reason:
                found.setdefault(f"cell {number}: {reason}", None)
    return list(found)


def _suspect(node) -> str:
    import ast

    if isinstance(node, ast.Attribute) and node.attr in _SUSPECT_NAMES:
        return _SUSPECT_NAMES[node.attr]
    if isinstance(node, ast.Name) and node.id in _SUSPECT_NAMES and node.id not in _COMMON_NAMES:
        return _SUSPECT_NAMES[node.id]
    if isinstance(node, ast.Constant) and node.value == "COURSE_GRADING_DIR":
        return _SUSPECT_NAMES["COURSE_GRADING_DIR"]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if "course_helpers/" in node.value or "site-packages" in node.value:
            return "names a path inside the installed course package"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        module = getattr(node, "module", None) or ""
        names = [module] + [f"{module}.{a.name}" if module else a.name for a in node.names]
        if any(n.startswith(_COURSE_MODULES) and n not in _NOTEBOOK_HELPERS for n in names[1:]):
            return "imports course internals"
    targets = []
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("setattr", "delattr"):
        targets = node.args[:2]
    for target in targets:
        text = ast.unparse(target)
        if (
            text == "check"
            or text.startswith(("torch.", "course_helpers", "check."))
            or any(f".{name}" in text or text == name for name in _TORCH_COMPARISONS)
        ):
            return f"replaces {text} (a monkeypatch of torch or the checker)"
        if isinstance(target, ast.Constant) and target.value in _TORCH_COMPARISONS:
            return f"replaces {target.value} (a monkeypatch of torch)"
    return ""


def compile_package(root: Path | None = None) -> None:
    """Where this Python writes bytecode, write the course package's now, before the snapshot,
    at every optimisation level (``-O`` and ``-OO`` write files of their own): another
    process of this Python that imports a module the grader did not (an instructor's second
    command during a long batch) then finds it current and writes none, which the tampering
    check would count as a file added to the package. Only regular files are compiled (a
    link's target may lie outside the package); a package this user cannot write to is left
    as it is."""
    if sys.dont_write_bytecode:
        return
    import compileall

    for path in _files(PACKAGE if root is None else root):
        if path.suffix == ".py" and not path.is_symlink() and "__pycache__" not in path.parts:
            compileall.compile_file(path, quiet=2, optimize=[0, 1, 2])


def package_snapshot(root: Path | None = None) -> dict[Path, bytes]:
    """The bytes of every file of the course package, ``__pycache__`` included (a planted
    ``.pyc`` runs as the module it shadows), taken when grading starts."""
    root = PACKAGE if root is None else root
    return {p: p.read_bytes() for p in _files(root) if not p.is_symlink()}


def _files(root: Path) -> list[Path]:
    """Every file and link under ``root`` (links are never followed)."""
    return sorted(p for p in root.rglob("*") if p.is_symlink() or p.is_file())


def restore_package(snapshot: dict[Path, bytes], root: Path | None = None) -> list[str]:
    """Put back any package file a submission changed, added or deleted; names them."""
    root = PACKAGE if root is None else root
    changed = []
    for path in _files(root):
        if path not in snapshot:
            try:
                path.unlink()
            except OSError:
                pass
            changed.append(f"added {path.relative_to(root.parent)}")
    for path, data in snapshot.items():
        try:
            same = not path.is_symlink() and path.read_bytes() == data
        except OSError:
            same = False
        if not same:
            try:
                if path.is_symlink() or path.is_dir():
                    path.unlink() if path.is_symlink() else shutil.rmtree(path)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                changed.append(f"changed {path.relative_to(root.parent)}")
            except OSError as err:
                changed.append(f"changed {path.relative_to(root.parent)} (NOT restored: {err})")
    return changed
