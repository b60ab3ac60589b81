"""What is wrong with an answer, in one sentence: the heart of the checker.

Answers and references are first turned into *records* by :func:`describe`
(``course_helpers.records``): plain dicts of CPU tensors and Python values that survive
``torch.save`` and ``torch.load(weights_only=True)``. The same code therefore judges an
answer in the learner's kernel and, for grading, in a separate process that never trusts
the kernel.

:func:`diagnose` dispatches on what is expected: a tensor (``checking.tensors``, in a
fixed order that stops at the first problem), a number or a "predict the output" answer
(``checking.predictions``), or a sequence or dict, whose items are diagnosed here, each by
:func:`diagnose` again.
"""

from __future__ import annotations

from typing import Any

from course_helpers.checking import predictions as pred
from course_helpers.checking.predictions import (
    count_of,
    diagnose_prediction,
    is_are,
    labelled,
    predict_items,
)
from course_helpers.checking.tensors import diagnose_tensor
from course_helpers.checking.values import close_mask
from course_helpers.checking.verdict import (
    DEFAULT_TOLERANCES,
    Diagnosis,
    advised,
    failed,
    not_attempted,
    passed,
    tolerances,
    wrong_format,
)
from course_helpers.records import (
    describe,
    dtype_name,
    fmt_index,
    fmt_number,
    fmt_shape,
    fmt_values,
    is_missing,
    is_record,
    kind_of,
    python_type_name,
    reshape_args,
)

# records and formatting live in course_helpers.records; they stay importable from here
__all__ = [
    "DEFAULT_TOLERANCES",
    "Diagnosis",
    "advised",
    "close_mask",
    "describe",
    "diagnose",
    "diagnose_tensor",
    "dtype_name",
    "failed",
    "fmt_index",
    "fmt_number",
    "fmt_shape",
    "fmt_values",
    "is_missing",
    "is_record",
    "kind_of",
    "not_attempted",
    "passed",
    "python_type_name",
    "reshape_args",
    "tolerances",
    "wrong_format",
]


# --------------------------------------------------------------------------- entry point


def diagnose(
    answer: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    device: str | None = None,
    inputs: tuple = (),
    subject: str = "Your answer",
    grad_context: bool = False,
    in_function: bool = False,
    context: str = "",
) -> Diagnosis:
    """Compare ``answer`` with ``expected`` (objects or records) and name the first problem.

    ``device``: when given (e.g. ``"cuda"``), a tensor answer must live there; by default
    the device is not checked and values are compared on the CPU.
    ``inputs``: tensors the answer was computed from (lets the diagnosis spot a reduction
    over the wrong dimension). ``grad_context``: the tensors are gradients (explains a
    constant factor as accumulation). ``in_function``: the answer is a function's output
    computed on the same inputs as the expected one, so it must also be on the same device
    as the expected output, and fixes point into the function rather than at its result.
    ``context``: what the task asks of autograd (``Exercise.context``), for the advice.
    """
    got, exp = describe(answer), describe(expected)
    if is_missing(got):
        return not_attempted()
    kind = kind_of(exp)
    if kind == "tensor":
        return diagnose_tensor(
            got,
            exp,
            rtol=rtol,
            atol=atol,
            device=device,
            inputs=inputs,
            subject=subject,
            grad_context=grad_context,
            in_function=in_function,
            context=context,
        )
    if kind == "number":
        return pred.diagnose_number(got, exp, rtol=rtol, atol=atol, subject=subject)
    if kind in ("tuple", "list"):
        return diagnose_sequence(
            got,
            exp,
            rtol=rtol,
            atol=atol,
            device=device,
            subject=subject,
            in_function=in_function,
            context=context,
        )
    if kind == "dict":
        return diagnose_mapping(
            got,
            exp,
            rtol=rtol,
            atol=atol,
            device=device,
            subject=subject,
            in_function=in_function,
            context=context,
        )
    return pred.diagnose_prediction(got, exp, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- tensors


# ---- shape


# ---- dtype, autograd flags


# ---- values


def diagnose_sequence(
    got, exp, *, rtol, atol, device, subject, in_function=False, context=""
) -> Diagnosis:
    kind, want = kind_of(got), kind_of(exp)
    if want == "tuple" and all(
        isinstance(i, int) and not isinstance(i, bool) for i in exp["items"]
    ):
        return diagnose_prediction(got, exp)
    if kind not in ("tuple", "list"):
        return failed(
            f"{subject} is {python_type_name(got)}, but a {want} of {len(exp['items'])} items "
            "is expected."
        )
    if in_function and kind != want:  # a function's task says which it returns
        brackets = "round brackets, (a, b)" if want == "tuple" else "square brackets, [a, b]"
        return failed(f"{subject} is a {kind}, but a {want} is expected: return it in {brackets}.")
    if exp["items"] and all(isinstance(i, str) for i in exp["items"]):
        # names (e.g. parameter names): order and counts say more than item-by-item
        return predict_items(
            got["items"],
            exp["items"],
            rtol=rtol,
            atol=atol,
            subject=subject,
            item_label=f"Item {{}} of your {kind}",
        )
    if len(got["items"]) != len(exp["items"]):
        return failed(
            f"{subject} has {count_of(len(got['items']), 'item')} but "
            f"{len(exp['items'])} {is_are(len(exp['items']))} expected."
        )
    for i, (g_item, e_item) in enumerate(zip(got["items"], exp["items"], strict=True)):
        label = f"Item {i} of your {kind}"
        result = diagnose(
            g_item,
            e_item,
            rtol=rtol,
            atol=atol,
            device=device,
            subject=label,
            in_function=in_function,
            context=context,
        )
        if result.status == "not_attempted":
            return not_attempted(f"{label} is still `...`: fill it in and run the cell again.")
        if not result.passed:
            return labelled(result, label)
    return passed()


def diagnose_mapping(
    got, exp, *, rtol, atol, device, subject, in_function=False, context=""
) -> Diagnosis:
    if kind_of(got) != "dict":
        return failed(f"{subject} is {python_type_name(got)}, but a dict is expected.")
    mine = {repr(k): (k, v) for k, v in zip(got["keys"], got["values"], strict=True)}
    wanted = {repr(k): (k, v) for k, v in zip(exp["keys"], exp["values"], strict=True)}
    missing = [k for k in wanted if k not in mine]
    extra = [k for k in mine if k not in wanted]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"it lacks the key{'s' * (len(missing) > 1)} {', '.join(missing)}")
        if extra:
            parts.append(f"it has the unexpected key{'s' * (len(extra) > 1)} {', '.join(extra)}")
        return failed(f"{subject} has the wrong keys: {'; '.join(parts)}.")
    for key, (_, expected_value) in wanted.items():
        label = f"The value for key {key}"
        result = diagnose(
            mine[key][1],
            expected_value,
            rtol=rtol,
            atol=atol,
            device=device,
            subject=label,
            in_function=in_function,
            context=context,
        )
        if not result.passed:
            return labelled(result, label)
    return passed()
