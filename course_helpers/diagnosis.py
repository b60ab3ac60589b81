"""What is wrong with an answer, in one sentence: the heart of the checker.

Answers and references are first turned into *records* by :func:`describe`: plain
dicts of CPU tensors and Python values that survive ``torch.save`` and
``torch.load(weights_only=True)``. The same code therefore judges an answer in the
learner's kernel and, for grading, in a separate process that never trusts the kernel.

:func:`diagnose` checks in a fixed order and stops at the first problem:
not attempted → type → shape (never broadcast) → dtype → device →
``requires_grad`` / leaf → NaN/Inf → values.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

STATUSES = ("passed", "failed", "not_attempted", "error")

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
    """The verdict on one answer: a status (see ``STATUSES``) and a plain-text message."""

    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def passed(message: str = "Correct.") -> Diagnosis:
    return Diagnosis("passed", message)


def failed(message: str) -> Diagnosis:
    return Diagnosis("failed", message)


def not_attempted(message: str = NOT_ATTEMPTED_MESSAGE) -> Diagnosis:
    return Diagnosis("not_attempted", message)


# --------------------------------------------------------------------------- records


def describe(obj: Any) -> Any:
    """A serialisable record of ``obj`` holding everything the diagnosis needs.

    Python numbers, strings and bools are kept as they are; everything else becomes a
    dict with a ``"_r"`` key naming what it was (``"tensor"``, ``"list"``, ``"dtype"``...).
    Tensors are copied to the CPU, so later changes to the answer do not affect the record.
    """
    if is_record(obj) or isinstance(obj, (bool, int, float, complex, str)):
        return obj
    if obj is Ellipsis:
        return {"_r": "ellipsis"}
    if obj is None:
        return {"_r": "none"}
    import torch

    if isinstance(obj, torch.Tensor):
        return _describe_tensor(obj)
    if isinstance(obj, torch.Size):
        return {"_r": "shape", "value": tuple(int(d) for d in obj)}
    if isinstance(obj, torch.dtype):
        return {"_r": "dtype", "name": dtype_name(obj)}
    if isinstance(obj, torch.device):
        return {"_r": "device", "name": str(obj)}
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return {"_r": "exception_class", "name": obj.__name__}
    if isinstance(obj, BaseException):
        return {"_r": "exception", "name": type(obj).__name__, "message": str(obj)}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {"_r": kind, "items": [describe(item) for item in obj]}
    if isinstance(obj, dict):
        return {
            "_r": "dict",
            "keys": [describe(k) for k in obj],
            "values": [describe(v) for v in obj.values()],
        }
    if isinstance(obj, (set, frozenset)):
        return {"_r": "set", "items": sorted((describe(i) for i in obj), key=repr)}
    if type(obj).__module__ == "numpy" and hasattr(obj, "dtype") and hasattr(obj, "shape"):
        if obj.shape == ():
            return {"_r": "numpy_scalar", "dtype": str(obj.dtype), "value": obj.item()}
        return {"_r": "ndarray", "dtype": str(obj.dtype), "shape": tuple(obj.shape)}
    if callable(obj):
        return {"_r": "callable", "name": getattr(obj, "__name__", type(obj).__name__)}
    return {"_r": "object", "name": type(obj).__name__}


def is_record(obj: Any) -> bool:
    return isinstance(obj, dict) and "_r" in obj


def _describe_tensor(t) -> dict:
    import torch

    try:
        version = int(t._version)
    except RuntimeError:  # inference tensors have no version counter
        version = None
    is_leaf = bool(t.is_leaf)
    record = {
        "_r": "tensor",
        "shape": tuple(int(d) for d in t.shape),
        "dtype": dtype_name(t.dtype),
        "device": str(t.device),
        "requires_grad": bool(t.requires_grad),
        "is_leaf": is_leaf,
        "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        "version": version,
        "grad": None,
        "data": None,
    }
    data = t.detach()
    if data.layout != torch.strided:
        data = data.to_dense()
    if data.device.type != "meta":
        data = data.cpu().resolve_conj().resolve_neg()
        record["data"] = data.clone(memory_format=torch.contiguous_format)
    if is_leaf or t.retains_grad:
        grad = t.grad
        if grad is not None:
            record["grad"] = _describe_tensor(grad)
    return record


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def kind_of(record: Any) -> str:
    """``"tensor"``, ``"number"``, ``"bool"``, ``"str"``, ``"list"``... for a record."""
    if isinstance(record, bool):
        return "bool"
    if isinstance(record, (int, float)):
        return "number"
    if isinstance(record, complex):
        return "complex"
    if isinstance(record, str):
        return "str"
    if is_record(record):
        return record["_r"]
    return "object"


def is_missing(record: Any) -> bool:
    """``...`` or ``None``: the learner has not answered yet."""
    return kind_of(record) in ("ellipsis", "none")


# --------------------------------------------------------------------------- formatting


def fmt_shape(shape) -> str:
    return str(tuple(int(d) for d in shape))


def reshape_args(shape) -> str:
    """'(3, 4)' for .reshape(3, 4), '(3)' for .reshape(3), '(())' for a 0-dim result."""
    shape = tuple(int(d) for d in shape)
    return "(" + ", ".join(str(d) for d in shape) + ")" if shape else "(())"


def fmt_index(index) -> str:
    index = tuple(index)
    return str(index) if len(index) != 1 else f"({index[0]},)"


def fmt_number(value, other=None) -> str:
    """A short, stable form of a number; more digits when needed to tell it from ``other``."""
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    if isinstance(value, complex):
        return f"({fmt_number(value.real)}{'+' if value.imag >= 0 else '-'}{abs(value.imag):.4g}j)"
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = ""
    for digits in (4, 6, 8, 10, 17):
        text = _float_text(value, digits)
        if other is None or isinstance(other, complex) or text != _float_text(other, digits):
            break
    return text


def _float_text(value: float, digits: int) -> str:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return fmt_number(value)
    text = f"{value:.{digits}g}"
    if "e" not in text and "." not in text and "n" not in text:
        text += ".0"
    return text


def fmt_values(data) -> str:
    """Nested-list text of a small CPU tensor with short numbers."""
    return _fmt_nested(data.tolist())


def _fmt_nested(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_fmt_nested(v) for v in value) + "]"
    return fmt_number(value)


def python_type_name(record: Any) -> str:
    """How the learner would call the type of the answer: 'a Python list', 'a NumPy array'..."""
    kind = kind_of(record)
    names = {
        "bool": "a Python bool",
        "str": "a string",
        "complex": "a Python complex number",
        "list": "a Python list",
        "tuple": "a Python tuple",
        "dict": "a dict",
        "set": "a set",
        "shape": "a torch.Size",
        "dtype": "a dtype",
        "device": "a torch.device",
        "exception_class": "an exception class",
        "exception": "an exception object",
        "ellipsis": "`...`",
        "none": "None",
        "tensor": "a tensor",
    }
    if kind == "number":
        return f"a Python {type(record).__name__}"
    if kind == "ndarray":
        return f"a NumPy array ({record['dtype']})"
    if kind == "numpy_scalar":
        return f"a NumPy scalar ({record['dtype']})"
    if kind == "callable":
        return f"a function ({record['name']})"
    if kind == "object":
        return f"a {record['name']} object"
    return names.get(kind, kind)


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
) -> Diagnosis:
    """Compare ``answer`` with ``expected`` (objects or records) and name the first problem.

    ``device``: when given (e.g. ``"cuda"``), a tensor answer must live there; by default
    the device is not checked and values are compared on the CPU.
    ``inputs``: tensors the answer was computed from (lets the diagnosis spot a reduction
    over the wrong dimension). ``grad_context``: the tensors are gradients (explains a
    constant factor as accumulation).
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
        )
    if kind == "number":
        return _diagnose_number(got, exp, rtol=rtol, atol=atol, subject=subject)
    if kind in ("tuple", "list"):
        return _diagnose_sequence(got, exp, rtol=rtol, atol=atol, device=device, subject=subject)
    if kind == "dict":
        return _diagnose_mapping(got, exp, rtol=rtol, atol=atol, device=device, subject=subject)
    return diagnose_prediction(got, exp, rtol=rtol, atol=atol)


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
) -> Diagnosis:
    """The ordered diagnosis of a tensor answer (records) against the expected tensor."""
    got = describe(got)
    if is_missing(got):
        return not_attempted()
    if kind_of(got) != "tensor":
        return failed(_wrong_type_for_tensor(got, exp, subject))
    subject = "Your tensor" if subject == "Your answer" else subject
    inputs = tuple(describe(x) for x in inputs)
    if got["shape"] != exp["shape"]:
        return failed(_shape_message(got, exp, subject, inputs))
    if got["dtype"] != exp["dtype"]:
        return failed(_dtype_message(got, exp, subject))
    if device is not None and not _same_device(got["device"], device):
        return failed(
            f"{subject} is on the {got['device'].split(':')[0]} device but it should be on "
            f"the course device ({device.split(':')[0]}): move it with .to(device)."
        )
    problem = _autograd_flags_message(got, exp, subject)
    if problem:
        return failed(problem)
    if got["data"] is None or exp["data"] is None:
        return failed(f"{subject} has no values to compare (it lives on the 'meta' device).")
    return _diagnose_values(got, exp, rtol, atol, subject, inputs, grad_context)


def _wrong_type_for_tensor(got: Any, exp: dict, subject: str) -> str:
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
    if kind in ("number", "bool", "numpy_scalar", "complex"):
        value = got["value"] if kind == "numpy_scalar" else got
        inner = fmt_number(value)
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
    return f"{owner} is {python_type_name(got)}, but {want} is expected."


def _same_device(got: str, want: str) -> bool:
    if ":" in want:
        return got == want or (got == want.split(":")[0] and want.endswith(":0"))
    return got.split(":")[0] == want


# ---- shape


def _shape_message(got: dict, exp: dict, subject: str, inputs: tuple) -> str:
    gs, es = tuple(got["shape"]), tuple(exp["shape"])
    head = f"{subject} has shape {fmt_shape(gs)} but {fmt_shape(es)} is expected"
    detail = _reduction_hint(got, exp, inputs) or _shape_detail(got, exp)
    return f"{head}: {detail}{_broadcast_note(gs, es)}"


def _shape_detail(got: dict, exp: dict) -> str:
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


def _dtype_message(got: dict, exp: dict, subject: str) -> str:
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
        cast_back = got["data"].to(exp["data"].dtype)
        if _all_close(cast_back, exp["data"]):
            text += " The values themselves are right."
    return text


def _autograd_flags_message(got: dict, exp: dict, subject: str) -> str:
    if got["requires_grad"] and not exp["requires_grad"]:
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
    return (
        f"Every value is {shown} the expected one: look for a constant factor, e.g. a "
        "mean where a sum is expected (or the reverse), or a factor missing from a derivative."
    )


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


# --------------------------------------------------------------------------- other answers


def _diagnose_number(got, exp, *, rtol, atol, subject) -> Diagnosis:
    kind = kind_of(got)
    if kind == "numpy_scalar":
        got, kind = got["value"], kind_of(got["value"])
    if kind == "tensor":
        if math.prod(got["shape"]) == 1:
            return failed(
                f"{subject} is a tensor, but a Python number is expected: take the number out "
                "with .item()."
            )
        return failed(
            f"{subject} is a tensor of shape {fmt_shape(got['shape'])}, but a single Python "
            "number is expected."
        )
    if kind != "number":
        return failed(f"{subject} is {python_type_name(got)}, but a Python number is expected.")
    if isinstance(exp, int) and isinstance(got, int):
        ok = got == exp
    else:
        default_rtol, default_atol = PYTHON_FLOAT_TOLERANCE
        r = default_rtol if rtol is None else rtol
        a = default_atol if atol is None else atol
        ok = (math.isnan(exp) and math.isnan(got)) or abs(got - exp) <= a + r * abs(exp)
    if ok:
        return passed()
    text = f"{subject} is {fmt_number(got, exp)} but {fmt_number(exp, got)} is expected."
    if exp != 0 and got == -exp:
        text += " It has the wrong sign."
    return failed(text)


def _diagnose_sequence(got, exp, *, rtol, atol, device, subject) -> Diagnosis:
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
    if len(got["items"]) != len(exp["items"]):
        return failed(
            f"{subject} has {len(got['items'])} items but {len(exp['items'])} are expected."
        )
    for i, (g_item, e_item) in enumerate(zip(got["items"], exp["items"], strict=True)):
        label = f"Item {i} of your {kind}"
        result = diagnose(g_item, e_item, rtol=rtol, atol=atol, device=device, subject=label)
        if result.status == "not_attempted":
            return not_attempted(f"{label} is still `...`: fill it in and run the cell again.")
        if not result.passed:
            return _labelled(result, label)
    return passed()


def _labelled(result: Diagnosis, label: str) -> Diagnosis:
    if result.message.startswith(label):
        return result
    return Diagnosis(result.status, f"{label}: {result.message}")


def _diagnose_mapping(got, exp, *, rtol, atol, device, subject) -> Diagnosis:
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
            mine[key][1], expected_value, rtol=rtol, atol=atol, device=device, subject=label
        )
        if not result.passed:
            return _labelled(result, label)
    return passed()


def diagnose_prediction(got: Any, exp: Any, *, rtol=None, atol=None) -> Diagnosis:
    """A "predict the output" answer: says whether it is right without revealing the answer."""
    got, exp = describe(got), describe(exp)
    if is_missing(got):
        return not_attempted()
    want = kind_of(exp)
    if want == "tensor":
        return diagnose_tensor(got, exp, rtol=rtol, atol=atol)
    shape_like = want == "shape" or (
        want == "tuple"
        and all(isinstance(i, int) and not isinstance(i, bool) for i in exp["items"])
    )
    if shape_like:
        target = tuple(exp["value"] if want == "shape" else exp["items"])
        mine = _as_int_tuple(got)
        if mine is None:
            return failed(
                f"Your answer is {python_type_name(got)}; "
                "answer with a tuple of sizes such as (2, 3)."
            )
        if mine == target:
            return passed()
        if len(mine) != len(target):
            return failed(
                f"{fmt_shape(mine)} is not it: the answer has {len(target)} "
                f"dimension{'s' * (len(target) != 1)}, yours has {len(mine)}."
            )
        return failed(
            f"{fmt_shape(mine)} is not it: run the code and compare with your prediction."
        )
    if want == "dtype":
        mine = got["name"] if kind_of(got) == "dtype" else None
        if isinstance(got, str):
            mine = got.strip().removeprefix("torch.")
        if mine is None:
            return failed(
                f"Your answer is {python_type_name(got)}; "
                "answer with a dtype such as torch.float32."
            )
        if mine == exp["name"]:
            return passed()
        return failed(f"torch.{mine} is not it: run the code and look at the result's .dtype.")
    if want == "bool":
        if kind_of(got) != "bool":
            return failed(f"Your answer is {python_type_name(got)}; answer True or False.")
        return (
            passed()
            if got == exp
            else failed(f"{got} is not right: think again, then run the code.")
        )
    if want == "number":
        if kind_of(got) not in ("number", "numpy_scalar"):
            return failed(f"Your answer is {python_type_name(got)}; answer with a number.")
        value = got["value"] if kind_of(got) == "numpy_scalar" else got
        result = _diagnose_number(value, exp, rtol=rtol, atol=atol, subject="Your answer")
        if result.passed:
            return result
        return failed(
            f"{fmt_number(value)} is not it: run the code and compare with your prediction."
        )
    if want == "str":
        if kind_of(got) != "str":
            return failed(f"Your answer is {python_type_name(got)}; answer with a string.")
        if got.strip().lower() == exp.strip().lower():
            return passed()
        return failed(f"{got!r} is not right: think again, then run the code.")
    if want in ("tuple", "list"):
        if kind_of(got) not in ("tuple", "list"):
            return failed(
                f"Your answer is {python_type_name(got)}; answer with a {want} of "
                f"{len(exp['items'])} items."
            )
        if len(got["items"]) != len(exp["items"]):
            return failed(
                f"The answer has {len(exp['items'])} items, yours has {len(got['items'])}."
            )
        for i, (g_item, e_item) in enumerate(zip(got["items"], exp["items"], strict=True)):
            result = diagnose_prediction(g_item, e_item, rtol=rtol, atol=atol)
            if not result.passed:
                return _labelled(result, f"Item {i} of your answer")
        return passed()
    if want in ("object", "callable", "ndarray"):
        return Diagnosis(
            "error",
            f"The checker cannot compare answers with {python_type_name(exp)}: this exercise "
            "needs a different reference (a bug in the course, not in your answer).",
        )
    if got == exp:
        return passed()
    return failed(
        f"Your answer ({python_type_name(got)}) is not right: think again, then run the code."
    )


def _as_int_tuple(record: Any) -> tuple | None:
    kind = kind_of(record)
    if kind == "shape":
        return tuple(record["value"])
    if kind in ("tuple", "list"):
        items = record["items"]
        if all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            return tuple(items)
    return None
