"""The judge for ``autograd`` exercises: a tensor's ``.grad``, ``requires_grad``, leaf
status, ``grad_fn``, version counter and values, checked in ``AUTOGRAD_ORDER``."""

from __future__ import annotations

from course_helpers.checking import diagnosis as dx
from course_helpers.checking.values import all_close
from course_helpers.lessons.model import AUTOGRAD_ATTRIBUTES

AUTOGRAD_ORDER = AUTOGRAD_ATTRIBUTES  # the order in which they are checked


def judge_autograd(exercise, answer) -> dx.Diagnosis:
    expected = dx.describe(exercise.reference)
    if dx.kind_of(answer) != "tensor":
        return dx.failed(
            f"Your answer is {dx.python_type_name(answer)}, but the tensor itself is expected "
            "(pass the tensor whose autograd state is checked)."
        )
    if _looks_like_its_grad(answer, expected):
        return dx.failed(
            "Your answer looks like a gradient (its values are the expected tensor's .grad): "
            "pass the tensor itself (e.g. w), not its .grad (w.grad)."
        )
    wanted = set(exercise.attributes)
    for attribute in AUTOGRAD_ORDER:
        if attribute not in wanted:
            continue
        verdict = _AUTOGRAD_CHECKS[attribute](exercise, answer, expected)
        if not verdict.passed:
            return verdict
    shown = ", ".join(a for a in AUTOGRAD_ORDER if a in wanted)
    return dx.passed(f"Correct: {shown} as expected.")


def _looks_like_its_grad(got: dict, expected: dict) -> bool:
    """The answer is a plain tensor equal to the reference's .grad (e.g. check(ID, w.grad))."""
    grad = expected["grad"]
    if grad is None or got["requires_grad"] or got["grad"] is not None:
        return False
    # a gradient that equals the tensor's own values proves nothing
    return _same_values(got, grad) and not _same_values(got, expected)


def _same_values(a: dict, b: dict) -> bool:
    if a["shape"] != b["shape"] or a["dtype"] != b["dtype"]:
        return False
    if a["data"] is None or b["data"] is None:
        return False
    return all_close(a["data"], b["data"])


# requires_grad advice per Exercise.context: (when True is expected, when False is)
_REQUIRES_GRAD_ADVICE = {
    "no_graph": (
        "it should be computed with grad mode on, from tensors that require grad.",
        "compute it under `with torch.no_grad():` so no graph is recorded (a .detach() at "
        "the end still records one first).",
    ),
    "keep_graph": (
        "it must stay connected to the graph: build it with torch operations from the "
        "tensors that require grad (no .item(), no torch.tensor(...) of numbers, no "
        "torch.no_grad()); a new leaf with requires_grad=True would be cut off from them.",
        "it should not track gradients here.",
    ),
}


def _check_flag(name: str, explain_true: str, explain_false: str):
    def checker(exercise, got, expected) -> dx.Diagnosis:
        if got[name] == expected[name]:
            return dx.passed()
        when_true, when_false = explain_true, explain_false
        context = task_context(exercise)
        if name == "requires_grad" and context in _REQUIRES_GRAD_ADVICE:
            when_true, when_false = _REQUIRES_GRAD_ADVICE[context]
        return dx.advised(
            f"Your tensor has {name}={got[name]} but {name}={expected[name]} is expected.",
            _sentence(when_true if expected[name] else when_false),
        )

    return checker


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _check_grad_fn(exercise, got, expected) -> dx.Diagnosis:
    mine, wanted = got["grad_fn"], expected["grad_fn"]
    if mine == wanted:
        return dx.passed()
    if wanted is None:
        return dx.advised(
            f"Your tensor has grad_fn {mine}, but no grad_fn is expected.",
            "It should be a leaf or detached from the graph (.detach() or torch.no_grad()).",
        )
    if mine is None:
        return dx.advised(
            f"Your tensor has no grad_fn, but {wanted} is expected.",
            "It should be the result of an operation on a tensor that requires grad.",
        )
    return dx.failed(
        f"Your tensor's grad_fn is {mine} but {wanted} is expected: the last operation that "
        "made it is not the expected one."
    )


def _check_version(exercise, got, expected) -> dx.Diagnosis:
    mine, wanted = got["version"], expected["version"]
    if mine == wanted:
        return dx.passed()
    return dx.failed(
        f"Your tensor's _version is {mine} but {wanted} is expected: _version counts the "
        "in-place operations on a tensor (add_, mul_, +=, x[...] = ...), so yours had "
        f"{mine} and the expected one {wanted}."
    )


def _check_value(exercise, got, expected) -> dx.Diagnosis:
    return dx.diagnose_tensor(
        got,
        expected,
        rtol=exercise.rtol,
        atol=exercise.atol,
        context=task_context(exercise),
    )


def _check_grad(exercise, got, expected) -> dx.Diagnosis:
    mine, wanted = got["grad"], expected["grad"]
    if wanted is None and mine is None:
        return dx.passed()
    if wanted is None:
        return dx.advised(
            "Your tensor has a .grad, but none is expected.",
            "backward() should not reach it (or its .grad should be reset to None).",
        )
    if mine is None:
        return dx.advised(*_grad_is_none(got))
    return dx.diagnose_tensor(
        mine,
        wanted,
        rtol=exercise.rtol,
        atol=exercise.atol,
        subject="Your tensor's .grad",
        grad_context=True,
        context="keep_graph" if mine["requires_grad"] else task_context(exercise),
    )


def task_context(exercise) -> str:
    """What the task asks of autograd, for advice: ``Exercise.context``, and "no_graph" for a
    task that must build no graph at all (``must_build_no_graph``)."""
    context = getattr(exercise, "context", "")
    if not context and getattr(exercise, "must_build_no_graph", False):
        return "no_graph"
    return context


def _grad_is_none(got: dict) -> tuple[str, str]:
    """(why a tensor has no .grad, as far as its record tells; the generic fix)."""
    if not got["requires_grad"]:
        return (
            "Your tensor's .grad is None, and it does not require grad, so backward() never "
            "fills it.",
            "It should be a tensor that requires grad (or made from one).",
        )
    if not got["is_leaf"]:
        return (
            f"Your tensor's .grad is None: it is not a leaf (grad_fn {got['grad_fn']}), and "
            "backward() keeps .grad only for leaves.",
            "Call .retain_grad() on it before backward() (calling it afterwards is too late), "
            "or, if backward() never ran, call it on the result.",
        )
    return (
        "Your tensor's .grad is None: it is a leaf that requires grad, so backward() has not "
        "reached it.",
        "Call .backward() on a result computed from it (or, if you set .grad to None yourself, "
        "run backward() again afterwards).",
    )


_AUTOGRAD_CHECKS = {
    "requires_grad": _check_flag(
        "requires_grad",
        "create it with requires_grad=True (or call .requires_grad_()).",
        "use .detach() or compute it inside `with torch.no_grad():` (for a leaf such as a "
        "parameter: create it without requires_grad=True, or freeze it with "
        ".requires_grad_(False)).",
    ),
    "is_leaf": _check_flag(
        "is_leaf",
        "a leaf is a tensor you created yourself, not the result of an operation on tensors "
        "that require grad.",
        "it should be the result of an operation on a tensor that requires grad.",
    ),
    "grad_fn": _check_grad_fn,
    "version": _check_version,
    "value": _check_value,
    "grad": _check_grad,
}
