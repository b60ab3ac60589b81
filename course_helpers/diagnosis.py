"""What is wrong with an answer, in one sentence: the heart of the checker.

Answers and references are first turned into *records* by :func:`describe`
(``course_helpers.records``): plain dicts of CPU tensors and Python values that survive
``torch.save`` and ``torch.load(weights_only=True)``. The same code therefore judges an
answer in the learner's kernel and, for grading, in a separate process that never trusts
the kernel.

:func:`diagnose` checks a tensor answer in a fixed order and stops at the first problem:
not attempted → type → shape (never broadcast) → dtype → device →
``requires_grad`` / leaf → NaN/Inf → values. Numbers, sequences, dicts and "predict the
output" answers are judged in ``course_helpers.predictions``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from course_helpers import predictions as pred
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
]

# torch.testing.assert_close defaults (rtol, atol); integer and bool dtypes compare exactly.
DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
# a Python float answer is compared like a float32 value unless the exercise says otherwise
PYTHON_FLOAT_TOLERANCE = DEFAULT_TOLERANCES["float32"]

_CAST_METHODS = {
    "float32": ".float()",
    "float64": ".double()",
    "float16": ".half()",
    "bfloat16": ".bfloat16()",
    "int64": ".long()",
    "int32": ".int()",
    "int16": ".short()",
    "int8": ".char()",
    "uint8": ".byte()",
    "bool": ".bool()",
}

NOT_ATTEMPTED_MESSAGE = (
    "Not attempted yet: replace the `...` with your answer and run the cell again."
)


@dataclass(frozen=True)
class Diagnosis:
    """The verdict on one answer: a status ("passed", "failed", "not_attempted" or "error")
    and a plain-text message."""

    status: str
    message: str
    # "error" caused by the learner's own code (their function raised): hints still help
    learner_error: bool = False
    # the answer is in the wrong form (a string for a dtype, a list for a shape): the message
    # rewrites the learner's own answer and is shown alone (nothing concealed or appended)
    wrong_format: bool = False
    # the typical mistake the answer was diagnosed as (a misconception, a forbidden pattern):
    # what the first hint after this check addresses ("" for none)
    mistake: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def passed(message: str = "Correct.") -> Diagnosis:
    return Diagnosis("passed", message)


def failed(message: str) -> Diagnosis:
    return Diagnosis("failed", message)


def wrong_format(message: str) -> Diagnosis:
    """A failed verdict that only asks for the answer in the right form."""
    return Diagnosis("failed", message, wrong_format=True)


def not_attempted(message: str = NOT_ATTEMPTED_MESSAGE) -> Diagnosis:
    return Diagnosis("not_attempted", message)


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
) -> Diagnosis:
    """Compare ``answer`` with ``expected`` (objects or records) and name the first problem.

    ``device``: when given (e.g. ``"cuda"``), a tensor answer must live there; by default
    the device is not checked and values are compared on the CPU.
    ``inputs``: tensors the answer was computed from (lets the diagnosis spot a reduction
    over the wrong dimension). ``grad_context``: the tensors are gradients (explains a
    constant factor as accumulation). ``in_function``: the answer is a function's output
    computed on the same inputs as the expected one, so it must also be on the same device
    as the expected output, and fixes point into the function rather than at its result.
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
        )
    if kind == "number":
        return pred.diagnose_number(got, exp, rtol=rtol, atol=atol, subject=subject)
    if kind in ("tuple", "list"):
        return pred.diagnose_sequence(
            got, exp, rtol=rtol, atol=atol, device=device, subject=subject, in_function=in_function
        )
    if kind == "dict":
        return pred.diagnose_mapping(
            got, exp, rtol=rtol, atol=atol, device=device, subject=subject, in_function=in_function
        )
    return pred.diagnose_prediction(got, exp, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- tensors


def diagnose_tensor(
    got: Any,
    exp: dict,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    device: str | None = None,
    inputs: tuple = (),
    subject: str = "Your tensor",
    grad_context: bool = False,
    in_function: bool = False,
) -> Diagnosis:
    """The ordered diagnosis of a tensor answer (records) against the expected tensor.

    ``in_function``: see :func:`diagnose`.
    """
    got = describe(got)
    if is_missing(got):
        return not_attempted()
    if kind_of(got) != "tensor":
        return failed(_wrong_type_for_tensor(got, exp, subject, in_function))
    subject = "Your tensor" if subject == "Your answer" else subject
    inputs = tuple(describe(x) for x in inputs)
    if got["shape"] != exp["shape"]:
        return failed(_shape_message(got, exp, subject, inputs, in_function))
    if got["dtype"] != exp["dtype"]:
        if in_function:
            return failed(_function_dtype_message(got, exp, subject, inputs))
        return failed(_dtype_message(got, exp, subject, rtol, atol))
    if device is not None and not _same_device(got["device"], device):
        return failed(
            f"{subject} is on the {got['device'].split(':')[0]} device but it should be on "
            f"the course device ({device.split(':')[0]}): move it with .to(device)."
        )
    if in_function and got["device"] != exp["device"]:
        return failed(
            f"{subject} is on the {got['device']!r} device, but the expected output is on "
            f"{exp['device']!r}, the device of the inputs: create new tensors with "
            "device=x.device (x: an input), or move them with .to(x.device)."
        )
    problem = _autograd_flags_message(got, exp, subject)
    if problem:
        return failed(problem)
    if exp["data"] is None and got["data"] is None:
        return passed()  # two 'meta' tensors: shape, dtype and device are all there is
    if got["data"] is None:
        return failed(f"{subject} has no values to compare (it lives on the 'meta' device).")
    if exp["data"] is None:
        return failed(
            f"{subject} is on the {got['device']!r} device, but a 'meta' tensor (shape and dtype "
            "only, no values) is expected."
        )
    return _diagnose_values(got, exp, rtol, atol, subject, inputs, grad_context)


def _wrong_type_for_tensor(got: Any, exp: dict, subject: str, in_function: bool = False) -> str:
    kind = kind_of(got)
    want = f"a tensor of shape {fmt_shape(exp['shape'])} ({exp['dtype']})"
    owner = "Your answer" if subject in ("Your tensor", "Your answer") else subject
    dtype_arg = f", dtype=torch.{exp['dtype']}"
    if kind in ("list", "tuple") and any(kind_of(i) == "tensor" for i in got["items"]):
        return (
            f"{owner} is {python_type_name(got)} of tensors, but {want} is expected: "
            f"combine them with torch.stack(your_{kind}) (or torch.cat for one long tensor)."
        )
    if kind in ("list", "tuple"):
        return (
            f"{owner} is {python_type_name(got)}, but {want} is expected: "
            f"wrap it with torch.tensor(your_{kind}{dtype_arg})."
        )
    if kind == "ndarray":
        fix = "torch.from_numpy(your_array)"
        if got["dtype"] != exp["dtype"]:
            fix += _CAST_METHODS.get(exp["dtype"], f".to(torch.{exp['dtype']})")
        return f"{owner} is {python_type_name(got)}, but {want} is expected: convert it with {fix}."
    if in_function and kind in ("number", "bool"):
        return (
            f"{owner} is {python_type_name(got)} ({fmt_number(got)}), but {want} is expected: "
            "if you called .item(), return the tensor itself instead (without .item() it keeps "
            "its dtype and its place in the autograd graph)."
        )
    if kind in ("number", "bool", "numpy_scalar", "complex"):
        value = got["value"] if kind == "numpy_scalar" else got
        inner = fmt_number(value)
        if exp["shape"] == () and exp.get("data") is not None and not _close_number(value, exp):
            return (
                f"{owner} is {python_type_name(got)}, but {want} is expected, and the value "
                "itself is not the expected one either: work out the value again, then make "
                "it a tensor."
            )
        if exp["shape"] == ():
            fix = f"torch.tensor({inner}{dtype_arg})"
        else:
            fix = f"torch.tensor(...) with the shape {fmt_shape(exp['shape'])}"
        return (
            f"{owner} is {python_type_name(got)} ({inner}), but {want} is expected: wrap it: {fix}."
        )
    if kind == "callable":
        return (
            f"{owner} is {python_type_name(got)}, but {want} is expected: "
            "call the function and check its result."
        )
    if kind == "module":
        return (
            f"{owner} is {python_type_name(got)}, but {want} is expected: "
            "pass one of its tensors, e.g. model.weight."
        )
    return f"{owner} is {python_type_name(got)}, but {want} is expected."


def _same_device(got: str, want: str) -> bool:
    if ":" in want:
        return got == want or (got == want.split(":")[0] and want.endswith(":0"))
    return got.split(":")[0] == want


# ---- shape


def _shape_message(
    got: dict, exp: dict, subject: str, inputs: tuple, in_function: bool = False
) -> str:
    gs, es = tuple(got["shape"]), tuple(exp["shape"])
    head = f"{subject} has shape {fmt_shape(gs)} but {fmt_shape(es)} is expected"
    detail = _reduction_hint(got, exp, inputs) or _shape_detail(got, exp, in_function)
    if in_function and ".reshape(" in detail:
        # a reshape to this input's sizes would break every other input: keep what is wrong,
        # replace the fix
        kept = detail.split(".reshape(")[0].removesuffix("use ").rstrip("; ,")
        kept = kept if kept and not kept.endswith(("use", "or")) else ""
        detail = (kept + "; " if kept else "") + (
            "your function must work for every input, so reshaping the result to this input's "
            "sizes is not the fix: find the step that changes the shape (a reduction over the "
            "wrong dim, a missing keepdim=True, a transpose, a hard-coded size)."
        )
    return f"{head}: {detail}{_broadcast_note(gs, es)}"


def _close_number(value, exp: dict) -> bool:
    try:
        number = complex(value)
        target = complex(exp["data"].item())
    except (TypeError, ValueError):
        return True
    return abs(number - target) <= 1e-5 * max(abs(target), 1.0)


def _shape_detail(got: dict, exp: dict, in_function: bool = False) -> str:
    gs, es = tuple(got["shape"]), tuple(exp["shape"])
    gn, en = math.prod(gs), math.prod(es)
    if es == () and gn == 1:
        return (
            "a 0-dim tensor (a single number, shape ()) is expected, not a 1-element tensor: "
            "use .squeeze() (or .sum() / .mean() if you meant to reduce)."
        )
    if gs == () and en == 1:
        return f"yours is a 0-dim tensor (shape ()); use .reshape{reshape_args(es)}."
    squeezed_equal = tuple(d for d in gs if d != 1) == tuple(d for d in es if d != 1)
    extra = missing = None
    if squeezed_equal and len(gs) == len(es) + 1:
        extra = next((k for k in range(len(gs)) if gs[k] == 1 and gs[:k] + gs[k + 1 :] == es), None)
    if squeezed_equal and len(es) == len(gs) + 1:
        missing = next(
            (k for k in range(len(es)) if es[k] == 1 and es[:k] + es[k + 1 :] == gs), None
        )
    if extra is not None and in_function:
        # squeezing the result would hide the step that adds the dimension (and break size-1 cases)
        return (
            f"it has one dimension too many (an extra size-1 dimension at dim {extra}); look "
            "for the step in your function that adds it (unsqueeze, None-indexing, keepdim=True)."
        )
    if extra is not None:
        return f"it has an extra size-1 dimension at dim {extra}; use .squeeze({extra})."
    if missing is not None:
        return (
            f"it is missing the size-1 dimension at dim {missing}; use .unsqueeze({missing}) "
            "(or keepdim=True, if a reduction made it)."
        )
    if squeezed_equal:
        return f"the sizes agree apart from size-1 dimensions; use .reshape{reshape_args(es)}."
    if gn == en and gn > 0:
        return _same_numel_detail(got, exp)
    if gs == ():
        return (
            "yours is a single number (a 0-dim tensor): did you reduce (sum, mean, @) where no "
            "reduction is expected?"
        )
    if len(gs) != len(es):
        return (
            f"it has {len(gs)} dimension{'s' * (len(gs) != 1)} but "
            f"{len(es)} {'are' if len(es) != 1 else 'is'} expected."
        )
    diffs = [
        f"dim {d} has size {g} instead of {e}"
        for d, (g, e) in enumerate(zip(gs, es, strict=True))
        if g != e
    ]
    return "; ".join(diffs) + "."


def _same_numel_detail(got: dict, exp: dict) -> str:
    gs, es = tuple(got["shape"]), tuple(exp["shape"])
    g, e = got["data"], exp["data"]
    have_values = g is not None and e is not None and g.dtype == e.dtype
    if sorted(gs) == sorted(es) and have_values and 2 <= len(gs) <= 5:
        for perm in itertools.permutations(range(len(gs))):
            if tuple(gs[p] for p in perm) == es and _all_close(g.permute(perm), e):
                if len(gs) == 2:
                    return (
                        "it is the transpose of the expected tensor; use .T (or .transpose(0, 1))."
                    )
                return f"its dimensions are in a different order; use .permute{perm}."
    if have_values and _all_close(g.reshape(-1), e.reshape(-1)):
        return (
            f"the values are right but arranged as {fmt_shape(gs)}; use .reshape{reshape_args(es)}."
        )
    if len(gs) == 2 and gs == es[::-1]:
        return "the two sizes look swapped; check the order of the sizes you asked for."
    return (
        f"it has the right number of elements ({math.prod(es)}) in a different shape; "
        "check the sizes in your reshape/view."
    )


def _broadcast_note(gs: tuple, es: tuple) -> str:
    try:
        import torch

        both = tuple(torch.broadcast_shapes(gs, es))
    except RuntimeError:
        return ""
    if math.prod(both) <= max(math.prod(gs), math.prod(es)):
        return ""
    return (
        f" Careful: the two shapes would broadcast silently to {fmt_shape(both)} in an "
        "operation such as a loss, giving a wrong number instead of an error."
    )


def _reduction_hint(got: dict, exp: dict, inputs: tuple) -> str:
    """'you reduced over dim 0 but dim 1 is expected', found by trying the usual reductions."""
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
                return (
                    f"you reduced over the right dim ({mine[0]}) but with keepdim={mine[1]}; "
                    f"use keepdim={wanted[1]}."
                )
            text = f"it looks like you reduced over dim {mine[0]}, but dim {wanted[0]} is expected"
            if mine[1] != wanted[1]:
                text += f" (with keepdim={wanted[1]})"
            return text + "."
    return ""


def _matching_reduction(op, data, target) -> tuple[int, bool] | None:
    for dim in range(data.ndim):
        for keepdim in (False, True):
            reduced = op(data, dim=dim, keepdim=keepdim)
            if reduced.shape == target.shape and reduced.dtype == target.dtype:
                if _all_close(reduced, target):
                    return dim, keepdim
    return None


# ---- dtype, autograd flags


def _function_dtype_message(got: dict, exp: dict, subject: str, inputs: tuple) -> str:
    """A function's output dtype: name the property that holds for every input, not a cast."""
    gd, ed = got["dtype"], exp["dtype"]
    text = f"{subject} has dtype torch.{gd} but torch.{ed} is expected."
    if any(kind_of(x) == "tensor" and x["dtype"] == ed for x in inputs):
        return text + (
            " Your function must work for every input: keep the input's dtype (make new "
            "tensors with dtype=x.dtype, x an input; a Python float or a literal dtype= "
            "changes it)."
        )
    return text + (
        f" Your function must return torch.{ed} for every input: convert where the task "
        "says to, not to this one input's dtype."
    )


def _dtype_message(
    got: dict, exp: dict, subject: str, rtol: float | None = None, atol: float | None = None
) -> str:
    gd, ed = got["dtype"], exp["dtype"]
    cast = _CAST_METHODS.get(ed)
    fix = f"{cast} (or .to(torch.{ed}))" if cast else f".to(torch.{ed})"
    text = f"{subject} has dtype torch.{gd} but torch.{ed} is expected: use {fix}."
    if gd.startswith("int") and ed.startswith("float"):
        text += (
            " Python integers give int64 tensors (torch.tensor([1, 2]), torch.arange(3)): "
            f"write 1.0 or pass dtype=torch.{ed} when you create it."
        )
    elif gd == "float64" and ed == "float32":
        text += " float64 usually comes from NumPy (torch.from_numpy keeps its dtype)."
    if got["data"] is not None and exp["data"] is not None:
        import torch

        rtol, atol = tolerances(ed, rtol, atol)
        converted = got["data"].to(exp["data"].dtype)
        # compare in a dtype that holds both: a truncating cast (1.5 -> 1) must not hide a gap
        common = torch.promote_types(got["data"].dtype, exp["data"].dtype)
        if _all_close(got["data"].to(common), exp["data"].to(common), rtol, atol):
            text += " The values themselves are right."
        elif (
            converted.is_floating_point()
            and exp["data"].numel() > 0
            and not _all_close(converted, exp["data"], rtol, atol)
        ):
            gap = (converted.double() - exp["data"].double()).abs().nan_to_num(nan=math.inf)
            flat = _flat_argmax(gap)
            gv, ev = converted.reshape(-1)[flat].item(), exp["data"].reshape(-1)[flat].item()
            if abs(gv - ev) > 1e-3 * max(abs(ev), 1e-6):  # far beyond rounding: a wrong value
                return text + (
                    " Besides the dtype, the values themselves are wrong (not just rounded): "
                    "fix the computation as well."
                )
            text += (
                f" Converting at the end is not enough: even converted, the values differ beyond "
                f"the tolerance (rtol={rtol:g}, atol={atol:g}; expected {fmt_number(ev, gv)}, "
                f"got {fmt_number(gv, ev)}), so compute in torch.{ed} from the start."
            )
    return text


def _flat_argmax(values) -> int:
    import torch

    return int(torch.argmax(values.reshape(-1)))


def _autograd_flags_message(got: dict, exp: dict, subject: str) -> str:
    if got["requires_grad"] and not exp["requires_grad"]:
        if got["is_leaf"]:
            return (
                f"{subject} has requires_grad=True but the expected tensor does not track "
                "gradients: it is a leaf you created with requires_grad=True (or a parameter); "
                "create it without, or freeze it with .requires_grad_(False)."
            )
        return (
            f"{subject} has requires_grad=True but the expected tensor does not track gradients: "
            "use .detach(), or compute it inside `with torch.no_grad():`."
        )
    if exp["requires_grad"] and not got["requires_grad"]:
        return (
            f"{subject} has requires_grad=False but it should track gradients: create it with "
            "requires_grad=True (or call .requires_grad_()), and do not compute it under "
            "torch.no_grad() or from a .detach()ed tensor."
        )
    if exp["requires_grad"] and exp["is_leaf"] and not got["is_leaf"]:
        return (
            f"{subject} is not a leaf tensor (it was made by {got['grad_fn']}), so backward() "
            "will not fill its .grad: create it directly with requires_grad=True, e.g. "
            "torch.randn(3, requires_grad=True), or call .detach().requires_grad_() on it."
        )
    if exp["requires_grad"] and not exp["is_leaf"] and got["is_leaf"]:
        return (
            f"{subject} is a leaf tensor, but it should be the result of an operation on "
            "tensors that require grad (it should have a grad_fn)."
        )
    return ""


# ---- values


def tolerances(dtype: str, rtol: float | None, atol: float | None) -> tuple[float, float]:
    """(rtol, atol) for a dtype: the exercise's values, else assert_close's defaults, else exact."""
    default_rtol, default_atol = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
    return (default_rtol if rtol is None else rtol, default_atol if atol is None else atol)


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


def _all_close(g, e, rtol: float | None = None, atol: float | None = None) -> bool:
    if g.shape != e.shape:
        return False
    if rtol is None or atol is None:
        rtol, atol = tolerances(dtype_name(e.dtype), rtol, atol)
    return bool(close_mask(g, e, rtol, atol).all())


def _diagnose_values(got, exp, rtol, atol, subject, inputs, grad_context) -> Diagnosis:
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
                return failed(
                    f"{subject} contains {count} {label} value{'s' * (count != 1)} (first at "
                    f"index {first}) where the expected tensor has ordinary numbers. {cause}"
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
    pattern = _value_pattern(got, exp, inputs, grad_context)
    if pattern:
        text += " " + pattern
    if total > 1:
        text += "\n" + _excerpt(g, e, index)
    return failed(text)


def _value_pattern(got: dict, exp: dict, inputs: tuple, grad_context: bool) -> str:
    """A likely cause of wrong values: transpose, sign flip, reduction dim, factor, offset.

    Patterns need at least two values (any two single numbers have a ratio and an offset);
    for a single value only a sign flip, or an exact whole-number factor in a gradient, is named.
    """
    import torch

    g, e = got["data"], exp["data"]
    if g.dtype == torch.bool or e.numel() == 0:
        return ""
    if not (bool(torch.isfinite(g).all()) and bool(torch.isfinite(e).all())):
        return ""
    single = e.numel() == 1
    e_any = bool((e != 0).any())
    if e.ndim == 2 and e.shape[0] == e.shape[1] > 1 and _all_close(g.T, e):
        return "It is the transpose of the expected tensor: use .T (or swap the dims you used)."
    if e_any and _all_close(-g, e):
        if single:
            return "It has the wrong sign: look for a flipped subtraction or a missing minus."
        return "Every value has the wrong sign: look for a flipped subtraction or a missing minus."
    reduction = _reduction_hint(got, exp, inputs)
    if reduction:
        return reduction[0].upper() + reduction[1:]
    if not e_any:
        return ""
    g64, e64 = g.double(), e.double()
    factor = float((g64 * e64).sum() / (e64 * e64).sum())
    if factor != 0 and abs(factor - 1) > 1e-3 and _all_close(g64, factor * e64, 1e-5, 1e-6):
        return _factor_text(factor, grad_context, single)
    offset = (g64 - e64).reshape(-1)[0]
    if not single and abs(float(offset)) > 1e-6:
        if _all_close(g64 - e64, offset.expand_as(e64)):
            return (
                f"Every value is off by the same amount ({fmt_number(float(offset))}): look "
                "for a constant you added or left out."
            )
    return ""


def _factor_text(factor: float, grad_context: bool, single: bool) -> str:
    whole = round(factor)
    is_whole = abs(factor - whole) < 1e-6 * max(1, abs(factor))
    if grad_context and is_whole and whole >= 2:
        subject = "Your .grad is" if single else "Every value is"
        return (
            f"{subject} exactly {whole} times the expected gradient. Gradients add up in .grad: "
            f"if backward() ran {whole} times, zero .grad in between (set .grad = None or call "
            "optimizer.zero_grad())."
        )
    if single:
        return ""
    inverse = round(1 / factor)
    if is_whole:
        shown = f"{whole} times"
    elif abs(1 / factor - inverse) < 1e-6 * max(1, abs(1 / factor)):
        shown = f"1/{inverse} of" if inverse > 0 else f"-1/{-inverse} times"
    else:
        shown = f"{fmt_number(factor)} times"
    if grad_context:
        return (
            f"Every value is {shown} the expected gradient: look for a constant factor in your "
            "derivative, or for gradients accumulated over a different number of backward() calls."
        )
    return f"Every value is {shown} the expected one: look for a constant factor."


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
