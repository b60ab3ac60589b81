"""Two checks of what a task demands besides the value (both feed ``method_checks``' record).

- "Keep every line, change their order": the answer cell must hold exactly the task's
  statements (:func:`compare_lines`); an added optimizer or ``add_param_group`` hides the bug
  instead of fixing it.
- A result that must stay connected to the parameters (a penalty added to the loss):
  :func:`cut_off_parameters` asks autograd, in the kernel, which parameters its graph misses.
"""

from __future__ import annotations

import ast
from collections import Counter

from course_helpers.checking import syntax_trees

# statements a cell may add freely: the check itself and printing
_FREE_CALLS = ("check", "print", "display")


def statements(tree: ast.AST) -> list[str]:
    """Every statement of ``tree`` as one normalised line (comments and layout dropped); a
    compound statement counts as its header line plus the statements inside it."""
    lines: list[str] = []
    for node in getattr(tree, "body", []):
        if _is_free(node):
            continue
        inner = [f for f in ("body", "orelse", "finalbody") if getattr(node, f, None)]
        if inner or isinstance(node, ast.Try):
            lines.append(ast.unparse(node).splitlines()[0])
            for name in inner:
                lines.extend(statements(ast.Module(body=getattr(node, name), type_ignores=[])))
            for handler in getattr(node, "handlers", []):
                lines.append(ast.unparse(handler).splitlines()[0])
                lines.extend(statements(handler))
        else:
            lines.append(ast.unparse(node))
    return lines


def _is_free(node: ast.stmt) -> bool:
    """``check(...)``/``print(...)`` calls and ``name = ...`` stubs are not task lines."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return isinstance(func, ast.Name) and func.id in _FREE_CALLS
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
        return node.value.value is Ellipsis
    return False


def compare_lines(task_code: str, tree: ast.AST, cells_run=()) -> dict:
    """The statements the check's cell (``tree``) adds to the task's code, and those that
    neither it nor any other cell run for the exercise (``cells_run``) has."""
    wanted, mine = Counter(statements(syntax_trees.build(task_code))), Counter(statements(tree))
    everywhere = Counter(mine)
    for other in cells_run:
        if other is not tree:
            everywhere |= Counter(statements(other))
    return {
        "extra_lines": sorted((mine - wanted).elements()),
        "missing_lines": sorted((wanted - everywhere).elements()),
    }


def call_notes(exercise, record: dict) -> list[str]:
    """Too few calls of a torch function the task asks for (``Exercise.min_calls``), for
    the first test input that falls short."""
    calls = record.get("calls")
    wanted = getattr(exercise, "min_calls", None) or {}
    if not isinstance(calls, list) or not wanted:
        return []
    from course_helpers.environment.notebook import cpu_generator
    from course_helpers.lessons.model import CASE_SEED, fresh_rng

    cases = fresh_rng(lambda: exercise.cases(cpu_generator(CASE_SEED)))
    for number, (args, made) in enumerate(zip(cases, calls, strict=False), start=1):
        for names, (least, why) in wanted.items():
            need = least(*args) if callable(least) else least
            got = sum(int(made.get(name, 0)) for name in names.split("|"))
            if got < need:
                shown = " or ".join(f"`{_CALLED.get(n, n)}()`" for n in names.split("|"))
                did = f"never calls {shown}" if got == 0 else f"calls {shown} {_times(got)}"
                return [
                    f"For input {number}, your function {did}; the task asks for {why}: "
                    f"{_times(need)} here."
                ]
    return []


_CALLED = {"grad": "torch.autograd.grad"}  # how a counted name reads in a sentence


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def cut_off_parameters(exercise, function) -> dict:
    """For the first test input whose result misses some: which parameters (of the module
    arguments) the result's graph does not reach, as {"input": n, "names": [...]}; {} when
    every result reaches them all (or the probe cannot run)."""
    import torch

    from course_helpers.environment.notebook import cpu_generator
    from course_helpers.lessons.model import fresh_rng

    try:
        cases = fresh_rng(lambda: exercise.cases(cpu_generator(0)))
    except Exception:
        return {}
    for number, args in enumerate(cases, start=1):
        params = [
            (name, p)
            for arg in args
            if isinstance(arg, torch.nn.Module)
            for name, p in arg.named_parameters()
            if p.requires_grad
        ]
        try:
            result = function(*args)
        except Exception:
            continue  # its error is judged from the ordinary run
        if not params:
            continue
        if isinstance(result, torch.Tensor) and result.grad_fn is not None:
            grads = torch.autograd.grad(result.sum(), [p for _, p in params], allow_unused=True)
            cut = [name for (name, _), grad in zip(params, grads, strict=True) if grad is None]
        else:
            cut = [name for name, _ in params]
        if cut:
            return {"input": number, "names": cut}
    return {}


def line_notes(record: dict) -> list[str]:
    """What the record's line and graph findings say is wrong (one text per finding)."""
    notes = []
    extra, missing = record.get("extra_lines") or [], record.get("missing_lines") or []
    if extra:
        notes.append(
            f"Your cell has {_lines(extra)} that the task's code does not have. The task is to "
            "keep every line and change only their order: an added line (another optimizer, "
            "an add_param_group) works around the bug instead of fixing it."
        )
    if missing:
        notes.append(
            f"Your cell lacks {_lines(missing)} of the task's code. Keep every line; change "
            "only their order."
        )
    order = record.get("step_order")
    if order in STEP_ORDER_NOTES:
        notes.append(STEP_ORDER_NOTES[order])
    wrong = record.get("wrong_leaf_grads")
    if wrong:
        notes.append(
            f"The graph behind your tensor leads to {_count(wrong, 'tensor')} it was made from "
            f"whose .grad is wrong ({'; '.join(wrong)}): part of the computation after it was "
            "cut off from autograd (a .detach(), .item() or a copy). Build every later step "
            "from the tensors themselves, so backward() follows every path."
        )
    cut = record.get("cut_off") or {}
    if cut.get("names"):
        names = ", ".join(cut["names"])
        notes.append(
            f"For input {cut['input']}, the graph of your function's result does not reach "
            f"{names}: backward() from it gives {_them(cut['names'])} no gradient. Added to a "
            "loss, it then leaves those parameters out of every update, so training with it goes "
            "subtly wrong and later results differ by small, unexplained amounts. Build every "
            "term from the parameters themselves with tensor operations, so autograd can "
            "follow it back to each one."
        )
    return notes


def _lines(lines: list[str]) -> str:
    shown = "; ".join(f"`{line}`" for line in lines[:3])
    more = f" and {len(lines) - 3} more" if len(lines) > 3 else ""
    noun = "this line" if len(lines) == 1 else f"these {len(lines)} lines"
    return f"{noun} ({shown}{more})"


def _them(names: list[str]) -> str:
    return "it" if len(names) == 1 else "them"


# ----------------------------------------------------------------- leaves' gradients


def leaf_grads(tensor) -> list | None:
    """The .grad of every leaf the graph behind ``tensor`` reaches (graph order, each once);
    None when ``tensor`` has no graph."""
    import torch

    from course_helpers.records import describe

    if not isinstance(tensor, torch.Tensor) or tensor.grad_fn is None:
        return None
    grads, seen, queue = [], set(), [tensor.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)  # an AccumulateGrad node: a leaf
        if variable is not None:
            grads.append(describe(variable.grad))
        queue.extend(next_node for next_node, _ in node.next_functions)
    return grads


def wrong_leaf_grads(got: list | None, reference) -> list[str]:
    """The leaf gradients in ``got`` that match none of the reference's (as short texts)."""
    from course_helpers.checking.values import all_close
    from course_helpers.records import fmt_values, kind_of

    wanted = leaf_grads(reference) or []
    if got is None or not wanted:
        return []

    def same(a, b) -> bool:
        if kind_of(a) != "tensor" or kind_of(b) != "tensor" or a["shape"] != b["shape"]:
            return kind_of(a) == kind_of(b) == "none"
        return all_close(a["data"].double(), b["data"].double())

    wrong = []
    for grad in got:
        if not any(same(grad, w) for w in wanted):
            wrong.append("None" if kind_of(grad) == "none" else fmt_values(grad["data"]))
    return wrong


def _count(items: list, noun: str) -> str:
    return f"a {noun}" if len(items) == 1 else f"{len(items)} {noun}s"


# ----------------------------------------------------------------- a training step's order

STEP_ORDER_NOTES = {
    "step_before_backward": (
        "Your code calls step() before backward(): step() runs before this iteration's "
        "gradients exist and applies whatever .grad holds then (the previous iteration's, or "
        "nothing after zero_grad()). The order of one training step is zero_grad(), forward "
        "and loss, backward(), step()."
    ),
    "zero_grad_between": (
        "Your code calls zero_grad() after backward() and before step(): it erases the "
        "gradients backward() just computed, so step() has nothing to apply. Clear the old "
        "gradients before backward() (or after step())."
    ),
}


def step_order(tree) -> str:
    """A training step's calls in the wrong order, read from the code: "step_before_backward",
    "zero_grad_between" or "" (in order, or not all there). A scheduler's step() is not the
    optimizer's."""
    import ast

    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owner = ast.unparse(node.func.value).lower()
            if name in ("zero_grad", "backward", "step") and "sched" not in owner:
                calls.append((node.lineno, node.col_offset, name))
    order = [name for _, _, name in sorted(calls)]
    if "backward" not in order or "step" not in order:
        return ""
    first_backward, first_step = order.index("backward"), order.index("step")
    if first_step < first_backward:
        return "step_before_backward"
    if "zero_grad" in order[first_backward:first_step]:
        return "zero_grad_between"
    return ""
