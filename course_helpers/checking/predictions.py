"""Answers that are not tensors: Python numbers, sequences, dicts and predictions.

A *prediction* ("predict the output", answered before running anything) is judged
without revealing the answer: the message says what kind of thing is expected, how many
items are right, or that the order is wrong, but never the expected value itself.
"""

from __future__ import annotations

import math
from typing import Any

from course_helpers.checking.tensors import diagnose_tensor
from course_helpers.checking.verdict import (
    PYTHON_FLOAT_TOLERANCE,
    Diagnosis,
    failed,
    not_attempted,
    passed,
    wrong_format,
)
from course_helpers.records import (
    describe,
    dtype_name,
    fmt_number,
    fmt_shape,
    is_missing,
    kind_of,
    python_type_name,
)


def diagnose_number(got, exp, *, rtol, atol, subject) -> Diagnosis:
    kind = kind_of(got)
    if kind == "numpy_scalar":
        got, kind = got["value"], kind_of(got["value"])
    if kind == "tensor":
        return tensor_for_number(got, subject)
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


def tensor_for_number(got: dict, subject: str = "Your answer") -> Diagnosis:
    """A tensor given where a Python number is asked for: how to take the number out."""
    form = python_type_name(got)
    if math.prod(got["shape"]) != 1:
        return wrong_format(f"{subject} is {form}, but a single Python number is expected.")
    data = got.get("data")
    own = ""
    if data is not None:
        own = f" (for your tensor that gives {data.reshape(-1)[0].item()!r})"
    return wrong_format(
        f"{subject} is {form}, but a Python number is expected: take the number out of it "
        f"with .item(){own}."
    )


def wrong_sequence_type(got: Any, want: str) -> Diagnosis | None:
    """A list where a tuple is asked for (or the other way round): the learner's own items
    rewritten in the right brackets. None when ``got`` has the right type."""
    kind = kind_of(got)
    if kind == want or kind not in ("tuple", "list") or want not in ("tuple", "list"):
        return None
    items = [_literal(i) for i in got["items"]]
    if want == "tuple":
        rewritten = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return wrong_format(
            f"Your answer is a list, [{', '.join(items)}]: answer with a tuple (round "
            f"brackets), e.g. {rewritten}."
        )
    return wrong_format(
        f"Your answer is a tuple: answer with a list (square brackets), e.g. [{', '.join(items)}]."
    )


def _not_sizes(got: Any) -> Diagnosis:
    """A shape (or strides) answered in another form: name the form it has; when its items
    are whole numbers in another form (0-d tensors, NumPy ints), rewrite them as ints."""
    form = python_type_name(got)
    numbers = [_whole_number(i) for i in got["items"]] if kind_of(got) in ("tuple", "list") else []
    if numbers and all(n is not None for n in numbers):
        rewritten = "(" + ", ".join(map(str, numbers)) + ("," if len(numbers) == 1 else "") + ")"
        return wrong_format(
            f"Your answer is {form}: answer with a tuple of plain Python ints, e.g. "
            f"{rewritten} (int(...) or .item() takes the number out of each)."
        )
    return wrong_format(f"Your answer is {form}; answer with a tuple of sizes such as (2, 3).")


def _whole_number(item: Any) -> int | None:
    """The whole number a 0-d or one-element tensor or a NumPy scalar holds, else None."""
    kind = kind_of(item)
    if kind == "numpy_scalar":
        value = item["value"]
    elif kind == "tensor" and item.get("data") is not None and item["data"].numel() == 1:
        value = item["data"].reshape(-1)[0].item()
    else:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() else None


def _literal(item: Any) -> str:
    if kind_of(item) in ("number", "bool", "str"):
        return repr(item)
    if kind_of(item) == "numpy_scalar":
        return repr(item["value"])
    if kind_of(item) == "dtype":
        return f"torch.{item['name']}"
    if kind_of(item) == "shape":
        return f"torch.Size({list(item['value'])})"
    return "..."


def count_of(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def is_are(n: int) -> str:
    return "is" if n == 1 else "are"


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
        wrong_type = wrong_sequence_type(got, "tuple")
        if wrong_type is not None:
            return wrong_type
        mine = _as_int_tuple(got)
        if mine is None:
            return _not_sizes(got)
        if mine == target:
            return passed()
        if len(mine) != len(target):
            return failed(
                f"{fmt_shape(mine)} is not it: the answer has {len(target)} "
                f"dimension{'s' * (len(target) != 1)}, yours has {len(mine)}."
            )
        return failed(f"{fmt_shape(mine)} is not it: {WORK_IT_OUT}.")
    if want == "dtype":
        if isinstance(got, str):
            return _dtype_as_string(got)
        if kind_of(got) != "dtype":
            return wrong_format(
                f"Your answer is {python_type_name(got)}; answer with a dtype itself, such as "
                f"{DTYPE_EXAMPLE} (no quotes)."
            )
        if got["name"] == exp["name"]:
            return passed()
        return failed(f"torch.{got['name']} is not it: {WORK_IT_OUT}.")
    if want == "bool":
        if kind_of(got) != "bool":
            return failed(f"Your answer is {python_type_name(got)}; answer True or False.")
        return passed() if got == exp else failed(f"{got} is not it: {WORK_IT_OUT}.")
    if want == "number":
        if kind_of(got) == "tensor":
            return tensor_for_number(got)
        if kind_of(got) not in ("number", "numpy_scalar"):
            return wrong_format(
                f"Your answer is {python_type_name(got)}; answer with a Python number."
            )
        value = got["value"] if kind_of(got) == "numpy_scalar" else got
        result = diagnose_number(value, exp, rtol=rtol, atol=atol, subject="Your answer")
        if result.passed:
            return result
        return failed(f"{fmt_number(value)} is not it: {WORK_IT_OUT}.")
    if want == "str":
        if kind_of(got) != "str":
            return failed(f"Your answer is {python_type_name(got)}; answer with a string.")
        if got.strip().lower() == exp.strip().lower():
            return passed()
        return failed(f"{got!r} is not it: {WORK_IT_OUT}.")
    if want in ("tuple", "list"):
        wrong_type = wrong_sequence_type(got, want)
        if wrong_type is not None:
            return wrong_type
        if kind_of(got) not in ("tuple", "list"):
            return failed(
                f"Your answer is {python_type_name(got)}; answer with a {want} of "
                f"{len(exp['items'])} items."
            )
        return predict_items(got["items"], exp["items"], rtol=rtol, atol=atol)
    if want == "set" and kind_of(got) in ("set", "tuple", "list"):
        if kind_of(got) != "set":
            return failed(
                f"Your answer is {python_type_name(got)}, but a set is expected: write it "
                "in braces: {item, item, ...}."
            )
        return predict_items(got["items"], exp["items"], rtol=rtol, atol=atol, ordered=False)
    if want in ("object", "callable", "ndarray"):
        return Diagnosis(
            "error",
            f"The checker cannot compare answers with {python_type_name(exp)}: this exercise "
            "needs a different reference (a bug in the course, not in your answer).",
        )
    if got == exp:
        return passed()
    if kind_of(got) != want:
        return failed(
            f"Your answer is {python_type_name(got)}, but {python_type_name(exp)} is expected."
        )
    return failed(f"Your answer ({python_type_name(got)}) is not it: {WORK_IT_OUT}.")


WORK_IT_OUT = "work it out again step by step"
# the dtype named in format messages: an example of the form, never a prediction's answer
DTYPE_EXAMPLE = "torch.int64"


def _dtype_as_string(text: str) -> Diagnosis:
    """A dtype answered as a string: rewrite the learner's own string as the dtype object."""
    name = text.strip().removeprefix("torch.")
    if _canonical_dtype_name(name) is None:
        return wrong_format(
            f"Your answer is the string {text!r}, which is not a dtype name: answer with a "
            f"dtype itself, such as {DTYPE_EXAMPLE} (no quotes)."
        )
    return wrong_format(
        f"Your answer is the string {text!r}: answer with the dtype itself, torch.{name} "
        "(no quotes)."
    )


def _canonical_dtype_name(name: str) -> str | None:
    """'float32' for 'float32' and its aliases ('float'); None when ``name`` is no dtype."""
    import torch

    dtype = getattr(torch, name, None) if name.isidentifier() else None
    return dtype_name(dtype) if isinstance(dtype, torch.dtype) else None


def predict_items(
    mine: list,
    wanted: list,
    *,
    rtol,
    atol,
    ordered: bool = True,
    subject: str = "Your answer",
    item_label: str = "Item {} of your answer",
) -> Diagnosis:
    """Compare predicted items without revealing them: order, then how many are right."""

    def same(a, b) -> bool:
        return diagnose_prediction(a, b, rtol=rtol, atol=atol).passed

    if len(mine) == len(wanted) and all(same(a, b) for a, b in zip(mine, wanted, strict=True)):
        return passed()
    unmatched = list(wanted)
    right = 0
    for item in mine:
        found = next((k for k, w in enumerate(unmatched) if same(item, w)), None)
        if found is not None:
            unmatched.pop(found)
            right += 1
    if not ordered and right == len(mine) == len(wanted):
        return passed()
    if right == len(mine) == len(wanted):
        return failed(f"{subject} has the right items, but in the wrong order.")
    if len(mine) == len(wanted):
        for i, (a, b) in enumerate(zip(mine, wanted, strict=True)):
            result = diagnose_prediction(a, b, rtol=rtol, atol=atol)
            if not result.passed and ordered:
                return labelled(result, item_label.format(i))
        return failed(f"{right} of your {len(mine)} items {is_are(right)} right: {WORK_IT_OUT}.")
    missing, extra = len(wanted) - right, len(mine) - right
    parts = [f"{right} of them {is_are(right)} right"]
    if missing:
        parts.append(f"{missing} {is_are(missing)} missing")
    if extra:
        parts.append(f"{extra} {is_are(extra)} extra")
    return failed(
        f"{subject} has {count_of(len(mine), 'item')} but {len(wanted)} "
        f"{is_are(len(wanted))} expected: {', '.join(parts)}."
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


def labelled(result: Diagnosis, label: str) -> Diagnosis:
    """An item's verdict under the item's name ("Item 0 of your answer is ..."): its own
    "Your answer ..." would name the whole answer again."""
    if result.message.startswith(label):
        return result
    if result.message.startswith("Your answer "):
        text = label + result.message[len("Your answer") :]
        return Diagnosis(result.status, text, mistake=result.mistake, advice=result.advice)
    return Diagnosis(
        result.status, f"{label}: {result.message}", mistake=result.mistake, advice=result.advice
    )
