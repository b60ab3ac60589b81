"""The code a learner ran for an exercise, as the method checks read it.

Three readings, each for one question (``method_checks`` chooses):

- :func:`check_cell`: the cell that calls ``check``, as IPython ran it. A *forbidden* method
  is looked for here (and in a checked function's own code): the answer is built here, and
  a scratch cell run later (e.g. the cell after the check that asks autograd) never counts
  against it.
- :func:`cells_run`: every distinct cell run since the last ``check`` of *another* exercise,
  the check's cell included, in the order they ran (IPython's input history). A *required*
  method may sit in any of them: a hook registered one cell earlier, a helper defined above.
  Cells run between two attempts of the same exercise stay in, so a second attempt that only
  re-runs the check's cell is read like the first.
- :func:`function_sources`: a checked function's own source and that of the notebook's
  functions it calls (two levels deep), e.g. ``evaluate`` behind ``evaluate_probe``.

The grader runs a notebook top to bottom in a kernel, so it reads the same cells the same
way; only the findings (plain strings) travel in the submission. Outside IPython there is no
history: every reading is empty and the record says "not checked".
"""

from __future__ import annotations

import inspect
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


def _window_start(exercise_id: str, history: list[str]) -> int:
    index = len(history) - 1
    same_history = _last.get("history") == id(history) and _last.get("index", -1) <= index
    if not same_history:
        return 1  # the first check in this kernel (input_hist_raw[0] is always "")
    if _last.get("exercise") == exercise_id:
        return _last["start"]
    return min(_last["index"] + 1, index)


def cells_run(exercise_id: str) -> list[str]:
    """Every distinct cell run since the last check of another exercise, the check's cell
    last ([] outside IPython). A cell run twice unchanged counts once."""
    history = _history()
    if not history:
        return []
    start = _window_start(exercise_id, history)
    cells: list[str] = []
    for source in history[start:]:
        if source in cells:
            cells.remove(source)
        cells.append(source)
    return cells


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
