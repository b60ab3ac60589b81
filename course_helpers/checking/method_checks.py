"""Method checks: does the learner's code use the method the task prescribes?

An exercise declares what it forbids or requires (``Exercise.forbid`` / ``Exercise.require``,
patterns such as ``"attr:data"``, ``"call:detach"``, ``"call:squeeze()"``, ``"with:no_grad"``,
``"op:matmul"`` for the ``@`` operator)
and whether it must build no autograd graph (``Exercise.must_build_no_graph``).

:func:`inspect_answer` runs in the learner's kernel (called by ``collect``): it reads the code
with :mod:`ast` (a function's own source, or the answer cell through IPython's input
history) and, for a function that must build no graph, calls it once more on the exercise's
cases while counting the operations that record a ``grad_fn``. It returns a plain record
(strings, ints, bools) that travels in the submission, so the grader judges the same
findings outside the kernel. Outside IPython the source of a cell cannot be read: the
record then says "not checked" and nothing fails for it.
"""

from __future__ import annotations

import ast
from typing import Any

# pattern -> why it is not the course's way (shown to the learner)
WHY = {
    "attr:data": (
        "`.data` changes values behind autograd's back (no error, silently wrong gradients): "
        "the course uses `with torch.no_grad():` instead."
    ),
    "call:detach": (
        "`.detach()` after the forward pass still records the whole graph first and only cuts "
        "it off at the end: compute under `with torch.no_grad():` so nothing is recorded."
    ),
    "call:squeeze()": (
        "`.squeeze()` with no dim removes every size-1 dim, including one a batch of one "
        "example needs: name the dim, e.g. `.squeeze(1)`."
    ),
    "with:no_grad": "the task asks for a `with torch.no_grad():` block, and your code has none.",
    "with:no_grad|inference_mode": (
        "the task asks for a block that records no graph, `with torch.no_grad():` (or "
        "`with torch.inference_mode():`), and your code has none."
    ),
    "call:register_hook": (
        "the task asks you to halve the gradient with a hook on u (`u.register_hook(...)`, "
        "registered before backward()): a changed formula gives the same number here, but "
        "it is not the technique the exercise practises."
    ),
    "call:grad": (
        "the task asks for the derivatives from `torch.autograd.grad` (with "
        "create_graph=True), not from a formula typed by hand."
    ),
    "call:backward": (
        "the task asks you to call `.backward()` on the second derivative, so that autograd "
        "itself fills x.grad."
    ),
    "call:backward|grad": (
        "the task asks for the gradient from autograd (`loss.backward()` or "
        "`torch.autograd.grad`), not from a formula typed by hand."
    ),
    "call:isfinite": (
        "the task asks for `torch.isfinite` on a float64 tensor of the losses, so that "
        "`inf`, `-inf` and `nan` are all found in one vectorised test."
    ),
    "call:barrier": (
        "the task asks that no rank reads the file before it is complete: a "
        "`dist.barrier()` between rank 0's save and the loads makes the others wait. Without "
        "it the run can pass by luck, as here, and fail on another machine."
    ),
    "call:all_reduce": (
        "the task asks the ranks to add up their loss sums and sample counts with "
        "`dist.all_reduce`, and your code has no `all_reduce` call: each rank must end with "
        "the same exact mean, computed from what every rank holds."
    ),
    # integer matrix products: the CPU has them, CUDA does not (torch 2.x)
    **dict.fromkeys(
        ("op:matmul", "call:matmul", "call:mm"),
        "the task asks for a column and a row combined by broadcasting (`*`), not for a "
        "matrix product. On integer tensors a matrix product runs on the CPU only: PyTorch has "
        "no CUDA kernel for it (`\"addmm_cuda\" not implemented for 'Long'`), so this cell "
        "would stop on a GPU. `*` with broadcasting builds the table on every device.",
    ),
    "call:arange": (
        "the task asks you to make the numbers with `torch.arange`: numbers typed by hand "
        "give the same grid here but do not scale to a grid of a thousand."
    ),
}


KINDS = ("attr", "call", "with", "op")
_OPERATORS = {"matmul": ast.MatMult}  # op:NAME -> the ast operator it names


def valid_pattern(pattern: str) -> bool:
    kind, _, name = pattern.partition(":")
    return kind in KINDS and bool(name)


def wants_inspection(exercise) -> bool:
    return bool(
        getattr(exercise, "forbid", ())
        or getattr(exercise, "require", ())
        or getattr(exercise, "must_build_no_graph", False)
        or getattr(exercise, "keep_lines", "")
        or getattr(exercise, "reach_parameters", False)
        or getattr(exercise, "check_leaf_grads", False)
        or getattr(exercise, "check_step_order", False)
    )


def not_checked() -> dict:
    """The record of an answer whose code was not (or could not be) read."""
    return {"checked": False, "where": "", "found": [], "missing": [], "graph_ops": None}


def inspect_answer(exercise, answer: Any) -> dict:
    """The record ``collect`` stores under ``submission["method"]``."""
    record = not_checked()
    patterns = tuple(exercise.forbid) + tuple(exercise.require)
    if patterns:
        source, where = _source_of(exercise, answer)
        tree = _parse(source)
        if tree is not None:
            used = uses(tree, patterns)
            record.update(
                checked=True,
                where=where,
                found=[p for p in exercise.forbid if p in used],
                missing=[p for p in exercise.require if p not in used],
            )
    if exercise.must_build_no_graph and exercise.kind == "function" and callable(answer):
        record["graph_ops"] = count_graph_ops(exercise, answer)
    if getattr(exercise, "keep_lines", ""):
        from course_helpers.checking.task_checks import compare_lines

        tree = _parse(_current_cell())
        if tree is not None:
            record.update(checked=True, where="answer cell")
            record.update(compare_lines(exercise.keep_lines, tree))
    if getattr(exercise, "check_step_order", False):
        from course_helpers.checking.task_checks import step_order

        source, where = _source_of(exercise, answer)
        tree = _parse(source)
        if tree is not None:
            record.update(checked=True, where=where, step_order=step_order(tree))
    if getattr(exercise, "check_leaf_grads", False):
        from course_helpers.checking.task_checks import leaf_grads

        record["leaf_grads"] = leaf_grads(answer)
    if getattr(exercise, "reach_parameters", False) and callable(answer):
        from course_helpers.checking.task_checks import cut_off_parameters

        record["cut_off"] = cut_off_parameters(exercise, answer)
    return record


def verdict_note(exercise, record: Any, values_right: bool = True) -> str:
    """What the method record says is wrong ("" when nothing is, or nothing was checked).
    A required method that is missing is named only when the values are right: for a wrong
    value it is not the first thing to fix (and "gives the same result" would be untrue)."""
    if not isinstance(record, dict):
        return ""
    notes = []
    for pattern in list(record.get("found", []) or []):
        if pattern in exercise.forbid:
            notes.append(
                f"Your code uses {_shown(pattern)}: {WHY.get(pattern, 'the task forbids it.')}"
            )
    for pattern in list(record.get("missing", []) or []) if values_right else []:
        if pattern in exercise.require:
            text = WHY.get(pattern, f"the task asks for {_shown(pattern)}.")
            notes.append(text[:1].upper() + text[1:])
    from course_helpers.checking.task_checks import line_notes, wrong_leaf_grads

    if getattr(exercise, "check_leaf_grads", False):
        record = {
            **record,
            "wrong_leaf_grads": wrong_leaf_grads(record.get("leaf_grads"), exercise.reference),
        }
    if values_right:  # a step-order finding explains wrong values only
        record = {**record, "step_order": ""}
    notes.extend(line_notes(record))
    ops = record.get("graph_ops")
    if exercise.must_build_no_graph and isinstance(ops, int) and ops > 0:
        notes.append(
            f"Your function recorded {ops} operation{'s' * (ops != 1)} in an autograd graph: "
            "this task must build no graph at all (returning a detached result is not enough). "
            "Put the computation under `with torch.no_grad():`."
        )
    return "\n".join(notes)


def _shown(pattern: str) -> str:
    kind, _, name = pattern.partition(":")
    if kind == "attr":
        return f"`.{name}`"
    if kind == "call":
        return " or ".join(
            f"`.{part}`" if part.endswith(")") else f"`.{part}()`" for part in name.split("|")
        )
    if kind == "op":
        return {"matmul": "`@`"}.get(name, f"the `{name}` operator")
    return " or ".join(f"`with torch.{alternative}()`" for alternative in name.split("|"))


def uses(tree: ast.AST, patterns) -> set[str]:
    """The patterns that occur in ``tree``."""
    found = set()
    for node in ast.walk(tree):
        for pattern in patterns:
            if pattern not in found and _matches(node, pattern):
                found.add(pattern)
    return found


def _matches(node: ast.AST, pattern: str) -> bool:
    kind, _, name = pattern.partition(":")
    if kind == "attr":
        return isinstance(node, ast.Attribute) and node.attr == name
    if kind == "call":  # "call:a|b": either method
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return False
        owner = node.func.value
        if isinstance(owner, ast.Name) and owner.id in ("math", "np", "numpy"):
            return False  # math.isfinite is not torch.isfinite: patterns name torch's tools
        for alternative in name.split("|"):
            bare = alternative.endswith("()")
            if node.func.attr == alternative.removesuffix("()") and (
                not bare or not (node.args or node.keywords)
            ):
                return True
        return False
    if kind == "with":  # "with:a|b": either context manager
        return isinstance(node, (ast.With, ast.AsyncWith)) and any(
            alternative in ast.unparse(item.context_expr)
            for item in node.items
            for alternative in name.split("|")
        )
    if kind == "op":  # a @ b, and a @= b
        operator = _OPERATORS.get(name)
        return (
            operator is not None
            and isinstance(node, (ast.BinOp, ast.AugAssign))
            and isinstance(node.op, operator)
        )
    return False


def _source_of(exercise, answer) -> tuple[str, str]:
    if exercise.kind == "function" and callable(answer):
        import inspect
        import textwrap

        try:
            return textwrap.dedent(inspect.getsource(answer)), "function source"
        except (OSError, TypeError):
            return "", ""
    return _current_cell(), "answer cell"


def _current_cell() -> str:
    """The source of the cell being run (IPython only; "" elsewhere)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return ""
    shell = get_ipython()
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return history[-1] if history else ""


def _parse(source: str) -> ast.AST | None:
    if not source.strip():
        return None
    try:
        return ast.parse(source)
    except SyntaxError:
        try:  # IPython magics / shell escapes: drop those lines
            kept = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
            return ast.parse("\n".join(kept))
        except SyntaxError:
            return None


def count_graph_ops(exercise, function) -> int | None:
    """How many torch operations inside ``function`` made a result with a ``grad_fn``,
    over all the exercise's cases (None when the probe could not run)."""
    import torch
    from torch.overrides import TorchFunctionMode

    from course_helpers.environment.notebook import cpu_generator
    from course_helpers.lessons.model import fresh_rng

    class Count(TorchFunctionMode):
        ops = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            outs = out if isinstance(out, (tuple, list)) else (out,)
            if any(isinstance(o, torch.Tensor) and o.grad_fn is not None for o in outs):
                Count.ops += 1
            return out

    try:
        cases = fresh_rng(lambda: exercise.cases(cpu_generator(0)))
        with Count():
            for args in cases:
                try:
                    function(*args)
                except Exception:
                    pass  # its error is judged from the ordinary run
    except Exception:
        return None
    return Count.ops
