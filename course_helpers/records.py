"""Answers as plain records, and the short texts that messages use for their parts.

:func:`describe` turns any answer or reference into a *record*: Python numbers, strings
and bools as they are, everything else a dict of CPU tensors and Python values with a
``"_r"`` key naming what it was. Records survive ``torch.save`` and
``torch.load(weights_only=True)``, so the same diagnosis runs in the learner's kernel and
in a grader's process that never trusts that kernel.
"""

from __future__ import annotations

import math
from typing import Any

# --------------------------------------------------------------------------- records


MAX_ANSWER_DEPTH = 100  # levels of nested lists/tuples/dicts an answer may have
MAX_EXPANDED_MB = 64  # a view larger than this, over far less storage, is refused


def describe(obj: Any, _depth: int = 0) -> Any:
    """A serialisable record of ``obj`` holding everything the diagnosis needs.

    Python numbers, strings and bools are kept as they are; everything else becomes a
    dict with a ``"_r"`` key naming what it was (``"tensor"``, ``"list"``, ``"dtype"``...).
    Tensors are copied to the CPU, so later changes to the answer do not affect the record.
    """
    if is_record(obj) or type(obj) in (bool, int, float, complex, str):
        return obj
    if _numpy_number(obj):  # np.float64 is a float subclass, np.int64 is not: both named
        return {"_r": "numpy_scalar", "dtype": str(obj.dtype), "value": obj.item()}
    if isinstance(obj, (int, float, complex, str)):
        return _plain(obj)  # np.str_, a str or int Enum: saved as Python's own
    if _depth > MAX_ANSWER_DEPTH:
        from course_helpers.errors import CourseError

        raise CourseError(
            f"The answer is nested more than {MAX_ANSWER_DEPTH} levels deep, or contains "
            "itself (a list appended to itself): answer with the value the exercise asks for."
        )
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
        return {"_r": kind, "items": [describe(item, _depth + 1) for item in obj]}
    if isinstance(obj, dict):
        return {
            "_r": "dict",
            "keys": [describe(k, _depth + 1) for k in obj],
            "values": [describe(v, _depth + 1) for v in obj.values()],
        }
    if isinstance(obj, (set, frozenset)):
        return {"_r": "set", "items": sorted((describe(i, _depth + 1) for i in obj), key=repr)}
    if type(obj).__module__ == "numpy" and hasattr(obj, "dtype") and hasattr(obj, "shape"):
        if obj.shape == ():  # a 0-d array: judged like a NumPy scalar, named as an array
            value = obj.item()
            if isinstance(value, (bool, int, float, complex)):
                return {"_r": "numpy_scalar", "dtype": str(obj.dtype), "value": value, "array": 1}
        return {"_r": "ndarray", "dtype": str(obj.dtype), "shape": tuple(obj.shape)}
    if isinstance(obj, torch.nn.Module):  # callable too, but never "a function"
        return {"_r": "module", "name": type(obj).__name__}
    if callable(obj):
        return {"_r": "callable", "name": getattr(obj, "__name__", type(obj).__name__)}
    return {"_r": "object", "name": type(obj).__name__}


def _numpy_number(obj: Any) -> bool:
    """A NumPy scalar number or bool (np.float64, np.int32, np.bool_), not a string."""
    if type(obj).__module__ != "numpy" or type(obj).__name__ == "ndarray":
        return False
    if not hasattr(obj, "dtype") or getattr(obj, "shape", 1) != ():
        return False
    return getattr(obj.dtype, "kind", "") in "biufc"


def _plain(obj: Any) -> Any:
    """A subclass of a Python number or string as that plain type (its subclass would not
    load with ``weights_only=True``, and the whole answer log with it)."""
    for kind in (int, float, complex, str):
        if isinstance(obj, kind):
            try:
                return str.__str__(obj) if kind is str else kind(obj)
            except Exception:
                break
    return {"_r": "object", "name": type(obj).__name__}


def is_record(obj: Any) -> bool:
    return isinstance(obj, dict) and "_r" in obj


def _describe_tensor(t) -> dict:
    import torch

    from course_helpers.errors import CourseError

    if t.is_quantized:
        raise CourseError(
            f"The answer is a quantized tensor ({dtype_name(t.dtype)}); the exercises compare "
            "ordinary tensors: pass x.dequantize() (or the float tensor you quantized)."
        )
    if t.layout == torch.strided and t.device.type != "meta":
        logical = t.numel() * t.element_size()
        stored = t.untyped_storage().nbytes()
        if logical > MAX_EXPANDED_MB * 2**20 and logical > 1000 * max(stored, 1):
            raise CourseError(
                f"The answer is a view of {t.numel()} elements over only {stored} bytes of "
                "storage (made by expand() or broadcasting): recording it would copy "
                f"{logical // 2**20} MiB. Answer with the tensor the task asks for."
            )

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
    """A short, stable form of a number (4 significant digits).

    With ``other`` (the number it is compared with), as many digits as it takes for the
    two to look as different as they are: 12.006 vs 12.000001, not 12.01 vs 12.0.
    """
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    if isinstance(value, complex):
        return f"({fmt_number(value.real)}{'+' if value.imag >= 0 else '-'}{abs(value.imag):.4g}j)"
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if other is None or isinstance(other, (complex, bool)):
        return _float_text(value, 4)
    for digits in _DIGIT_STEPS:
        if _pair_is_clear(float(value), float(other), digits):
            break
    return _float_text(value, digits)


_DIGIT_STEPS = (4, 6, 8, 10, 12, 17)


def _pair_is_clear(a: float, b: float, digits: int) -> bool:
    """Shown with ``digits`` significant digits, do ``a`` and ``b`` look as different as they are?

    Both texts must differ, each must be off by at most a tenth of the gap between them, and
    a value that is not a whole number must not look like one ("12.0" for 12.000001).
    """
    text_a, text_b = _float_text(a, digits), _float_text(b, digits)
    if text_a == text_b:
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return True
    gap = abs(a - b)
    for value, text in ((a, text_a), (b, text_b)):
        shown = float(text)
        if abs(shown - value) > gap / 10:
            return False
        if shown.is_integer() and not value.is_integer():
            return False
    return True


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
    """The form of an answer, as the learner would name it: 'a Python float', 'a NumPy
    float64', 'a 0-d tensor', 'a tuple of 3 0-d tensors', 'a NumPy array (float64, shape
    (3,))'. Containers name the form of their items, so that a message about the form
    names the form the answer really has."""
    kind = kind_of(record)
    names = {
        "bool": "a Python bool",
        "str": "a string",
        "complex": "a Python complex number",
        "dict": "a dict",
        "set": "a set",
        "shape": "a torch.Size",
        "dtype": "a dtype",
        "device": "a torch.device",
        "exception_class": "an exception class",
        "exception": "an exception object",
        "ellipsis": "`...`",
        "none": "None",
    }
    if kind == "number":
        return f"a Python {type(record).__name__}"
    if kind == "tensor":
        return _tensor_form(record)
    if kind in ("list", "tuple"):
        return _sequence_form(kind, record["items"])
    if kind == "ndarray":
        return f"a NumPy array ({record['dtype']}, shape {fmt_shape(record['shape'])})"
    if kind == "numpy_scalar":
        if record.get("array"):
            return f"a 0-d NumPy array ({record['dtype']})"
        return f"a NumPy {record['dtype']}"
    if kind == "callable":
        return f"a function ({record['name']})"
    if kind == "module":
        return f"a module ({record['name']})"
    if kind == "object":
        return f"a {record['name']} object"
    return names.get(kind, kind)


def _tensor_form(record: dict) -> str:
    shape = tuple(record["shape"])
    return "a 0-d tensor" if shape == () else f"a tensor of shape {fmt_shape(shape)}"


def _sequence_form(kind: str, items: list) -> str:
    """'a tuple of 3 0-d tensors', 'a list of Python ints', 'an empty tuple', 'a tuple of 2
    items (a Python int, a 0-d tensor)'."""
    if not items:
        return f"an empty {kind}"
    forms = [_item_form(item) for item in items]
    count = f" {len(items)}" if len(items) > 1 else " one"
    if len(set(forms)) == 1:
        plural = forms[0] if len(items) == 1 else _plural(forms[0])
        return f"a {kind} of{count} {plural.removeprefix('a ').removeprefix('an ')}"
    shown = ", ".join(forms[:3]) + (", ..." if len(forms) > 3 else "")
    return f"a {kind} of {len(items)} items ({shown})"


def _item_form(item: Any) -> str:
    """An item's form, without the details that vary between items (a tensor's shape stays:
    0-d or not is what a message about the form needs)."""
    kind = kind_of(item)
    if kind == "tensor":
        return "a 0-d tensor" if tuple(item["shape"]) == () else "a tensor"
    if kind in ("list", "tuple"):
        return f"a {kind}"
    if kind == "ndarray":
        return "a NumPy array"
    return python_type_name(item)


def _plural(form: str) -> str:
    """'a 0-d tensor' -> '0-d tensors', 'a NumPy float64' -> 'NumPy float64s'."""
    words = form.removeprefix("a ").removeprefix("an ")
    if words.endswith(")"):  # 'a function (f)' and the like: no plural of the name
        return f"items of the form {form}"
    return words + ("es" if words.endswith(("s", "x")) else "s")


# --------------------------------------------------------------------------- validation

_TENSOR_KEYS = {
    "_r",
    "shape",
    "dtype",
    "device",
    "requires_grad",
    "is_leaf",
    "grad_fn",
    "version",
    "grad",
    "data",
}


MAX_RECORD_NODES = 100_000  # parts of one answer record validation looks at, at most


class _Budget:
    def __init__(self, nodes: int):
        self.left = nodes


def invalid_reason(record: Any, depth: int = 0, budget: _Budget | None = None) -> str | None:
    """Why ``record`` cannot be a record made by :func:`describe`, or None when it can.

    Catches hand-made records: a tensor record whose payload disagrees with its metadata
    (e.g. an empty tensor labelled with the expected shape), unknown keys, wrong types.
    A record with more than :data:`MAX_RECORD_NODES` parts (counting shared ones each
    time they appear, as judging would) is refused, so validation always ends quickly.
    """
    import torch

    budget = _Budget(MAX_RECORD_NODES) if budget is None else budget
    budget.left -= 1
    if budget.left < 0:
        return f"it has more than {MAX_RECORD_NODES} parts"
    if depth > 50:
        return "it is nested too deeply"
    if isinstance(record, (bool, int, float, complex, str)):
        return None
    if not is_record(record):
        return f"it holds a {type(record).__name__}, which describe() never produces"
    kind = record["_r"]
    if kind == "tensor":
        if set(record) != _TENSOR_KEYS:
            return "a tensor record has unexpected or missing fields"
        data, shape = record["data"], record["shape"]
        if not isinstance(shape, (tuple, list)) or not all(
            isinstance(d, int) and d >= 0 for d in shape
        ):
            return "a tensor record's shape is not a list of sizes"
        if data is not None:
            if not isinstance(data, torch.Tensor) or data.layout != torch.strided:
                return "a tensor record's payload is not a dense tensor"
            if tuple(data.shape) != tuple(shape):
                return (
                    f"a tensor record's payload has shape {tuple(data.shape)} but its metadata "
                    f"says {tuple(shape)}"
                )
            if dtype_name(data.dtype) != record["dtype"]:
                return "a tensor record's payload dtype disagrees with its metadata"
        elif record["device"] != "meta":
            return "a tensor record has no payload but is not a meta tensor"
        if record["grad"] is not None:
            if kind_of(record["grad"]) != "tensor":
                return "a tensor record's grad is not a tensor record"
            return invalid_reason(record["grad"], depth + 1, budget)
        return None
    children: list = []
    if kind in ("list", "tuple", "set"):
        children = list(record.get("items", []))
    elif kind == "dict":
        children = list(record.get("keys", [])) + list(record.get("values", []))
    elif kind == "function_run":
        for run in record.get("runs", []):
            if not isinstance(run, dict):
                return "a function run is malformed"
            if run.get("output") is not None:
                children.append(run.get("output"))
            children.extend(a for a in run.get("args_after", []) if a is not None)
    for child in children:
        reason = invalid_reason(child, depth + 1, budget)
        if reason:
            return reason
    return None
