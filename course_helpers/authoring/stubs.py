"""Turn a solution notebook into an exercise notebook (solution regions -> stubs)."""

from __future__ import annotations

import ast
import copy
import re
import textwrap

from course_helpers.checking import syntax_trees

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB_COMMENT = "# YOUR CODE HERE"
MARKDOWN_STUB = "_Your answer here._"
DROP_TAG = "solution-only"


class MarkerError(ValueError):
    """Solution markers in a cell are unbalanced or nested."""


def _assigned_names(code: str) -> list[str] | None:
    """Names a region assigns at its top level, in order; None if it does not parse."""
    try:
        tree = syntax_trees.build(textwrap.dedent(code))
    except SyntaxError:
        return None
    names: list[str] = []

    def add_target(target):
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                add_target(element)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                add_target(target)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            add_target(node.target)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
    return list(dict.fromkeys(names))


def _code_stub(region: list[str], indent: str) -> list[str]:
    if indent:  # inside a block (a function body, a loop): its locals are not the answer
        return [f"{indent}...  {STUB_COMMENT}"]
    names = _assigned_names("\n".join(region))
    if not names:
        return [f"{indent}...  {STUB_COMMENT}"]
    return [f"{indent}{name} = ...  {STUB_COMMENT}" for name in names]


def strip_solution(source: str, *, markdown: bool, where: str) -> tuple[str, int]:
    """Replace every solution region of one cell's source; return (new_source, regions)."""
    lines = source.split("\n")
    out: list[str] = []
    region: list[str] | None = None
    indent = ""
    count = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped == BEGIN:
            if region is not None:
                raise MarkerError(f"{where}, line {number}: '{BEGIN}' inside an open region")
            region = []
            indent = re.match(r"\s*", line).group(0)
            continue
        if stripped == END:
            if region is None:
                raise MarkerError(f"{where}, line {number}: '{END}' without a '{BEGIN}'")
            out.extend([MARKDOWN_STUB] if markdown else _code_stub(region, indent))
            region = None
            count += 1
            continue
        if region is not None:
            region.append(line)
        else:
            out.append(line)
    if region is not None:
        raise MarkerError(f"{where}: '{BEGIN}' is never closed by '{END}'")
    return "\n".join(out), count


def make_exercise_notebook(solution_nb, *, name: str):
    """A new notebook: regions stubbed, solution-only cells dropped, outputs cleared."""
    nb = copy.deepcopy(solution_nb)
    cells = []
    defined: set[str] = set()  # functions and classes earlier cells define
    for index, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if DROP_TAG in tags:
            continue
        where = f"{name}, cell {index}"
        if cell.cell_type in ("code", "markdown"):
            cell.source, regions = strip_solution(
                cell.source, markdown=cell.cell_type == "markdown", where=where
            )
            if cell.cell_type == "code":
                _check_no_shadowing(cell.source, defined, where, stubbed=regions > 0)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    nb.cells = cells
    nb.metadata.pop("course", None)
    return nb


def _check_no_shadowing(source: str, defined: set[str], where: str, *, stubbed: bool) -> None:
    """An unanswered stub must never replace a function or class that an earlier cell
    defines and later cells rely on (issue 24: lesson 12's script). Such a stub needs
    ``@repair``, which keeps the earlier version until the learner writes a body."""
    try:
        tree = syntax_trees.build(source)
    except SyntaxError:
        return
    for node in tree.body:
        names = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            empty = len(node.body) == 1 and _is_ellipsis(node.body[0])
            repaired = any(ast.unparse(d) == "repair" for d in node.decorator_list)
            if stubbed and empty and node.name in defined and not repaired:
                raise MarkerError(
                    f"{where}: the stub of {node.name} would replace the {node.name} an "
                    "earlier cell defines; decorate it with @repair"
                )
            names.append(node.name)
        elif stubbed and isinstance(node, ast.Assign) and _is_ellipsis(node):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in defined:
                    raise MarkerError(
                        f"{where}: the stub `{target.id} = ...` would replace the "
                        f"{target.id} an earlier cell defines; stub its body under @repair"
                    )
        defined.update(names)


def _is_ellipsis(node) -> bool:
    value = getattr(node, "value", None)
    return isinstance(value, ast.Constant) and value.value is Ellipsis


def find_leaks(solution_nb, exercise_nb) -> list[str]:
    """Solution-region lines that appear in the exercise notebook (and nowhere else)."""
    region_lines, outside_lines = set(), set()
    for cell in solution_nb.cells:
        inside = False
        for line in cell.source.split("\n"):
            stripped = line.strip()
            if stripped in (BEGIN, END):
                inside = stripped == BEGIN
            elif stripped:
                (region_lines if inside else outside_lines).add(stripped)
    exercise_lines = {
        line.strip() for cell in exercise_nb.cells for line in cell.source.split("\n")
    }
    return sorted((region_lines - outside_lines) & exercise_lines)
