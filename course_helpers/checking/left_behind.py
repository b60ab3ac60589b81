"""What a learner's function leaves behind when it returns, besides its result.

``call_and_record`` takes a :func:`snapshot` before each call and :func:`restore` after it:
the kernel-wide switches (gradient recording, anomaly detection, the default dtype) and the
notebook's globals the function names (rebinding one with ``global``, changing a global
tensor in place). Whatever changed is put back, so the checker's own calls never change the
learner's notebook, and named in the run's record (``"left_behind"``), e.g.
``["grad_mode_off"]``, ``["global:FEATURE_MEAN"]``; ``function_judge`` explains each.

A cell leaves state behind too: :func:`notebook_state` reads, when ``check`` runs, whether
gradient recording is off in the notebook (outside a ``with`` block around the check) and
which statement of the answer's cells switched it off, if they show one;
:func:`notebook_state_text` says it. The checker itself computes in a fresh kernel's state
(``lessons.model.known_state``), so that state changes no verdict but this one.
"""

from __future__ import annotations

import ast
import dis
import inspect

_MISSING = object()
_MAX_COPIED = 1_000_000  # a larger global tensor changed in place is named, not put back


def snapshot(function) -> dict:
    import torch

    names = _globals_named(function)
    saved = {}
    for namespace, name in names:
        value = namespace.get(name, _MISSING)
        copy = None
        if isinstance(value, torch.Tensor) and value.device.type != "meta":
            small = value.numel() <= _MAX_COPIED
            copy = (value._version, value.detach().clone() if small else None)
        saved[(id(namespace), name)] = (namespace, value, copy)
    return {
        "grad": torch.is_grad_enabled(),
        "anomaly": torch.is_anomaly_enabled(),
        "dtype": torch.get_default_dtype(),
        "globals": saved,
    }


def restore(state: dict) -> list[str]:
    """Put back what changed since :func:`snapshot`; what it was, as short codes."""
    import torch

    left = []
    if torch.is_grad_enabled() != state["grad"]:
        left.append("grad_mode_off" if state["grad"] else "grad_mode_on")
        torch.set_grad_enabled(state["grad"])
    if torch.is_anomaly_enabled() != state["anomaly"]:
        left.append("anomaly_on" if not state["anomaly"] else "anomaly_off")
        torch.autograd.set_detect_anomaly(state["anomaly"])
    if torch.get_default_dtype() != state["dtype"]:
        left.append(f"default_dtype:{str(torch.get_default_dtype()).removeprefix('torch.')}")
        torch.set_default_dtype(state["dtype"])
    for (_, name), (namespace, value, copy) in state["globals"].items():
        now = namespace.get(name, _MISSING)
        if now is not value:
            left.append(f"global:{name}")
            if value is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = value
        elif copy is not None and value._version != copy[0]:
            left.append(f"global_tensor:{name}")
            kept = copy[1]
            if kept is not None and value.shape == kept.shape and value.dtype == kept.dtype:
                with torch.no_grad():
                    value.copy_(kept)
    return left


def _globals_named(function, depth: int = 2) -> list[tuple[dict, str]]:
    """(globals dict, name) for every global name ``function`` (and the notebook functions it
    calls) reads or assigns."""
    found: dict[tuple[int, str], tuple[dict, str]] = {}
    seen: set[int] = set()

    def visit(item, level: int) -> None:
        if id(item) in seen or not inspect.isfunction(item):
            return
        seen.add(id(item))
        module = getattr(item, "__module__", "") or ""
        if module.startswith(("torch", "course_helpers", "numpy")):
            return
        namespace = item.__globals__
        for name in _names(item.__code__):
            found.setdefault((id(namespace), name), (namespace, name))
            if level < depth and inspect.isfunction(namespace.get(name)):
                visit(namespace[name], level + 1)

    visit(function, 0)
    return list(found.values())


def _names(code) -> list[str]:
    """Global names a code object (and its nested code) loads or stores."""
    names: list[str] = []
    stack = [code]
    while stack:
        current = stack.pop()
        for instruction in dis.get_instructions(current):
            if instruction.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL"):
                name = instruction.argval
                if isinstance(name, str) and name not in names:
                    names.append(name)
        stack.extend(c for c in current.co_consts if inspect.iscode(c))
    return names


# --------------------------------------------------------------------------- a cell's state

_STATEFUL_KINDS = ("value", "autograd", "function")  # answers that torch computed


def notebook_state(exercise) -> dict | None:
    """What the notebook left switched when ``check`` runs, as a plain record, or None when
    nothing is: ``{"grad_mode": False, "switch": "torch.set_grad_enabled(False)"}``
    (``switch``: the statement of the answer's cells that does it, "" when they show none).
    A check called inside a ``with`` block (or a function) is not read: the block may well
    switch recording back on when it ends."""
    import torch

    if exercise.kind not in _STATEFUL_KINDS or torch.is_grad_enabled():
        return None
    from course_helpers.checking import answer_code

    cell = answer_code.current_cell()
    if _called_inside_a_block(cell, exercise.id):
        return None
    switches = []
    for source in answer_code.cells_run(exercise.id) or [cell]:
        switches.extend(grad_switches(source))
    return {"grad_mode": False, "switch": switches[-1] if switches else ""}


GRAD_OFF_BY_CODE = (
    "Gradient recording is still switched off after your code ran: `{switch}` is not a "
    "`with` block, so it stays in force for the rest of the notebook, and every later cell "
    "silently records no graph (a later backward() fails, a training loop learns nothing). "
    "Run `torch.set_grad_enabled(True)` once to switch it back on, and put the part that must "
    "not record in a block, `with torch.no_grad():`, which switches recording back on when it "
    "ends."
)
GRAD_OFF_EARLIER = (
    "Gradient recording is switched off in your notebook now, and the cells read for this "
    "answer do not switch it off: code run earlier in this kernel left it off (for example "
    "`torch.set_grad_enabled(False)` outside a `with` block), so every later cell silently "
    "records no graph. Run `torch.set_grad_enabled(True)` once to switch it back on; a "
    "`with torch.no_grad():` block switches it back on by itself when it ends."
)


def notebook_state_text(state) -> str:
    """What a :func:`notebook_state` record means, as a paragraph ("" for nothing wrong)."""
    if not isinstance(state, dict) or state.get("grad_mode") is not False:
        return ""
    switch = state.get("switch")
    if isinstance(switch, str) and switch:
        return GRAD_OFF_BY_CODE.format(switch=switch)
    return GRAD_OFF_EARLIER


_GRAD_SWITCHES = ("set_grad_enabled", "_set_grad_enabled")
_GRAD_BLOCKS = ("no_grad", "inference_mode", "set_grad_enabled")


def grad_switches(source: str) -> list[str]:
    """The statements of ``source`` that switch gradient recording off for good, as written:
    ``torch.set_grad_enabled(False)`` called outside ``with`` (or a decorator), and a
    ``no_grad()`` / ``inference_mode()`` entered by hand (``.__enter__()``)."""
    from course_helpers.checking.code_patterns import parse

    tree = parse(source)
    if tree is None:
        return []
    managed = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            managed.update(id(item.context_expr) for item in node.items)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            managed.update(id(d) for d in node.decorator_list)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in managed:
            continue
        name = _called_name(node.func)
        switched_off = name in _GRAD_SWITCHES and not (
            node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is True
        )
        entered = (
            name == "__enter__"
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call)
            and _called_name(node.func.value.func) in _GRAD_BLOCKS
        )
        if switched_off or entered:
            found.append(ast.unparse(node))
    return found


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _called_inside_a_block(source: str, exercise_id: str) -> bool:
    """``check(exercise_id, ...)`` in ``source`` sits inside a ``with`` block or a function."""
    from course_helpers.checking.code_patterns import parse

    tree = parse(source)
    if tree is None:
        return False
    for outer in ast.walk(tree):
        if not isinstance(outer, (ast.With, ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(outer):
            if node is not outer and _checks(node, exercise_id):
                return True
    return False


def _checks(node: ast.AST, exercise_id: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and _called_name(node.func) == "check"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == exercise_id
    )
