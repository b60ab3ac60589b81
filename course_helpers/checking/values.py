"""Values of a tensor answer against the expected ones: closeness, and the pattern a wrong
answer shows (a constant factor, a flipped sign, a reduction over the wrong dimension)."""

from __future__ import annotations

import math

from course_helpers.checking.verdict import Diagnosis, advised, passed, tolerances
from course_helpers.records import (
    dtype_name,
    fmt_index,
    fmt_number,
    fmt_values,
    kind_of,
)


def close_mask(g, e, rtol: float = 0.0, atol: float = 0.0):
    """Elementwise 'close' with equal NaNs and equal infinities; exact for integers and bools."""
    import torch

    if not (e.is_floating_point() or e.is_complex()):
        return g == e
    wide = torch.complex128 if e.is_complex() else torch.float64
    g64, e64 = g.to(wide), e.to(wide)
    with torch.no_grad():
        diff = (g64 - e64).abs()
        ok = diff <= atol + rtol * e64.abs()
        ok |= g64 == e64
        ok |= torch.isnan(g64) & torch.isnan(e64)
    return ok


def all_close(g, e, rtol: float | None = None, atol: float | None = None) -> bool:
    if g.shape != e.shape:
        return False
    if rtol is None or atol is None:
        rtol, atol = tolerances(dtype_name(e.dtype), rtol, atol)
    return bool(close_mask(g, e, rtol, atol).all())


def diagnose_values(got, exp, rtol, atol, subject, inputs, grad_context) -> Diagnosis:
    import torch

    g, e = got["data"], exp["data"]
    rtol, atol = tolerances(exp["dtype"], rtol, atol)
    floating = e.is_floating_point() or e.is_complex()
    if floating:
        for label, test in (("NaN (not-a-number)", torch.isnan), ("infinite", torch.isinf)):
            bad = test(g) & ~test(e)
            if bool(bad.any()):
                count = int(bad.sum())
                first = fmt_index(torch.nonzero(bad)[0].tolist()) if g.ndim else "()"
                cause = (
                    "NaN usually comes from 0/0, log or sqrt of a negative number, or inf - inf."
                    if label.startswith("NaN")
                    else "inf usually comes from dividing by zero, log(0) or exp of a large number."
                )
                return advised(
                    f"{subject} contains {count} {label} value{'s' * (count != 1)} (first at "
                    f"index {first}) where the expected tensor has ordinary numbers.",
                    cause,
                )
    ok = close_mask(g, e, rtol, atol)
    if bool(ok.all()):
        return passed()
    bad_count, total = int((~ok).sum()), e.numel()
    if floating:
        wide = torch.complex128 if e.is_complex() else torch.float64
        diff = (g.to(wide) - e.to(wide)).abs().nan_to_num(nan=math.inf)
        diff = torch.where(ok, torch.zeros_like(diff), diff)
        flat = int(torch.argmax(diff.reshape(-1)))
    else:
        flat = int(torch.nonzero(~ok.reshape(-1))[0])
    index = (
        tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), e.shape)) if e.ndim else ()
    )
    gv, ev = g.reshape(-1)[flat].item(), e.reshape(-1)[flat].item()
    if total == 1:
        text = f"{subject} holds {fmt_number(gv, ev)} but {fmt_number(ev, gv)} is expected."
    else:
        tol = f" beyond the tolerance (rtol={rtol:g}, atol={atol:g})" if floating else ""
        which = "largest difference" if floating else "first difference"
        text = (
            f"{subject} has the right shape and dtype, but {bad_count} of {total} values "
            f"{'differs' if bad_count == 1 else 'differ'}{tol}. "
            f"The {which} is at index {fmt_index(index)}: expected "
            f"{fmt_number(ev, gv)}, got {fmt_number(gv, ev)}."
        )
    pattern, advice = _value_pattern(got, exp, inputs, grad_context)
    if pattern:
        text += " " + pattern
    if advice:
        advice = " " + advice
        text += advice
    if total > 1:
        text += "\n" + _excerpt(g, e, index)
    return Diagnosis("failed", text, advice=advice)


def _value_pattern(got: dict, exp: dict, inputs: tuple, grad_context: bool) -> tuple[str, str]:
    """(a pattern the wrong values show, the generic fix for it): a transpose, a sign flip, a
    reduction over the wrong dim, a factor, an offset; ("", "") for none.

    Patterns need at least two values (any two single numbers have a ratio and an offset);
    for a single value only a sign flip, or an exact whole-number factor in a gradient, is named.
    A tensor holding one number repeated (each rank's copy of one mean) counts as a single value.
    """
    import torch

    g, e = got["data"], exp["data"]
    if g.dtype == torch.bool or e.numel() == 0:
        return "", ""
    if not (bool(torch.isfinite(g).all()) and bool(torch.isfinite(e).all())):
        return "", ""
    single = e.numel() == 1
    one_number = single or _one_value(e)
    e_any = bool((e != 0).any())
    if e.ndim == 2 and e.shape[0] == e.shape[1] > 1 and all_close(g.T, e):
        return "It is the transpose of the expected tensor.", "Use .T (or swap the dims you used)."
    if e_any and all_close(-g, e):
        where = "It has" if single else "Every value has"
        return f"{where} the wrong sign.", "Look for a flipped subtraction or a missing minus."
    reduction = reduction_hint(got, exp, inputs)
    if reduction:
        return reduction[0].upper() + reduction[1:], ""
    if not e_any:
        return "", ""
    g64, e64 = g.double(), e.double()
    factor = float((g64 * e64).sum() / (e64 * e64).sum())
    if factor != 0 and abs(factor - 1) > 1e-3 and all_close(g64, factor * e64, 1e-5, 1e-6):
        return _factor_text(factor, grad_context, one_number, single)
    offset = (g64 - e64).reshape(-1)[0]
    if not one_number and abs(float(offset)) > 1e-6:
        if all_close(g64 - e64, offset.expand_as(e64)):
            return (
                f"Every value is off by the same amount ({fmt_number(float(offset))}).",
                "Look for a constant you added or left out.",
            )
    return "", ""


def _one_value(t) -> bool:
    """Every element of ``t`` is the same number."""
    return bool((t == t.reshape(-1)[0]).all())


def _factor_text(
    factor: float, grad_context: bool, one_number: bool, single: bool
) -> tuple[str, str]:
    """(the factor, the fix); ``one_number``: the expected tensor holds one number (perhaps
    repeated), ``single``: it has one element."""
    whole = round(factor)
    is_whole = abs(factor - whole) < 1e-6 * max(1, abs(factor))
    if grad_context and is_whole and whole >= 2:
        subject = "Your .grad is" if single else "Every value is"
        return (
            f"{subject} exactly {whole} times the expected gradient.",
            f"Gradients add up in .grad: if backward() ran {whole} times, zero .grad in between "
            "(set .grad = None or call optimizer.zero_grad()).",
        )
    if one_number:  # any two single numbers have a ratio
        return "", ""
    inverse = round(1 / factor)
    if is_whole:
        shown = f"{whole} times"
    elif abs(1 / factor - inverse) < 1e-6 * max(1, abs(1 / factor)):
        shown = f"1/{inverse} of" if inverse > 0 else f"-1/{-inverse} times"
    else:
        shown = f"{fmt_number(factor)} times"
    if grad_context:
        return (
            f"Every value is {shown} the expected gradient.",
            "Look for a constant factor in your derivative, or for gradients accumulated over "
            "a different number of backward() calls.",
        )
    return f"Every value is {shown} the expected one.", "Look for a constant factor."


def _excerpt(g, e, index: tuple) -> str:
    if e.numel() <= 12:
        return f"Expected: {fmt_values(e)}\nGot:      {fmt_values(g)}"
    if e.ndim == 0:
        return ""
    length = e.shape[-1]
    j = index[-1]
    start = max(0, min(j - 3, length - 7))
    stop = min(length, start + 7)
    where = list(index[:-1]) + [slice(start, stop)]
    label = ", ".join([str(i) for i in index[:-1]] + [f"{start}:{stop}"])
    return (
        f"Expected[{label}]: {fmt_values(e[tuple(where)])}\n"
        f"Got[{label}]:      {fmt_values(g[tuple(where)])}"
    )


def reduction_hint(got: dict, exp: dict, inputs: tuple) -> str:
    """'you reduced over dim 0 but dim 1 is expected', found by trying the usual reductions
    over every dim of size 2 or more."""
    import torch

    g, e = got["data"], exp["data"]
    if g is None or e is None:
        return ""
    for x in inputs:
        if kind_of(x) != "tensor" or x["data"] is None or x["data"].ndim < 2:
            continue
        data = x["data"]
        if not data.is_floating_point() or data.numel() == 0 or data.ndim > 4:
            continue
        for name in ("sum", "mean", "amax", "amin"):
            op = getattr(torch, name)
            mine = _matching_reduction(op, data, g)
            wanted = _matching_reduction(op, data, e)
            if not (mine and wanted) or mine == wanted:
                continue
            if mine[0] == wanted[0]:
                kept = "keeps that dim (size 1)" if mine[1] else "drops that dim"
                return (
                    f"you reduced over the right dim ({mine[0]}), but your result {kept}; "
                    f"use keepdim={wanted[1]}."
                )
            text = f"it looks like you reduced over dim {mine[0]}, but dim {wanted[0]} is expected"
            if mine[1] != wanted[1]:
                text += f" (with keepdim={wanted[1]})"
            return text + "."
    return ""


def _matching_reduction(op, data, target) -> tuple[int, bool] | None:
    """The (dim, keepdim) whose reduction of ``data`` gives ``target``. A dim of size 1 is
    never named: reducing it only drops or keeps it, which a slice, an index or a squeeze does
    as well, so the values would not show a reduction."""
    for dim in range(data.ndim):
        if data.shape[dim] == 1:
            continue
        for keepdim in (False, True):
            reduced = op(data, dim=dim, keepdim=keepdim)
            if reduced.shape == target.shape and reduced.dtype == target.dtype:
                if all_close(reduced, target):
                    return dim, keepdim
    return None
