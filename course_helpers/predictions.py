"""Answers that are not tensors: Python numbers, sequences, dicts and predictions.

A *prediction* ("predict the output", answered before running anything) is judged
without revealing the answer: the message says what kind of thing is expected, how many
items are right, or that the order is wrong, but never the expected value itself.
"""

from __future__ import annotations

import math
from typing import Any

from course_helpers import diagnosis as dx
from course_helpers.records import (
    describe,
    dtype_name,
    fmt_number,
    fmt_shape,
    is_missing,
    kind_of,
    python_type_name,
)


def diagnose_number(got, exp, *, rtol, atol, subject) -> dx.Diagnosis:
    kind = kind_of(got)
    if kind == "numpy_scalar":
        got, kind = got["value"], kind_of(got["value"])
    if kind == "tensor":
        return tensor_for_number(got, subject)
    if kind != "number":
        return dx.failed(f"{subject} is {python_type_name(got)}, but a Python number is expected.")
    if isinstance(exp, int) and isinstance(got, int):
        ok = got == exp
    else:
        default_rtol, default_atol = dx.PYTHON_FLOAT_TOLERANCE
        r = default_rtol if rtol is None else rtol
        a = default_atol if atol is None else atol
        ok = (math.isnan(exp) and math.isnan(got)) or abs(got - exp) <= a + r * abs(exp)
    if ok:
        return dx.passed()
    text = f"{subject} is {fmt_number(got, exp)} but {fmt_number(exp, got)} is expected."
    if exp != 0 and got == -exp:
        text += " It has the wrong sign."
    return dx.failed(text)


def tensor_for_number(got: dict, subject: str = "Your answer") -> dx.Diagnosis:
    """A tensor given where a Python number is asked for: how to take the number out."""
    if math.prod(got["shape"]) != 1:
        return dx.wrong_format(
            f"{subject} is a tensor of shape {fmt_shape(got['shape'])}, but a single Python "
            "number is expected."
        )
    data = got.get("data")
    own = ""
    if data is not None:
        own = f" (for your tensor that gives {data.reshape(-1)[0].item()!r})"
    return dx.wrong_format(
        f"{subject} is a tensor, but a Python number is expected: take the number out of it "
        f"with .item(){own}."
    )


def wrong_sequence_type(got: Any, want: str) -> dx.Diagnosis | None:
    """A list where a tuple is asked for (or the other way round): the learner's own items
    rewritten in the right brackets. None when ``got`` has the right type."""
    kind = kind_of(got)
    if kind == want or kind not in ("tuple", "list") or want not in ("tuple", "list"):
        return None
    items = [_literal(i) for i in got["items"]]
    if want == "tuple":
        rewritten = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return dx.wrong_format(
            f"Your answer is a list, [{', '.join(items)}]: answer with a tuple (round "
            f"brackets), e.g. {rewritten}."
        )
    return dx.wrong_format(
        f"Your answer is a tuple: answer with a list (square brackets), e.g. [{', '.join(items)}]."
    )


def _literal(item: Any) -> str:
    if kind_of(item) in ("number", "bool", "str"):
        return repr(item)
    if kind_of(item) == "dtype":
        return f"torch.{item['name']}"
    if kind_of(item) == "shape":
        return f"torch.Size({list(item['value'])})"
    return "..."


def diagnose_sequence(got, exp, *, rtol, atol, device, subject, in_function=False) -> dx.Diagnosis:
    kind, want = kind_of(got), kind_of(exp)
    if want == "tuple" and all(
        isinstance(i, int) and not isinstance(i, bool) for i in exp["items"]
    ):
        return diagnose_prediction(got, exp)
    if kind not in ("tuple", "list"):
        return dx.failed(
            f"{subject} is {python_type_name(got)}, but a {want} of {len(exp['items'])} items "
            "is expected."
        )
    if exp["items"] and all(isinstance(i, str) for i in exp["items"]):
        # names (e.g. parameter names): order and counts say more than item-by-item
        return _predict_items(
            got["items"],
            exp["items"],
            rtol=rtol,
            atol=atol,
            subject=subject,
            item_label=f"Item {{}} of your {kind}",
        )
    if len(got["items"]) != len(exp["items"]):
        return dx.failed(
            f"{subject} has {_count(len(got['items']), 'item')} but "
            f"{len(exp['items'])} {_is_are(len(exp['items']))} expected."
        )
    for i, (g_item, e_item) in enumerate(zip(got["items"], exp["items"], strict=True)):
        label = f"Item {i} of your {kind}"
        result = dx.diagnose(
            g_item,
            e_item,
            rtol=rtol,
            atol=atol,
            device=device,
            subject=label,
            in_function=in_function,
        )
        if result.status == "not_attempted":
            return dx.not_attempted(f"{label} is still `...`: fill it in and run the cell again.")
        if not result.passed:
            return _labelled(result, label)
    return dx.passed()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _is_are(n: int) -> str:
    return "is" if n == 1 else "are"


def _labelled(result: dx.Diagnosis, label: str) -> dx.Diagnosis:
    if result.message.startswith(label):
        return result
    return dx.Diagnosis(result.status, f"{label}: {result.message}")


def diagnose_mapping(got, exp, *, rtol, atol, device, subject, in_function=False) -> dx.Diagnosis:
    if kind_of(got) != "dict":
        return dx.failed(f"{subject} is {python_type_name(got)}, but a dict is expected.")
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
        return dx.failed(f"{subject} has the wrong keys: {'; '.join(parts)}.")
    for key, (_, expected_value) in wanted.items():
        label = f"The value for key {key}"
        result = dx.diagnose(
            mine[key][1],
            expected_value,
            rtol=rtol,
            atol=atol,
            device=device,
            subject=label,
            in_function=in_function,
        )
        if not result.passed:
            return _labelled(result, label)
    return dx.passed()


def diagnose_prediction(got: Any, exp: Any, *, rtol=None, atol=None) -> dx.Diagnosis:
    """A "predict the output" answer: says whether it is right without revealing the answer."""
    got, exp = describe(got), describe(exp)
    if is_missing(got):
        return dx.not_attempted()
    want = kind_of(exp)
    if want == "tensor":
        return dx.diagnose_tensor(got, exp, rtol=rtol, atol=atol)
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
            return dx.failed(
                f"Your answer is {python_type_name(got)}; "
                "answer with a tuple of sizes such as (2, 3)."
            )
        if mine == target:
            return dx.passed()
        if len(mine) != len(target):
            return dx.failed(
                f"{fmt_shape(mine)} is not it: the answer has {len(target)} "
                f"dimension{'s' * (len(target) != 1)}, yours has {len(mine)}."
            )
        return dx.failed(f"{fmt_shape(mine)} is not it: {WORK_IT_OUT}.")
    if want == "dtype":
        if isinstance(got, str):
            return _dtype_as_string(got)
        if kind_of(got) != "dtype":
            return dx.wrong_format(
                f"Your answer is {python_type_name(got)}; answer with a dtype itself, such as "
                f"{DTYPE_EXAMPLE} (no quotes)."
            )
        if got["name"] == exp["name"]:
            return dx.passed()
        return dx.failed(f"torch.{got['name']} is not it: {WORK_IT_OUT}.")
    if want == "bool":
        if kind_of(got) != "bool":
            return dx.failed(f"Your answer is {python_type_name(got)}; answer True or False.")
        return dx.passed() if got == exp else dx.failed(f"{got} is not it: {WORK_IT_OUT}.")
    if want == "number":
        if kind_of(got) == "tensor":
            return tensor_for_number(got)
        if kind_of(got) not in ("number", "numpy_scalar"):
            return dx.wrong_format(
                f"Your answer is {python_type_name(got)}; answer with a Python number."
            )
        value = got["value"] if kind_of(got) == "numpy_scalar" else got
        result = diagnose_number(value, exp, rtol=rtol, atol=atol, subject="Your answer")
        if result.passed:
            return result
        return dx.failed(f"{fmt_number(value)} is not it: {WORK_IT_OUT}.")
    if want == "str":
        if kind_of(got) != "str":
            return dx.failed(f"Your answer is {python_type_name(got)}; answer with a string.")
        if got.strip().lower() == exp.strip().lower():
            return dx.passed()
        return dx.failed(f"{got!r} is not it: {WORK_IT_OUT}.")
    if want in ("tuple", "list"):
        wrong_type = wrong_sequence_type(got, want)
        if wrong_type is not None:
            return wrong_type
        if kind_of(got) not in ("tuple", "list"):
            return dx.failed(
                f"Your answer is {python_type_name(got)}; answer with a {want} of "
                f"{len(exp['items'])} items."
            )
        return _predict_items(got["items"], exp["items"], rtol=rtol, atol=atol)
    if want == "set" and kind_of(got) in ("set", "tuple", "list"):
        if kind_of(got) != "set":
            return dx.failed(
                f"Your answer is {python_type_name(got)}, but a set is expected: write it "
                "in braces: {item, item, ...}."
            )
        return _predict_items(got["items"], exp["items"], rtol=rtol, atol=atol, ordered=False)
    if want in ("object", "callable", "ndarray"):
        return dx.Diagnosis(
            "error",
            f"The checker cannot compare answers with {python_type_name(exp)}: this exercise "
            "needs a different reference (a bug in the course, not in your answer).",
        )
    if got == exp:
        return dx.passed()
    if kind_of(got) != want:
        return dx.failed(
            f"Your answer is {python_type_name(got)}, but {python_type_name(exp)} is expected."
        )
    return dx.failed(f"Your answer ({python_type_name(got)}) is not it: {WORK_IT_OUT}.")


WORK_IT_OUT = "work it out again step by step"
# the dtype named in format messages: an example of the form, never a prediction's answer
DTYPE_EXAMPLE = "torch.int64"


def _dtype_as_string(text: str) -> dx.Diagnosis:
    """A dtype answered as a string: rewrite the learner's own string as the dtype object."""
    name = text.strip().removeprefix("torch.")
    if _canonical_dtype_name(name) is None:
        return dx.wrong_format(
            f"Your answer is the string {text!r}, which is not a dtype name: answer with a "
            f"dtype itself, such as {DTYPE_EXAMPLE} (no quotes)."
        )
    return dx.wrong_format(
        f"Your answer is the string {text!r}: answer with the dtype itself, torch.{name} "
        "(no quotes)."
    )


def _canonical_dtype_name(name: str) -> str | None:
    """'float32' for 'float32' and its aliases ('float'); None when ``name`` is no dtype."""
    import torch

    dtype = getattr(torch, name, None) if name.isidentifier() else None
    return dtype_name(dtype) if isinstance(dtype, torch.dtype) else None


def _predict_items(
    mine: list,
    wanted: list,
    *,
    rtol,
    atol,
    ordered: bool = True,
    subject: str = "Your answer",
    item_label: str = "Item {} of your answer",
) -> dx.Diagnosis:
    """Compare predicted items without revealing them: order, then how many are right."""

    def same(a, b) -> bool:
        return diagnose_prediction(a, b, rtol=rtol, atol=atol).passed

    if len(mine) == len(wanted) and all(same(a, b) for a, b in zip(mine, wanted, strict=True)):
        return dx.passed()
    unmatched = list(wanted)
    right = 0
    for item in mine:
        found = next((k for k, w in enumerate(unmatched) if same(item, w)), None)
        if found is not None:
            unmatched.pop(found)
            right += 1
    if not ordered and right == len(mine) == len(wanted):
        return dx.passed()
    if right == len(mine) == len(wanted):
        return dx.failed(f"{subject} has the right items, but in the wrong order.")
    if len(mine) == len(wanted):
        for i, (a, b) in enumerate(zip(mine, wanted, strict=True)):
            result = diagnose_prediction(a, b, rtol=rtol, atol=atol)
            if not result.passed and ordered:
                return _labelled(result, item_label.format(i))
        return dx.failed(
            f"{right} of your {len(mine)} items {_is_are(right)} right: {WORK_IT_OUT}."
        )
    missing, extra = len(wanted) - right, len(mine) - right
    parts = [f"{right} of them {_is_are(right)} right"]
    if missing:
        parts.append(f"{missing} {_is_are(missing)} missing")
    if extra:
        parts.append(f"{extra} {_is_are(extra)} extra")
    return dx.failed(
        f"{subject} has {_count(len(mine), 'item')} but {len(wanted)} "
        f"{_is_are(len(wanted))} expected: {', '.join(parts)}."
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
