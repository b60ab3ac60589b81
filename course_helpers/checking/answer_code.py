"""The code a learner ran for an exercise, as the method checks read it.

Three readings, each for one question (``method_checks`` chooses):

- :func:`check_cell`: the cell that calls ``check``, as IPython ran it. A *forbidden* method
  is looked for here (and in a checked function's own code): the answer is built here, and
  a scratch cell run later (e.g. the cell after the check that asks autograd) never counts
  against it.
- :func:`cells_run`: what the current answer ran: every distinct cell run since the last
  ``check`` of *another* exercise, in the order they ran (IPython's input history), except the
  earlier attempts of this one. A *required* method may sit in any of them: a hook registered
  one cell earlier, a helper defined above (also when only the check's cell is run again).
  An earlier cell that checked this same exercise is an attempt the current one replaces (in
  JupyterLab, usually the same cell before it was edited): a call made there no longer counts,
  so typed numbers after a try with the right tool are read as typed numbers. Only a cell that
  does nothing but check again reads the attempt before it, which built the answer.
- :func:`function_sources`: a checked function's own source and that of the notebook's
  functions it calls (two levels deep), e.g. ``evaluate`` behind ``evaluate_probe``.

The grader runs a notebook top to bottom in a kernel, so it reads the same cells the same
way; only the findings (plain strings) travel in the submission. Outside IPython there is no
history: every reading is empty and the record says "not checked".
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from typing import Any

# the last check seen in this kernel: {"history": id of the history list, "index": its cell,
# "exercise": its id, "start": where that exercise's cells begin}
_last: dict[str, Any] = {}


def _history() -> list[str] | None:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return history if isinstance(history, list) and history else None


def check_cell() -> str:
    """The source of the cell being run ("" outside IPython)."""
    history = _history()
    return history[-1] if history else ""


def current_cell() -> str:
    """The cell being run: from the input history, else from the kernel's execute request
    (a cell run with ``store_history=False``, as nbval runs them, is in no history)."""
    return check_cell() or executing_cell()


def executing_cell() -> str:
    """The code of the cell the kernel is running, from the execute request itself: IPython
    keeps no history of a cell run with ``store_history=False`` (as nbval runs them)."""
    import sys

    if "IPython" not in sys.modules:
        return ""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if get_parent is None:  # a terminal IPython: no kernel, no request
        return ""
    try:
        parent = get_parent("shell")
    except TypeError:  # an ipykernel older than 6
        parent = getattr(kernel, "_parent", None)
    content = parent.get("content") if isinstance(parent, dict) else None
    code = content.get("code") if isinstance(content, dict) else None
    return code if isinstance(code, str) else ""


def _window_start(exercise_id: str, history: list[str]) -> int:
    index = len(history) - 1
    same_history = _last.get("history") == id(history) and _last.get("index", -1) <= index
    if not same_history:
        return 1  # the first check in this kernel (input_hist_raw[0] is always "")
    if _last.get("exercise") == exercise_id:
        return _last["start"]
    return min(_last["index"] + 1, index)


def cells_run(exercise_id: str) -> list[str]:
    """The cells the current answer ran (see the module docstring), the check's cell last
    ([] outside IPython). A cell run twice unchanged counts once."""
    history = _history()
    if not history:
        return []
    start = _window_start(exercise_id, history)
    current, earlier = history[-1], history[start:-1]
    attempts = [i for i, source in enumerate(earlier) if checks_exercise(source, exercise_id)]
    kept = set(attempts[-1:]) if attempts and _only_checks(current, exercise_id) else set()
    cells: list[str] = []
    for index, source in enumerate([*earlier, current]):
        if index in attempts and index not in kept:
            continue  # an earlier attempt of this exercise: replaced by the current one
        if source in cells:
            cells.remove(source)
        cells.append(source)
    return cells


def checks_exercise(source: str, exercise_id: str) -> bool:
    """``source`` calls ``check`` on ``exercise_id`` (a literal id, as the notebooks write it)."""
    return re.search(rf"\bcheck\(\s*(['\"]){re.escape(exercise_id)}\1", source) is not None


def _only_checks(source: str, exercise_id: str) -> bool:
    """Every statement of ``source`` is a call of ``check`` (or ``hint``) on ``exercise_id``:
    the cell checks again an answer that an earlier cell built."""
    from course_helpers.checking.code_patterns import parse

    tree = parse(source)
    if tree is None or not tree.body:
        return False
    return all(
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id in ("check", "hint", "print", "display")
        for statement in tree.body
    ) and checks_exercise(source, exercise_id)


def note_check(exercise_id: str) -> None:
    """Remember this check (called by ``check`` once the answer is collected): the next
    exercise's cells begin after this cell."""
    history = _history()
    if not history:
        return
    start = _window_start(exercise_id, history)
    _last.update(history=id(history), index=len(history) - 1, exercise=exercise_id, start=start)


def forget() -> None:
    """Start afresh (tests; a new kernel starts so anyway)."""
    _last.clear()


def function_sources(function, depth: int = 2) -> list[str]:
    """The source of ``function`` and of the notebook functions it calls (``depth`` levels),
    each once; [] when the source cannot be read."""
    sources: list[str] = []
    seen: set[int] = set()

    def visit(item, level: int) -> None:
        if id(item) in seen or not inspect.isfunction(item):
            return
        seen.add(id(item))
        if not written_by_learner(item):
            return
        try:
            sources.append(textwrap.dedent(inspect.getsource(item)))
        except (OSError, TypeError):
            return
        if level < depth:
            for used in _globals_used(item):
                visit(used, level + 1)

    visit(function, 0)
    return sources


def written_by_learner(function) -> bool:
    """A function of the notebook (or a script), not of torch or of the course."""
    module = getattr(function, "__module__", "") or ""
    return not module.startswith(("torch", "course_helpers", "numpy"))


def _globals_used(function) -> list:
    """The global objects a function's code names, nested functions' names included."""
    code = getattr(function, "__code__", None)
    names = getattr(function, "__globals__", None)
    if code is None or not isinstance(names, dict):
        return []
    found, stack = [], [code]
    while stack:
        current = stack.pop()
        found.extend(names[n] for n in current.co_names if n in names)
        stack.extend(c for c in current.co_consts if inspect.iscode(c))
    return found
