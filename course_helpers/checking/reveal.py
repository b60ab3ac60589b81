"""Feedback that says how far off an answer is without giving the expected values away.

By-hand and prediction exercises (``Exercise.reveal_values=False``) must not print the
reference's numbers: a learner who reads "Expected: [-6.0, 3.25]" has nothing left to work
out. :func:`conceal` rewrites a failed verdict for such an exercise: it keeps what is safe
(wrong type, wrong shape, wrong dtype) and describes wrong values only by how they differ
(how many differ, a clean factor, the sign, larger or smaller).
"""

from __future__ import annotations

import math
from typing import Any

from course_helpers.checking import diagnosis as dx
from course_helpers.checking.values import all_close

HOW_TO_CONTINUE = "Work through it again by hand; the expected values are not shown here."
VALUES_RIGHT = "Your values are right, but not in the expected dtype or type."


def conceal(exercise, answer: Any, verdict: dx.Diagnosis) -> dx.Diagnosis:
    """``verdict`` for ``exercise``, with no expected value named when it hides them."""
    if verdict.status != "failed" or getattr(exercise, "reveal_values", True):
        return verdict
    got = _as_tensor(answer)
    exp = _as_tensor(dx.describe(exercise.reference))
    if got is None or exp is None or got.shape != exp.shape:
        # wrong kind or shape: those messages name no values, unless one slipped in
        if not _names_any(verdict.message, exp):
            return verdict
        if dx.kind_of(answer) in ("ndarray", "numpy_scalar"):  # say what the answer is
            return dx.Diagnosis(
                "failed",
                f"Your answer is {dx.python_type_name(answer)}, not a tensor: convert it with "
                f"torch.tensor(...). {HOW_TO_CONTINUE}",
                advice=f" {HOW_TO_CONTINUE}",
            )
        return dx.failed(HOW_TO_CONTINUE)
    if exercise.kind == "autograd" and dx.kind_of(answer) == "tensor":
        same_dtype = answer["dtype"] == str(exp.dtype).removeprefix("torch.")
        if same_dtype and how_far_off(got, exp, exercise.rtol, exercise.atol) == VALUES_RIGHT:
            return _conceal_other_attribute(exercise, answer, verdict)
    exp_dtype = str(exp.dtype).removeprefix("torch.")
    first, dtype_differs = "", False
    if dx.kind_of(answer) == "tensor" and answer["dtype"] != exp_dtype:
        first = f"Your tensor has dtype torch.{answer['dtype']} but torch.{exp_dtype} is expected. "
        dtype_differs = True
    elif (
        dx.kind_of(answer) in ("ndarray", "numpy_scalar", "number")
        and dx.kind_of(dx.describe(exercise.reference)) == "tensor"
    ):  # name the type the answer has (the values may well be right)
        kind = dx.python_type_name(answer)  # "a NumPy float64", "a Python float"...
        first = (
            f"Your answer is {kind}, but a tensor is expected: wrap it with "
            f"{_wrapping(answer, exp)}. "
        )
        dtype_differs = True
    found = how_far_off(got, exp, exercise.rtol, exercise.atol)
    if found == VALUES_RIGHT:  # only the form or the dtype is wrong: nothing to work out
        return dx.failed(first + found)
    if dtype_differs and all_close(got.double(), exp.double(), 1e-3, 0.0):
        # as close as a lower precision gives: the dtype is the thing to fix first
        advice = f" Compute in torch.{exp_dtype} from the start, then check again."
    else:
        advice = " " + HOW_TO_CONTINUE
    return dx.Diagnosis("failed", first + found + advice, advice=advice)


def _wrapping(answer: Any, exp) -> str:
    """``torch.tensor(...)`` with the dtype the expected tensor has, when the number's own
    would not give it (a Python float becomes float32, an int int64)."""
    import torch

    value = answer["value"] if dx.kind_of(answer) == "numpy_scalar" else answer
    default = torch.float32 if isinstance(value, float) else torch.int64
    if dx.kind_of(answer) == "ndarray" or exp.dtype == default:
        return "torch.tensor(...)"
    return f"torch.tensor(..., dtype={exp.dtype})"


def _conceal_other_attribute(exercise, answer, verdict: dx.Diagnosis) -> dx.Diagnosis:
    """An autograd answer whose values are right failed on another attribute (its .grad,
    requires_grad...): say that one, still without the expected values."""
    exp_record = dx.describe(exercise.reference)
    if not _names_any(verdict.message, _as_tensor(exp_record.get("grad") or {})):
        if not _names_any(verdict.message, _as_tensor(exp_record)):
            return verdict  # e.g. "requires_grad=False but ... True": nothing to hide
    got, wanted = _as_tensor(answer.get("grad") or {}), _as_tensor(exp_record.get("grad") or {})
    advice = f" {HOW_TO_CONTINUE}"
    if got is None or wanted is None or got.shape != wanted.shape:
        return dx.Diagnosis(
            "failed",
            f"Your tensor's values are right, but its .grad is not.{advice}",
            advice=advice,
        )
    found = how_far_off(got, wanted, exercise.rtol, exercise.atol)
    return dx.Diagnosis(
        "failed",
        f"Your tensor's values are right, but its .grad is not: {found}{advice}",
        advice=advice,
    )


def how_far_off(got, exp, rtol: float | None = None, atol: float | None = None) -> str:
    """How ``got`` differs from ``exp`` (same shape), without naming ``exp``'s values."""
    import torch

    g, e = got.double(), exp.double()
    total = e.numel()
    rtol, atol = dx.tolerances(str(exp.dtype).removeprefix("torch."), rtol, atol)
    bad = ~dx.close_mask(g, e, rtol, atol)
    wrong = int(bad.sum())
    if wrong == 0:
        return VALUES_RIGHT
    parts = []
    if total > 1:
        parts.append(f"{wrong} of {total} values differ from the expected ones.")
    odd = int((~torch.isfinite(g)).sum())
    if odd:  # name it: a NaN or inf is no "larger or smaller" than a number
        which = "is NaN or infinite" if odd == 1 else "are NaN or infinite"
        parts.append(
            f"{odd} of your values {which} (e.g. from 0/0, or a placeholder such as "
            "float('nan')): put the number you worked out there."
        )
    finite = bool(torch.isfinite(g).all()) and bool(torch.isfinite(e).all())
    if finite and bool((e != 0).any()):
        factor = float((g * e).sum() / (e * e).sum())
        near_one = abs(factor - 1) < 1e-3
        clean = total > 1 or _is_clean(factor)  # any two numbers have *some* ratio
        if factor != 0 and not near_one and clean and all_close(g, factor * e, 1e-5, 1e-8):
            parts.append(_factor(factor, total))
        elif total == 1:
            parts.append(_direction(float(g), float(e)))
        else:
            larger = int((g > e)[bad].sum())
            if larger == wrong:
                parts.append("Every wrong value is larger than expected.")
            elif larger == 0:
                parts.append("Every wrong value is smaller than expected.")
    elif total == 1 and finite:
        parts.append(_direction(float(g), float(e)))
    return " ".join(parts) if parts else "Your values are not the expected ones."


def _is_clean(factor: float) -> bool:
    """-1, a whole number or 1/n: a ratio worth naming for a single value."""
    whole, inverse = round(factor), round(1 / factor) if factor else 0
    return (whole != 0 and abs(factor - whole) < 1e-6 * abs(factor)) or (
        inverse != 0 and abs(1 / factor - inverse) < 1e-6 * abs(1 / factor)
    )


def _factor(factor: float, total: int) -> str:
    subject = "Your value is" if total == 1 else "Every value is"
    if abs(factor + 1) < 1e-6:
        return f"{subject} off by its sign only: look for a flipped subtraction or a lost minus."
    whole = round(factor)
    if whole != 0 and abs(factor - whole) < 1e-6 * abs(factor):
        return f"{subject} off by a factor of {whole} ({whole} times the expected value)."
    inverse = round(1 / factor)
    if inverse != 0 and abs(1 / factor - inverse) < 1e-6 * abs(1 / factor):
        return (
            f"{subject} off by a factor of 1/{inverse} (the expected value is {inverse} times it)."
        )
    return f"{subject} off by the same factor, about {factor:.3g}: look for a constant you changed."


def _direction(g: float, e: float) -> str:
    side = "larger" if g > e else "smaller"
    gap = abs(g - e) / max(abs(e), 1e-30)
    if gap < 1e-3:
        size = "very slightly (less than 0.1%)"
    elif gap < 0.1:
        size = "slightly (less than 10%)"
    else:
        size = "clearly (10% or more)"
    return f"Your value is {size} {side} than expected."


def _as_tensor(record: Any):
    """The values of a tensor record or a number as a tensor, else None."""
    import torch

    kind = dx.kind_of(record)
    if kind == "tensor" and record.get("data") is not None:
        return record["data"]
    if kind in ("number", "bool") and not isinstance(record, complex):
        return torch.tensor(float(record), dtype=torch.float64)
    return None


def _names_any(message: str, exp) -> bool:
    if exp is None:
        return False
    return any(_spelled(v) in message for v in exp.double().reshape(-1).tolist()[:64])


def _spelled(value: float) -> str:
    if math.isfinite(value) and value == int(value):
        return f"{int(value)}."
    return f"{value:g}"[:6]
