"""What is wrong with a tensor answer, checked in a fixed order that stops at the first
problem: not attempted → type → shape (never broadcast) → dtype → device →
``requires_grad`` / leaf → values (``checking.values``)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from course_helpers.checking.values import all_close, diagnose_values, reduction_hint
from course_helpers.checking.verdict import (
    Diagnosis,
    advised,
    failed,
    not_attempted,
    passed,
    tolerances,
)
from course_helpers.records import (
    describe,
    fmt_number,
    fmt_shape,
    is_missing,
    kind_of,
    python_type_name,
    reshape_args,
)

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
    context: str = "",
) -> Diagnosis:
    """The ordered diagnosis of a tensor answer (records) against the expected tensor.

    ``in_function``: see :func:`diagnose`. ``context``: what the task asks of autograd
    (``Exercise.context``: "no_graph", "keep_graph"), so that advice never contradicts it.
    Each message says what was observed, then, as ``Diagnosis.advice``, the generic fix.
    """
    got = describe(got)
    if is_missing(got):
        return not_attempted()
    if kind_of(got) != "tensor":
        return failed(_wrong_type_for_tensor(got, exp, subject, in_function))
    subject = "Your tensor" if subject == "Your answer" else subject
    inputs = tuple(describe(x) for x in inputs)
    if got["shape"] != exp["shape"]:
        observation, advice = _shape_message(got, exp, subject, inputs, in_function)
        return advised(
            observation,
            advice,
            f"The shape is {fmt_shape(got['shape'])} where {fmt_shape(exp['shape'])} is "
            "expected: after which step of your code does it first differ? Print the shape "
            "after each step to find it.",
        )
    if got["dtype"] != exp["dtype"]:
        observation, advice = (
            _function_dtype_message(got, exp, subject, inputs)
            if in_function
            else _dtype_message(got, exp, subject, rtol, atol)
        )
        return advised(
            observation,
            advice,
            f"The dtype is torch.{got['dtype']} where torch.{exp['dtype']} is expected: which "
            "step of your code decides it? Print the dtype after each step to find it.",
        )
    if device is not None and not _same_device(got["device"], device):
        return advised(
            f"{subject} is on the {got['device'].split(':')[0]} device but it should be on "
            f"the course device ({device.split(':')[0]}).",
            "Move it with .to(device).",
            _DEVICE_QUESTION,
        )
    if in_function and got["device"] != exp["device"]:
        return advised(
            f"{subject} is on the {got['device']!r} device, but the expected output is on "
            f"{exp['device']!r}, the device of the inputs.",
            "Create new tensors with device=x.device (x: an input), or move them with "
            ".to(x.device).",
            _DEVICE_QUESTION,
        )
    flags = _autograd_flags_message(got, exp, subject, context)
    values_wrong = (  # a recorded result with wrong values: the values are the first thing
        flags is not None
        and not got["is_leaf"]
        and got["data"] is not None
        and exp["data"] is not None
        and not diagnose_values(got, exp, rtol, atol, subject, inputs, grad_context).passed
    )
    if flags is not None and not values_wrong:
        # (a result whose values are wrong as well: its values are named first, its graph
        # once they are right; a leaf that requires grad is a form to fix at once)
        return advised(*flags, _graph_question(got, exp))
    if exp["data"] is None and got["data"] is None:
        return passed()  # two 'meta' tensors: shape, dtype and device are all there is
    if got["data"] is None:
        return failed(f"{subject} has no values to compare (it lives on the 'meta' device).")
    if exp["data"] is None:
        return failed(
            f"{subject} is on the {got['device']!r} device, but a 'meta' tensor (shape and dtype "
            "only, no values) is expected."
        )
    return diagnose_values(got, exp, rtol, atol, subject, inputs, grad_context)


# the first hint after a wrong shape, dtype, device or autograd flag: a question about the
# mistake the verdict named, claiming nothing the answer does not show (issue 34)
_DEVICE_QUESTION = (
    "On which device does each tensor your code makes start out, and which step moves it "
    "where the task wants it?"
)


def _graph_question(got: dict, exp: dict) -> str:
    if got["requires_grad"] and not exp["requires_grad"]:
        return "Your answer still records a graph: which step of your code runs with recording on?"
    if exp["requires_grad"] and not got["requires_grad"]:
        return (
            "Your answer does not track gradients: does it come from a tensor that requires "
            "grad, and does any step cut it off from the graph?"
        )
    return (
        "Should your answer be a tensor you created yourself (a leaf), or the result of an "
        "operation on tensors that require grad?"
    )


def _wrong_type_for_tensor(got: Any, exp: dict, subject: str, in_function: bool = False) -> str:
    kind = kind_of(got)
    want = f"a tensor of shape {fmt_shape(exp['shape'])} ({exp['dtype']})"
    owner = "Your answer" if subject in ("Your tensor", "Your answer") else subject
    dtype_arg = f", dtype=torch.{exp['dtype']}"
    if kind in ("list", "tuple") and any(kind_of(i) == "tensor" for i in got["items"]):
        return (
            f"{owner} is {python_type_name(got)}, but {want} is expected: "
            f"combine them with torch.stack(your_{kind}) (or torch.cat for one long tensor)."
        )
    if kind in ("list", "tuple"):
        return (
            f"{owner} is {python_type_name(got)}, but {want} is expected: "
            f"wrap it with torch.tensor(your_{kind}{dtype_arg})."
        )
    if in_function and kind in ("ndarray", "numpy_scalar"):
        value = f" ({fmt_number(got['value'])})" if kind == "numpy_scalar" else ""
        return (
            f"{owner} is {python_type_name(got)}{value}, but {want} is expected: keep the "
            "computation in torch (a NumPy function, or .numpy(), gives NumPy values, with no "
            "place in the autograd graph)."
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


# the fix for a function's output of the wrong shape: it must hold for every input
FUNCTION_SHAPE_ADVICE = (
    "Your function must work for every input, so reshaping its result to this input's sizes "
    "is not the fix: find the step after which the shape first differs from the expected one "
    "(print the shape after each step)."
)
_SIZE_FIXES = ("Use .reshape", "Use .squeeze", "Use .unsqueeze")  # fixes for these sizes only


def _shape_message(
    got: dict, exp: dict, subject: str, inputs: tuple, in_function: bool = False
) -> tuple[str, str]:
    """(what was observed, the generic fix) for a tensor of the wrong shape."""
    gs, es = tuple(got["shape"]), tuple(exp["shape"])
    head = f"{subject} has shape {fmt_shape(gs)} but {fmt_shape(es)} is expected"
    reduction = reduction_hint(got, exp, inputs)
    if reduction:  # read from the values: the observation holds its own fix
        observation, advice = reduction.rstrip("."), ""
    else:
        observation, advice = _shape_detail(got, exp, in_function)
        if in_function and advice.startswith(_SIZE_FIXES):  # a fix for this input's sizes
            advice = FUNCTION_SHAPE_ADVICE
            observation += _same_as_an_input(gs, inputs)
    return f"{head}: {observation}.{_broadcast_note(gs, es)}", advice


def _same_as_an_input(shape: tuple, inputs: tuple) -> str:
    """A note when the output has the shape of one of the function's inputs."""
    if any(kind_of(x) == "tensor" and tuple(x["shape"]) == shape for x in inputs):
        return " (for this input, your output has the input's own shape)"
    return ""


def _close_number(value, exp: dict) -> bool:
    try:
        number = complex(value)
        target = complex(exp["data"].item())
    except (TypeError, ValueError):
        return True
    return abs(number - target) <= 1e-5 * max(abs(target), 1.0)


def _shape_detail(got: dict, exp: dict, in_function: bool = False) -> tuple[str, str]:
    """(what the two shapes show, the fix for a value); for a function the caller replaces a
    fix made for this input's sizes (it would break the others)."""
    gs, es = tuple(got["shape"]), tuple(exp["shape"])
    gn, en = math.prod(gs), math.prod(es)
    if es == () and gn == 1:
        return (
            "a 0-dim tensor (a single number, shape ()) is expected, not a 1-element tensor",
            "Use .squeeze() (or .sum() / .mean() if you meant to reduce).",
        )
    if gs == () and en == 1:
        return "yours is a 0-dim tensor (shape ())", f"Use .reshape{reshape_args(es)}."
    squeezed_equal = tuple(d for d in gs if d != 1) == tuple(d for d in es if d != 1)
    extra = missing = None
    if squeezed_equal and len(gs) == len(es) + 1:
        extra = next((k for k in range(len(gs)) if gs[k] == 1 and gs[:k] + gs[k + 1 :] == es), None)
    if squeezed_equal and len(es) == len(gs) + 1:
        missing = next(
            (k for k in range(len(es)) if es[k] == 1 and es[:k] + es[k + 1 :] == gs), None
        )
    if extra is not None and in_function:
        return f"it has one dimension too many (an extra size-1 dimension at dim {extra})", (
            f"Use .squeeze({extra})."  # replaced by the caller: it holds for these sizes only
        )
    if extra is not None:
        return f"it has an extra size-1 dimension at dim {extra}", f"Use .squeeze({extra})."
    if missing is not None:
        return (
            f"it is missing the size-1 dimension at dim {missing}",
            f"Use .unsqueeze({missing}) (or keepdim=True, if a reduction made it).",
        )
    if squeezed_equal:
        return "the sizes agree apart from size-1 dimensions", f"Use .reshape{reshape_args(es)}."
    if gn == en and gn > 0:
        return _same_numel_detail(got, exp)
    if gs == ():
        return "yours is a single number (a 0-dim tensor)", ""
    if len(gs) != len(es):
        return (
            f"it has {len(gs)} dimension{'s' * (len(gs) != 1)} but "
            f"{len(es)} {'are' if len(es) != 1 else 'is'} expected",
            "",
        )
    diffs = [
        f"dim {d} has size {g} instead of {e}"
        for d, (g, e) in enumerate(zip(gs, es, strict=True))
        if g != e
    ]
    return "; ".join(diffs), ""


def _same_numel_detail(got: dict, exp: dict) -> tuple[str, str]:
    gs, es = tuple(got["shape"]), tuple(exp["shape"])
    g, e = got["data"], exp["data"]
    have_values = g is not None and e is not None and g.dtype == e.dtype
    if sorted(gs) == sorted(es) and have_values and 2 <= len(gs) <= 5:
        for perm in itertools.permutations(range(len(gs))):
            if tuple(gs[p] for p in perm) == es and all_close(g.permute(perm), e):
                if len(gs) == 2:
                    return (
                        "it is the transpose of the expected tensor",
                        "Use .T (or .transpose(0, 1)).",
                    )
                return "its dimensions are in a different order", f"Use .permute{perm}."
    if have_values and all_close(g.reshape(-1), e.reshape(-1)):
        return (
            f"the values are right but arranged as {fmt_shape(gs)}",
            f"Use .reshape{reshape_args(es)}.",
        )
    if len(gs) == 2 and gs == es[::-1]:
        return "the two sizes look swapped", "Check the order of the sizes you asked for."
    return f"it has the right number of elements ({math.prod(es)}) in a different shape", ""


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


def _function_dtype_message(got: dict, exp: dict, subject: str, inputs: tuple) -> tuple[str, str]:
    """A function's output dtype: name the property that holds for every input, not a cast."""
    gd, ed = got["dtype"], exp["dtype"]
    text = f"{subject} has dtype torch.{gd} but torch.{ed} is expected."
    tensors = [x for x in inputs if kind_of(x) == "tensor"]
    matching = [x for x in tensors if x["dtype"] == ed]
    if matching and len(matching) < len(tensors):  # the task takes one input's dtype
        return text, (
            f"Your function must work for every input: take the dtype from the input that "
            f"has torch.{ed} here (dtype=that_input.dtype, or .to(that_input)), not from a "
            "literal dtype= or another input."
        )
    if matching:
        return text, (
            "Your function must work for every input: keep the input's dtype (make new "
            "tensors with dtype=x.dtype, x an input; a Python float or a literal dtype= "
            "changes it)."
        )
    if any(x["dtype"] == gd for x in tensors):  # the output kept the input's dtype
        return text + " It is the input's own dtype here.", (
            f"Your function must return torch.{ed} for every input: convert where the task says to."
        )
    return text, f"Your function must return torch.{ed} for every input."


def _dtype_message(
    got: dict, exp: dict, subject: str, rtol: float | None = None, atol: float | None = None
) -> tuple[str, str]:
    gd, ed = got["dtype"], exp["dtype"]
    cast = _CAST_METHODS.get(ed)
    fix = f"Use {cast} (or .to(torch.{ed}))." if cast else f"Use .to(torch.{ed})."
    text = f"{subject} has dtype torch.{gd} but torch.{ed} is expected."
    if gd.startswith("int") and ed.startswith("float"):
        fix += (
            " Python integers give int64 tensors (torch.tensor([1, 2]), torch.arange(3)): "
            f"write 1.0 or pass dtype=torch.{ed} when you create it."
        )
    if got["data"] is not None and exp["data"] is not None:
        import torch

        rtol, atol = tolerances(ed, rtol, atol)
        converted = got["data"].to(exp["data"].dtype)
        # compare in a dtype that holds both: a truncating cast (1.5 -> 1) must not hide a gap
        common = torch.promote_types(got["data"].dtype, exp["data"].dtype)
        if all_close(got["data"].to(common), exp["data"].to(common), rtol, atol):
            text += " The values themselves are right."
        elif (
            converted.is_floating_point()
            and exp["data"].numel() > 0
            and not all_close(converted, exp["data"], rtol, atol)
        ):
            gap = (converted.double() - exp["data"].double()).abs().nan_to_num(nan=math.inf)
            flat = _flat_argmax(gap)
            gv, ev = converted.reshape(-1)[flat].item(), exp["data"].reshape(-1)[flat].item()
            if abs(gv - ev) > 1e-3 * max(abs(ev), 1e-6):  # far beyond rounding: a wrong value
                wrong = " Besides the dtype, the values themselves are wrong (not just rounded)."
                return text + wrong, "Fix the computation as well."
            text += (
                f" Even converted, the values differ beyond the tolerance (rtol={rtol:g}, "
                f"atol={atol:g}; expected {fmt_number(ev, gv)}, got {fmt_number(gv, ev)})."
            )
            fix = f"Converting at the end is not enough: compute in torch.{ed} from the start."
    return text, fix


def _autograd_flags_message(
    got: dict, exp: dict, subject: str, context: str = ""
) -> tuple[str, str] | None:
    """(what was observed, the fix that holds for this task's ``context``) for a tensor whose
    autograd flags differ from the expected one's; None when they agree."""
    if got["requires_grad"] and not exp["requires_grad"]:
        if got["is_leaf"]:
            return (
                f"{subject} has requires_grad=True but the expected tensor does not track "
                "gradients: it is a leaf that requires grad (a parameter, or a tensor you "
                "created with requires_grad=True).",
                "Hand in a detached copy, .detach(), or create it without requires_grad=True; "
                ".requires_grad_(False) would change the tensor itself (a parameter would stop "
                "training).",
            )
        observed = (
            f"{subject} has requires_grad=True (it was recorded in a graph, grad_fn "
            f"{got['grad_fn']}) but the expected tensor does not track gradients."
        )
        if context == "no_graph":
            return observed, (
                "Compute it under `with torch.no_grad():` so that no graph is recorded (a "
                ".detach() at the end still records one first)."
            )
        if context == "keep_graph":
            return observed, ""  # a graph is the point of the task: no general fix holds
        return observed, "Use .detach(), or compute it inside `with torch.no_grad():`."
    if exp["requires_grad"] and not got["requires_grad"]:
        observed = f"{subject} has requires_grad=False but it should track gradients."
        if exp["is_leaf"] and context != "keep_graph":
            return observed, (
                "Create it with requires_grad=True (or call .requires_grad_()), and do not "
                "compute it under torch.no_grad() or from a .detach()ed tensor."
            )
        return observed, (
            "It must stay connected to the graph: build it with torch operations from the "
            "tensors that require grad, with recording on (a tensor made anew from its "
            "numbers, or a .detach()ed one, has no history, and a new leaf with "
            "requires_grad=True would be cut off from them too)."
        )
    if exp["requires_grad"] and exp["is_leaf"] and not got["is_leaf"]:
        return (
            f"{subject} is not a leaf tensor (it was made by {got['grad_fn']}), so backward() "
            "will not fill its .grad.",
            "Create it directly with requires_grad=True, e.g. torch.randn(3, requires_grad=True), "
            "or call .detach().requires_grad_() on it.",
        )
    if exp["requires_grad"] and not exp["is_leaf"] and got["is_leaf"]:
        return (
            f"{subject} is a leaf tensor, but it should be the result of an operation on "
            "tensors that require grad (it should have a grad_fn).",
            "",
        )
    return None


def _flat_argmax(values) -> int:
    import torch

    return int(torch.argmax(values.reshape(-1)))
