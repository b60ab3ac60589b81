"""The walk over an autograd graph: from the outputs back to the leaves (iteratively, so long
chains are fine), with each node's label lines: shapes, saved tensors, gradients."""

from __future__ import annotations

import functools
import re
from collections import deque
from dataclasses import dataclass, field

from course_helpers.errors import CourseError
from course_helpers.records import fmt_shape


def as_outputs(output, who: str = "draw_graph") -> list:
    import torch

    items = list(output) if isinstance(output, (list, tuple)) else [output]
    if not items:
        raise CourseError(
            f"{who} got an empty list. Pass the tensor you computed (e.g. the loss), "
            "or a list of such tensors."
        )
    for item in items:
        if not isinstance(item, torch.Tensor):
            raise CourseError(
                f"{who} expects a tensor (or a list of tensors) but got "
                f"{type(item).__name__}. Pass the result of tensor operations, e.g. "
                f"{who}(loss) where loss was computed from tensors with requires_grad=True."
            )
        if item.grad_fn is None:
            if item.requires_grad:
                raise CourseError(
                    f"This tensor of shape {fmt_shape(item.shape)} is a leaf: you created it "
                    "yourself, so no operation recorded a graph behind it. Draw a result "
                    "computed from it instead, e.g. draw_graph((x * 2).sum())."
                )
            raise CourseError(
                f"This tensor of shape {fmt_shape(item.shape)} has no autograd graph "
                "(requires_grad=False). Set requires_grad=True on the input tensors before "
                "computing it (x = torch.tensor(..., requires_grad=True)), and do not compute "
                "it under torch.no_grad() or from .detach()."
            )
    return items


def tensor_names(params, names) -> dict[int, str]:
    """Map id(tensor) -> display name (ids stay internal, they are never printed)."""
    import torch

    found: dict[int, str] = {}
    for label, source in (("params", params), ("names", names)):
        if source is None:
            continue
        if isinstance(source, torch.nn.Module):
            source = dict(source.named_parameters())
        if not isinstance(source, dict):
            raise CourseError(
                f"{label} must be a dict {{name: tensor}} or an nn.Module (its named "
                f"parameters are used); got {type(source).__name__}. Example: "
                f"{label}={{'w': w, 'b': b}}."
            )
        for key, value in source.items():
            if not isinstance(value, torch.Tensor):
                raise CourseError(
                    f"{label}[{key!r}] is a {type(value).__name__}, not a tensor. "
                    f"Map each name to the tensor itself, e.g. {label}={{'w': w}}."
                )
            found[id(value)] = str(key)
    return found


def _num(value: float) -> str:
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


def _nested(values) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return _num(float(values))


def tensor_summary(tensor, limit: int = 6) -> str:
    """Values with 4 decimals when small, else shape and mean/min/max (device-independent)."""
    t = tensor.detach()
    if t.is_complex():
        t = t.abs()
    t = t.to("cpu", dtype=_float_type(t))
    if t.numel() == 0:
        return f"empty {fmt_shape(t.shape)}"
    if t.numel() <= limit:
        return _nested(t.tolist())
    return (
        f"{fmt_shape(t.shape)} mean {_num(t.mean().item())} "
        f"min {_num(t.min().item())} max {_num(t.max().item())}"
    )


def _float_type(t):
    import torch

    return torch.float64 if t.dtype == torch.float64 else torch.float32


def _dtype_text(dtype) -> str:
    return str(dtype).replace("torch.", "")


@dataclass
class _Raw:
    kind: str  # output | op | accumulate | leaf
    obj: object  # the tensor (output, leaf) or the autograd Node (op, accumulate)
    inputs: list[int] = field(default_factory=list)  # indexes of the nodes it is computed from
    fn: object = None  # for a leaf: its AccumulateGrad node


WALK_LIMIT = 20_000  # nodes walked at most (see walk)


def walk(outputs: list, show_accumulate: bool, limit: int = WALK_LIMIT) -> list[_Raw]:
    """Breadth-first, iterative walk from the outputs; list index = traversal order.

    Stops after ``limit`` nodes (the ones nearest the outputs): a picture draws a few
    hundred anyway, and holding Python references to every node of a chain of 50,000 or
    more makes torch crash the kernel when they are released. ``len(result) >= limit``
    tells that the walk stopped early."""
    raws: list[_Raw] = [_Raw("output", t) for t in outputs]
    index_of: dict[object, int] = {}
    queue: deque = deque()

    def visit(fn) -> int | None:
        known = index_of.get(fn)
        if known is not None:
            return known
        if len(raws) >= limit:
            return None
        if type(fn).__name__ == "AccumulateGrad":
            leaf = fn.variable
            if show_accumulate:
                index_of[fn] = len(raws)
                raws.append(_Raw("accumulate", fn, [len(raws) + 1]))
                raws.append(_Raw("leaf", leaf, fn=fn))
            else:
                index_of[fn] = len(raws)
                raws.append(_Raw("leaf", leaf, fn=fn))
            return index_of[fn]
        index_of[fn] = len(raws)
        raws.append(_Raw("op", fn))
        queue.append(index_of[fn])
        return index_of[fn]

    for raw in raws[: len(outputs)]:
        found = visit(raw.obj.grad_fn)
        if found is not None:
            raw.inputs.append(found)
    while queue:
        current = raws[queue.popleft()]
        for fn, _ in current.obj.next_functions:
            if fn is not None:
                found = visit(fn)
                if found is not None:
                    current.inputs.append(found)
    return raws


def collapse_chains(raws: list[_Raw]) -> list[_Raw]:
    """Replace runs of single-input ops (each used once) by one 'collapsed' node."""
    users = [0] * len(raws)
    for raw in raws:
        for i in raw.inputs:
            users[i] += 1

    def chainable(i: int) -> bool:
        raw = raws[i]
        return (
            raw.kind == "op"
            and len(raw.inputs) == 1
            and raws[raw.inputs[0]].kind == "op"
            and users[raw.inputs[0]] == 1
        )

    merged: dict[int, int] = {}  # node index -> index of the collapsed node standing for it
    out: list[_Raw] = []
    for i, raw in enumerate(raws):
        if i in merged:
            continue
        if chainable(i):
            run = [i]
            j = raw.inputs[0]
            while chainable(j):
                run.append(j)
                j = raws[j].inputs[0]
            if len(run) >= 3:
                ops = [raws[k].obj for k in run]
                node = _Raw("collapsed", ops, [j])
                for k in run:
                    merged[k] = i
                out.append((i, node))
                continue
        out.append((i, raw))
    return _reindex(out, merged)


def _reindex(pairs, merged: dict[int, int]) -> list[_Raw]:
    position = {old: new for new, (old, _) in enumerate(pairs)}
    result = []
    for _, raw in pairs:
        inputs = []
        for i in raw.inputs:
            target = position.get(i, position.get(merged.get(i, -1)))
            if target is not None and target not in inputs:
                inputs.append(target)
        result.append(_Raw(raw.kind, raw.obj, inputs, raw.fn))
    return result


_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+)")


@functools.cache
def _saved_attrs(node_type) -> tuple[str, ...]:
    """Names of the ``_saved_*`` attributes of an autograd node class (cached per class)."""
    return tuple(a for a in dir(node_type) if a.startswith("_saved_"))


def _unreadable(name: str, err: RuntimeError) -> str:
    message = str(err)
    versions = _VERSIONS.search(message)
    if "freed" in message:
        return f"saved {name}: freed after backward"
    if versions:
        now, saved = versions.groups()
        return (
            f"saved {name}: modified in place (version {now}, saved at {saved}); "
            "backward() will fail"
        )
    return f"saved {name}: unavailable"


def _custom_saved_lines(fn) -> list[str]:
    """What a custom ``torch.autograd.Function`` saved with ``ctx.save_for_backward``.

    Its backward node has no ``_saved_*`` attributes; the tensors are in ``saved_tensors``.
    """
    try:
        values = fn.saved_tensors
    except RuntimeError as err:
        return [_unreadable("tensors", err)]
    if not values:
        return []
    shapes = ["None" if v is None else shape_label(v.shape) for v in values]
    return ["saved tensors: " + ", ".join(shapes)]


def _saved_lines(fn, show_attrs: bool) -> list[str]:
    import torch

    if isinstance(fn, torch.autograd.function.BackwardCFunction):
        return _custom_saved_lines(fn)
    lines = []
    for attr in _saved_attrs(type(fn)):
        name = attr[len("_saved_") :]
        try:
            value = getattr(fn, attr)
        except RuntimeError as err:
            lines.append(_unreadable(name, err))
            continue
        if isinstance(value, torch.Tensor):
            lines.append(f"saved {name}: {shape_label(value.shape)}")
        elif isinstance(value, tuple) and value and all(isinstance(v, torch.Tensor) for v in value):
            lines.append(f"saved {name}: " + ", ".join(shape_label(v.shape) for v in value))
        elif show_attrs:
            lines.append(f"{name} = {_attr_text(value)}")
    return lines


def _attr_text(value) -> str:
    if isinstance(value, float):
        return _num(value)
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _tensor_lines(t, opts, *, grad: bool) -> list[str]:
    lines = []
    if opts["show_dtype"]:
        lines.append(f"dtype {_dtype_text(t.dtype)}")
    if opts["show_device"]:
        lines.append(f"device {t.device}")
    if opts["show_requires_grad"]:
        lines.append(f"requires_grad {t.requires_grad}")
    if opts["show_version"]:
        lines.append(f"_version {t._version}")
    if grad and opts["show_grad"]:
        g = t.grad
        lines.append("grad None" if g is None else "grad " + tensor_summary(g, opts["grad_limit"]))
    return lines


def _op_meta_lines(fn, opts) -> tuple[str, list[str]]:
    try:
        meta = fn._input_metadata[0]
        shape, dtype, device = shape_label(meta.shape), meta.dtype, meta.device
    except (AttributeError, IndexError, RuntimeError):
        return "", []
    lines = []
    if opts["show_dtype"]:
        lines.append(f"dtype {_dtype_text(dtype)}")
    if opts["show_device"]:
        lines.append(f"device {device}")
    return shape, lines


def shape_label(shape) -> str:
    """A shape as a node shows it: ``(3, 4)``, and ``scalar`` for ``()``, which next to a
    name reads like a call (``MulBackward0 ()``)."""
    text = fmt_shape(shape)
    return "scalar" if text == "()" else text


def describe_nodes(raws: list[_Raw], opts: dict, names: dict[int, str]) -> list[tuple]:
    """(kind, lines, name or None) per raw node, in order."""
    out = []
    leaf_count = 0
    n_outputs = sum(1 for r in raws if r.kind == "output")
    output_count = 0
    for raw in raws:
        if raw.kind == "output":
            t = raw.obj
            label = names.get(id(t)) or ("output" if n_outputs == 1 else f"output {output_count}")
            output_count += 1
            first = label + (f" {shape_label(t.shape)}" if opts["show_shape"] else "")
            out.append((raw.kind, [first, *_tensor_lines(t, opts, grad=False)], label))
        elif raw.kind == "leaf":
            t = raw.obj
            label = names.get(id(t))
            if label is None:
                label = f"leaf {leaf_count}"
                leaf_count += 1
            first = label + (f" {shape_label(t.shape)}" if opts["show_shape"] else "")
            out.append((raw.kind, [first, *_tensor_lines(t, opts, grad=True)], label))
        elif raw.kind == "accumulate":
            out.append((raw.kind, ["AccumulateGrad"], None))
        elif raw.kind == "op":
            shape, meta = _op_meta_lines(raw.obj, opts)
            first = type(raw.obj).__name__
            if opts["show_shape"] and shape:
                first += f" {shape}"
            saved = _saved_lines(raw.obj, opts["show_attrs"]) if opts["show_saved"] else []
            out.append((raw.kind, [first, *meta, *saved], None))
        else:  # collapsed chain
            counts: dict[str, int] = {}
            for fn in raw.obj:
                counts[type(fn).__name__] = counts.get(type(fn).__name__, 0) + 1
            parts = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            lines = [f"chain of {len(raw.obj):,} ops"]
            lines += [f"{count:,} x {name}" for name, count in parts[:4]]
            if len(parts) > 4:
                lines.append(f"... {len(parts) - 4} more op types")
            out.append((raw.kind, lines, None))
    return out


def path_to(raws: list[_Raw], targets: set[int]) -> set[int]:
    """Indexes of nodes from which a target can be reached (following inputs)."""
    users: list[list[int]] = [[] for _ in raws]
    for i, raw in enumerate(raws):
        for j in raw.inputs:
            users[j].append(i)
    seen = set(targets)
    stack = list(targets)
    while stack:
        for user in users[stack.pop()]:
            if user not in seen:
                seen.add(user)
                stack.append(user)
    return seen


def highlight_targets(raws, highlight, names) -> set[int]:
    import torch

    wanted = highlight if isinstance(highlight, (list, tuple)) else [highlight]
    found = set()
    for item in wanted:
        hits = set()
        for i, raw in enumerate(raws):
            if raw.kind != "leaf":
                continue
            if isinstance(item, torch.Tensor) and raw.obj is item:
                hits.add(i)
            elif isinstance(item, str) and names.get(id(raw.obj)) == item:
                hits.add(i)
        if not hits:
            known = sorted(
                {names[id(r.obj)] for r in raws if r.kind == "leaf" and id(r.obj) in names}
            )
            shown = ", ".join(known) if known else "none: pass params= or names="
            raise CourseError(
                f"highlight={item!r} is not a leaf of this graph. Pass a leaf tensor or the "
                f"name of one given in params=/names= (named leaves here: {shown})."
            )
        found |= hits
    return found


def truncate(raws: list[_Raw], keep: int) -> list[_Raw]:
    """Keep the first ``keep`` nodes (traversal order); edges to dropped nodes go to a note."""
    note = keep
    out = []
    for raw in raws[:keep]:
        inputs = []
        for j in raw.inputs:
            target = j if j < keep else note
            if target not in inputs:
                inputs.append(target)
        out.append(_Raw(raw.kind, raw.obj, inputs, raw.fn))
    return out
