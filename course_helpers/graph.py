"""Pictures of the autograd graph that PyTorch records.

``draw_graph(loss)`` walks the graph behind ``loss`` (iteratively, so a chain of
10,000 operations is fine) and returns a :class:`GraphPicture`. Nodes get ids from
the traversal order (``n0`` is the output), never from memory addresses, so the
same graph gives the same DOT source and the same text on every run and machine.

In Jupyter the picture shows as SVG. Graphviz's ``dot`` draws it when it is
installed; otherwise a pure-Python layered layout (``course_helpers.graph_svg``)
draws a simpler picture; the first such picture in a kernel carries a one-line
install notice (later ones do not repeat it). The ``text/plain`` form is the same in
both cases: it is what nbval compares. Every picture has an opaque white background,
so it stays legible in dark notebook themes.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import warnings
from collections import deque
from dataclasses import dataclass, field, replace

from course_helpers.errors import CourseError
from course_helpers.records import fmt_shape

GRAPHVIZ_ENV = "COURSE_GRAPHVIZ"
INSTALL_NOTE = "Simplified layout: Graphviz not found (install graphviz, restart the kernel)"
_notice = {"given": False}  # the install notice is shown once per process (per kernel)


def _claim_notice() -> str | None:
    """INSTALL_NOTE for the first picture drawn without ``dot`` in this process, else None."""
    if _notice["given"]:
        return None
    _notice["given"] = True
    return INSTALL_NOTE


class NoticeShare:
    """Whether a group of pictures (one picture, or every step of a replay) got the notice.

    ``value`` is None until the group's first picture is drawn without ``dot``, then
    INSTALL_NOTE (this group shows the notice) or "" (an earlier picture showed it).
    """

    def __init__(self):
        self.value: str | None = None

    def claim(self) -> str:
        if self.value is None:
            self.value = _claim_notice() or ""
        return self.value


def reset_notice() -> None:
    """Show the "Simplified layout" notice again on the next picture drawn without ``dot``."""
    _notice["given"] = False


# kind -> (fill colour, border colour, border style) shared by the DOT and SVG renderers
STYLES = {
    "output": ("#c9f2a6", "#3d7a1a", "solid"),
    "op": ("#e6e6e6", "#555555", "solid"),
    "accumulate": ("#ffffff", "#555555", "dashed"),
    "leaf": ("#bfe3f5", "#1f6f99", "solid"),
    "collapsed": ("#fff4cc", "#9a7b00", "dashed"),
    "note": ("#ffffff", "#999999", "dotted"),
}
HIGHLIGHT = "#d62728"
ACTIVE_FILL = "#ffd24d"
DONE = "#2ca02c"
BACKGROUND = "#ffffff"  # every picture is opaque: legible on light and dark themes
LABEL_TEXT = "#9c1c1d"  # gradient values written on edges during a replay

_DEFAULTS = {
    "names": None,
    "show_shape": True,
    "show_dtype": False,
    "show_device": False,
    "show_requires_grad": False,
    "show_version": False,
    "show_saved": True,
    "show_attrs": False,
    "show_grad": True,
    "show_accumulate": True,
    "grad_limit": 6,
    "highlight": None,
    "max_nodes": 500,
}


def graphviz_dot() -> str | None:
    """Path of Graphviz's ``dot`` program, or None when it is missing or disabled.

    ``COURSE_GRAPHVIZ=off`` forces the pure-Python renderer (tests use it).
    """
    if os.environ.get(GRAPHVIZ_ENV, "").strip().lower() in ("off", "0", "no", "false"):
        return None
    return shutil.which("dot")


# --------------------------------------------------------------------------- input checks


def _as_outputs(output, who: str = "draw_graph") -> list:
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


def _tensor_names(params, names) -> dict[int, str]:
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


def _check_options(options: dict) -> dict:
    unknown = sorted(set(options) - set(_DEFAULTS))
    if unknown:
        raise CourseError(
            f"draw_graph got unknown option(s) {', '.join(unknown)}. Valid options: "
            f"{', '.join(sorted(_DEFAULTS))}."
        )
    merged = {**_DEFAULTS, **options}
    max_nodes = merged["max_nodes"]
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 2:
        raise CourseError(f"max_nodes must be an integer >= 2; got {max_nodes!r}.")
    limit = merged["grad_limit"]
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise CourseError(f"grad_limit must be an integer >= 0; got {limit!r}.")
    return merged


# --------------------------------------------------------------------------- formatting


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


# --------------------------------------------------------------------------- the walk


@dataclass
class _Raw:
    kind: str  # output | op | accumulate | leaf
    obj: object  # the tensor (output, leaf) or the autograd Node (op, accumulate)
    inputs: list[int] = field(default_factory=list)  # indexes of the nodes it is computed from
    fn: object = None  # for a leaf: its AccumulateGrad node


def _walk(outputs: list, show_accumulate: bool) -> list[_Raw]:
    """Breadth-first, iterative walk from the outputs; list index = traversal order."""
    raws: list[_Raw] = [_Raw("output", t) for t in outputs]
    index_of: dict[object, int] = {}
    queue: deque = deque()

    def visit(fn) -> int:
        known = index_of.get(fn)
        if known is not None:
            return known
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
        raw.inputs.append(visit(raw.obj.grad_fn))
    while queue:
        current = raws[queue.popleft()]
        for fn, _ in current.obj.next_functions:
            if fn is not None:
                current.inputs.append(visit(fn))
    return raws


def _collapse_chains(raws: list[_Raw]) -> list[_Raw]:
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


# --------------------------------------------------------------------------- the picture


@dataclass(frozen=True)
class PictureNode:
    """One box of the picture: a stable id (n0, n1, ...), its kind and text lines."""

    id: str
    kind: str
    lines: tuple[str, ...]
    inputs: tuple[str, ...]
    on_path: bool = False
    active: bool = False
    done: bool = False


class GraphPicture:
    """A drawn autograd graph: SVG in Jupyter, ``.source`` (DOT), ``.text()`` / ``str()``."""

    def __init__(self, nodes, title: str, notes=(), *, edge_labels=None, box_sizes=None):
        self.nodes: tuple[PictureNode, ...] = tuple(nodes)
        self.title = title
        self.notes: tuple[str, ...] = tuple(notes)
        # (input id, user id) -> text written on that edge (a replay's gradient values)
        self.edge_labels: dict[tuple[str, str], str] = dict(edge_labels or {})
        # node id -> (width, height) in px: fixed box sizes, so a replay's layout never moves
        self.box_sizes: dict[str, tuple[float, float]] = dict(box_sizes or {})
        self.notice_share = NoticeShare()
        self.show_notice = True  # False: keep the notice's space empty (replay steps > 1)

    # -- text ------------------------------------------------------------------------------
    def text(self) -> str:
        """Plain-text rendering: one node per line in traversal order, inputs after ``<-``."""
        head = [
            f"{self.title}: {len(self.nodes)} nodes. 'a <- b' means a is computed from b; "
            "backward() runs from n0 towards the leaves."
        ]
        head += [f"note: {note}" for note in self.notes]
        width = max(len(n.id) for n in self.nodes)
        kinds = max(len(n.kind) for n in self.nodes)
        body = []
        for node in self.nodes:
            mark = ">" if node.active else ("*" if node.on_path else ("+" if node.done else " "))
            first = f"{mark} {node.id:<{width}}  {node.kind:<{kinds}}  {node.lines[0]}"
            if node.inputs:
                first += "  <- " + ", ".join(node.inputs)
            body.append(first)
            indent = " " * (width + kinds + 6)
            body.extend(indent + line for line in node.lines[1:])
        if any(n.on_path for n in self.nodes):
            head.append("* = on the highlighted path")
        if any(n.active for n in self.nodes):
            head.append("> = running now, + = already run")
        return "\n".join(head + body)

    __str__ = text

    def __repr__(self) -> str:
        return self.text()

    # -- DOT -------------------------------------------------------------------------------
    @property
    def source(self) -> str:
        """Graphviz DOT source; byte-identical for the same graph on every run."""
        return self._dot(xlabels=True)

    def _dot(self, xlabels: bool) -> str:
        out = [
            "digraph autograd {",
            '\tgraph [rankdir=TB nodesep=0.25 ranksep=0.35 fontname="monospace" fontsize=10 '
            f'bgcolor="{BACKGROUND}" forcelabels=true]',
            '\tnode [shape=box style=filled fontname="monospace" fontsize=10 '
            'height=0.2 margin="0.08,0.04" fontcolor="#1a1a1a"]',
            '\tedge [arrowsize=0.6 color="#444444"]',
        ]
        if self.notes:
            out.append(f'\tlabel="{_dot_escape(" | ".join(self.notes))}" labelloc=t')
        for node in self.nodes:
            fill, border, style = node_style(node)
            label = _dot_escape(f"{node.id}: {node.lines[0]}")
            extra = "".join("\\n" + _dot_escape(line) for line in node.lines[1:])
            width = " penwidth=2.5" if node.on_path or node.active or node.done else ""
            size = self.box_sizes.get(node.id)
            if size:  # fixed size, so the layout ignores the text (a replay's steps)
                w, h = _dot_size(size)
                width += f" width={w:.3f} height={h:.3f} fixedsize=true"
            out.append(
                f'\t{node.id} [label="{label}{extra}" fillcolor="{fill}" color="{border}" '
                f'style="filled,{style}"{width}]'
            )
        for node in self.nodes:
            for src in node.inputs:
                attrs = ""
                text = self.edge_labels.get((src, node.id))
                if text is not None:  # xlabel: placed after layout, so it never moves boxes
                    label = f' xlabel="{_dot_escape(text)}" fontcolor="{LABEL_TEXT}"'
                    attrs = f' [color="{HIGHLIGHT}" penwidth=2{label if xlabels else ""}]'
                elif node.on_path and self._by_id(src).on_path:
                    attrs = f' [color="{HIGHLIGHT}" penwidth=2]'
                out.append(f"\t{src} -> {node.id}{attrs}")
        out.append("}")
        return "\n".join(out) + "\n"

    def _by_id(self, node_id: str) -> PictureNode:
        if not hasattr(self, "_index"):
            self._index = {n.id: n for n in self.nodes}
        return self._index[node_id]

    # -- SVG -------------------------------------------------------------------------------
    def svg(self) -> str:
        """SVG drawn by Graphviz ``dot`` when installed, else by the pure-Python renderer
        (whose first picture in a kernel says so in one line)."""
        from course_helpers.graph_svg import render_svg

        def fallback():  # the same picture keeps its notice when redrawn
            notice = self.notice_share.claim()
            shown = notice if self.show_notice else ""
            return render_svg(self, note=shown or None, reserve=notice or None)

        if not self.edge_labels:
            return _svg(self.source, fallback)
        # Graphviz's xlabels can grow the canvas, which would shift a replay's picture from
        # step to step: draw without them and write the labels onto the finished SVG.
        svg = _svg(self._dot(xlabels=False), fallback)
        return svg if 'class="edge-label"' in svg else _label_dot_edges(svg, self.edge_labels)

    def html(self, svg: str | None = None) -> str:
        """The picture with its text form under it, in a collapsible "Graph as text"."""
        return picture_html(self.svg() if svg is None else svg, self.text(), "Graph as text")

    def _repr_mimebundle_(self, include=None, exclude=None):
        svg = self.svg()
        return {"image/svg+xml": svg, "text/html": self.html(svg), "text/plain": self.text()}

    def with_state(
        self, *, active=None, done=(), extra_lines=None, edge_labels=None, box_sizes=None
    ) -> GraphPicture:
        """A copy with one node marked as running, some as done, extra lines per node,
        texts on edges and fixed box sizes (see ``edge_labels`` and ``box_sizes``)."""
        extra_lines = extra_lines or {}
        nodes = [
            replace(
                n,
                active=(n.id == active),
                done=(n.id in done),
                lines=n.lines + tuple(extra_lines.get(n.id, ())),
            )
            for n in self.nodes
        ]
        return GraphPicture(
            nodes, self.title, self.notes, edge_labels=edge_labels, box_sizes=box_sizes
        )


_DOT_EDGE = re.compile(
    r'<g id="[^"]*" class="edge">\s*<title>(\w+)&#45;&gt;(\w+)</title>\s*<path [^>]*d="([^"]+)"'
)
_VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')


def _label_dot_edges(svg: str, labels: dict) -> str:
    """Write each label of ``labels`` on the middle of its edge in a Graphviz SVG."""
    from html import escape

    box = _VIEWBOX.search(svg)
    end = svg.rfind("</g>")
    if box is None or end < 0:
        return svg
    width = float(box.group(1))
    out = []
    for src, dst, path in _DOT_EDGE.findall(svg):
        text = labels.get((src, dst))
        if text is None:
            continue
        x, y = _bezier_middle(path)
        half = len(text) * 3.0 + 3
        x = min(max(x, half - 2), width - half - 6)  # stay inside the canvas (x offset 4)
        out.append(
            f'<g class="edge-label"><rect x="{x - half:.1f}" y="{y - 7:.1f}" '
            f'width="{2 * half:.1f}" height="13" rx="3" fill="{BACKGROUND}" '
            f'stroke="{LABEL_TEXT}" stroke-width="0.8"/><text text-anchor="middle" '
            f'x="{x:.1f}" y="{y + 3:.1f}" font-family="monospace" font-size="10.00" '
            f'font-weight="bold" fill="{LABEL_TEXT}">{escape(text)}</text></g>'
        )
    return svg[:end] + "\n".join(out) + "\n" + svg[end:]


def _bezier_middle(path: str) -> tuple[float, float]:
    """The middle point of a Graphviz edge path "M p0 C p1 p2 p3 [p4 p5 p6 ...]"."""
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path)]
    points = list(zip(numbers[0::2], numbers[1::2], strict=False))
    segments = max((len(points) - 1) // 3, 1)
    if segments % 2 == 0 or len(points) < 4:
        return points[min(3 * (segments // 2), len(points) - 1)]
    p0, p1, p2, p3 = points[3 * (segments // 2) : 3 * (segments // 2) + 4]
    return tuple(
        0.125 * a + 0.375 * b + 0.375 * c + 0.125 * d
        for a, b, c, d in zip(p0, p1, p2, p3, strict=False)
    )


def picture_html(svg: str, text: str, summary: str) -> str:
    """HTML: the SVG as an image, then ``text`` in a collapsible ``<details>`` under it.

    The SVG goes in an ``<img>`` data URL, which JupyterLab's HTML sanitizer keeps (it
    strips inline ``<svg>``), so the picture also shows in a notebook that is not trusted.
    """
    import base64
    from html import escape

    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    first = text.splitlines()[0] if text else summary
    return (
        f'<div class="course-graph"><img src="data:image/svg+xml;base64,{data}" '
        f'alt="{escape(first)} ({summary.lower()} below)" style="max-width:100%"/>'
        f"<details><summary>{escape(summary)}</summary><pre>{escape(text)}</pre></details></div>"
    )


def node_style(node: PictureNode) -> tuple[str, str, str]:
    fill, border, style = STYLES[node.kind]
    if node.active:
        fill = ACTIVE_FILL
    if node.done:
        border = DONE
    if node.on_path or node.active:
        border = HIGHLIGHT
    return fill, border, style


def _dot_size(size: tuple[float, float]) -> tuple[float, float]:
    """A box size of the SVG fallback (px) as Graphviz inches for 10pt monospace text."""
    from course_helpers.graph_svg import CHAR_W, LINE_H, PAD_X, PAD_Y

    chars = (size[0] - 2 * PAD_X) / CHAR_W
    lines = (size[1] - 2 * PAD_Y) / LINE_H
    return (chars * 6.0 + 14) / 72, (lines * 11.5 + 7) / 72


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


_GENERATED = re.compile(r"<!-- Generated by graphviz[^>]*-->\n?")


def _svg(source: str, fallback) -> str:
    """Run ``dot`` on ``source`` when it is installed and works, else call ``fallback()``."""
    dot = graphviz_dot()
    if dot is not None:
        svg = _run_dot(dot, source)
        if svg is not None:
            return svg
    return fallback()


def _run_dot(dot: str, source: str) -> str | None:
    try:
        done = subprocess.run(
            [dot, "-Tsvg"], input=source.encode(), capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return _GENERATED.sub("", done.stdout.decode("utf-8", "replace"))


# --------------------------------------------------------------------------- describing nodes


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
    shapes = ["None" if v is None else fmt_shape(v.shape) for v in values]
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
            lines.append(f"saved {name}: {fmt_shape(value.shape)}")
        elif isinstance(value, tuple) and value and all(isinstance(v, torch.Tensor) for v in value):
            lines.append(f"saved {name}: " + ", ".join(fmt_shape(v.shape) for v in value))
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
        shape, dtype, device = fmt_shape(meta.shape), meta.dtype, meta.device
    except (AttributeError, IndexError, RuntimeError):
        return "", []
    lines = []
    if opts["show_dtype"]:
        lines.append(f"dtype {_dtype_text(dtype)}")
    if opts["show_device"]:
        lines.append(f"device {device}")
    return shape, lines


def _describe(raws: list[_Raw], opts: dict, names: dict[int, str]) -> list[tuple]:
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
            first = label + (f" {fmt_shape(t.shape)}" if opts["show_shape"] else "")
            out.append((raw.kind, [first, *_tensor_lines(t, opts, grad=False)], label))
        elif raw.kind == "leaf":
            t = raw.obj
            label = names.get(id(t))
            if label is None:
                label = f"leaf {leaf_count}"
                leaf_count += 1
            first = label + (f" {fmt_shape(t.shape)}" if opts["show_shape"] else "")
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


def _path_to(raws: list[_Raw], targets: set[int]) -> set[int]:
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


def _highlight_targets(raws, highlight, names) -> set[int]:
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


@dataclass(frozen=True)
class WalkRecord:
    """What replay_backward needs besides the picture: the autograd objects each drawn node
    stands for, the leaves' AccumulateGrad nodes and names, and the options used. Kept apart
    from the picture so that a picture never keeps a graph (and its saved tensors) alive."""

    objects: tuple
    leaf_fns: dict
    names: dict
    options: dict


def build_picture(output, params, options: dict, who: str) -> tuple[GraphPicture, WalkRecord]:
    """Walk the graph and build the picture (shared by draw_graph and replay_backward)."""
    opts = _check_options(options)
    outputs = _as_outputs(output, who)
    names = _tensor_names(params, opts["names"])
    raws = _walk(outputs, opts["show_accumulate"])
    total = len(raws)
    notes = []
    targets: set[int] = set()
    if opts["highlight"] is not None:
        targets = _highlight_targets(raws, opts["highlight"], names)
    target_leaves = [raws[i].obj for i in targets]
    max_nodes = opts["max_nodes"]
    if total > max_nodes:
        raws = _collapse_chains(raws)
        if len(raws) < total:
            notes.append(
                f"{total:,} nodes; chains of single-input ops are collapsed into one box "
                f"each to stay under max_nodes={max_nodes}"
            )
        targets = {
            i
            for i, r in enumerate(raws)
            if r.kind == "leaf" and any(r.obj is t for t in target_leaves)
        }
    hidden = 0
    if len(raws) > max_nodes:
        hidden = len(raws) - (max_nodes - 1)
        raws = _truncate(raws, max_nodes - 1)
        targets = {i for i in targets if i < len(raws)}
        notes.append(
            f"{hidden:,} more nodes not drawn (graph too large); pass max_nodes={total} "
            "to draw everything (slow), or draw a smaller part of the model"
        )
    on_path = _path_to(raws, targets) if targets else set()
    described = _describe(raws, opts, names)
    nodes = []
    for i, ((kind, lines, _), raw) in enumerate(zip(described, raws, strict=False)):
        nodes.append(
            PictureNode(
                id=f"n{i}",
                kind=kind,
                lines=tuple(lines),
                inputs=tuple(f"n{j}" for j in raw.inputs),
                on_path=i in on_path,
            )
        )
    if hidden:
        nodes.append(
            PictureNode(
                id=f"n{len(raws)}",
                kind="note",
                lines=(f"... {hidden:,} more nodes", f"raise max_nodes (now {max_nodes})"),
                inputs=(),
            )
        )
    record = WalkRecord(
        objects=tuple(raw.obj for raw in raws),
        leaf_fns={f"n{i}": raw.fn for i, raw in enumerate(raws) if raw.kind == "leaf"},
        names={f"n{i}": name for i, (_, _, name) in enumerate(described) if name},
        options=opts,
    )
    return GraphPicture(nodes, "autograd graph", notes), record


def _truncate(raws: list[_Raw], keep: int) -> list[_Raw]:
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


def draw_graph(output, params=None, **options) -> GraphPicture:
    """Draw the autograd graph behind ``output`` (a tensor or a list of tensors).

    ``params`` names leaves: a dict ``{name: tensor}`` or an ``nn.Module``. Options
    (defaults in brackets): ``names`` (dict of more names), ``show_shape`` [True],
    ``show_dtype`` [False], ``show_device`` [False], ``show_requires_grad`` [False],
    ``show_version`` [False], ``show_saved`` [True], ``show_attrs`` [False],
    ``show_grad`` [True], ``show_accumulate`` [True], ``grad_limit`` [6 values, else a
    summary], ``highlight`` (a leaf or its name: mark the path from the output to it),
    ``max_nodes`` [500: larger graphs have chains collapsed, then are truncated].

    Returns a :class:`GraphPicture`: SVG in Jupyter, ``.source`` for DOT, ``.text()``.
    """
    picture, _ = build_picture(output, params, options, "draw_graph")
    return picture


# --------------------------------------------------------------------------- torchviz


class TorchvizPicture:
    """torchviz's ``make_dot`` picture with node names renamed n0, n1, ... in order."""

    def __init__(self, source: str):
        self.source = source
        self.notice_share = NoticeShare()

    def text(self) -> str:
        return self.source

    __str__ = text

    def __repr__(self) -> str:
        return self.source

    def svg(self) -> str:
        from course_helpers.graph_svg import render_dot_source

        def fallback():
            return render_dot_source(self.source, note=self.notice_share.claim() or None)

        return _svg(_with_background(self.source), fallback)

    def _repr_mimebundle_(self, include=None, exclude=None):
        svg = self.svg()
        html = picture_html(svg, self.source, "DOT source")
        return {"image/svg+xml": svg, "text/html": html, "text/plain": self.source}


def _with_background(source: str) -> str:
    """DOT source with an opaque background added (for drawing only; .source is unchanged)."""
    head, brace, rest = source.partition("{")
    return f'{head}{brace}\n\tbgcolor="{BACKGROUND}"{rest}' if brace else source


_TORCHVIZ_STATEMENT = re.compile(r"(?m)^\t(\d+)( -> (\d+))?")


def torchviz_graph(output, params=None, **make_dot_options) -> TorchvizPicture:
    """The graph as torchviz's ``make_dot`` draws it, with stable node names.

    torchviz names nodes by ``id()`` (different on every run); here they become
    ``n0, n1, ...`` in order of appearance. Without Graphviz the picture is drawn by
    the course's pure-Python renderer instead of raising ``ExecutableNotFound``.
    """
    import torch

    outputs = _as_outputs(output, "torchviz_graph")
    if params is not None:
        if isinstance(params, torch.nn.Module):
            params = dict(params.named_parameters())
        _tensor_names(params, None)  # validates
    try:
        with warnings.catch_warnings():  # torchviz still uses distutils' LooseVersion
            warnings.simplefilter("ignore", DeprecationWarning)
            from torchviz import make_dot
    except ImportError as err:
        raise CourseError(
            "torchviz is not installed. Install it with `pip install torchviz`, or use "
            "draw_graph(...) which needs no extra package."
        ) from err
    target = outputs[0] if len(outputs) == 1 else tuple(outputs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            dot = make_dot(target, params=params, **make_dot_options)
    except RecursionError:
        raise CourseError(
            "torchviz walks the graph recursively and cannot draw a graph this deep "
            "(about 1,000 operations). Use draw_graph(...), which walks iteratively."
        ) from None
    source = dot.source
    mapping: dict[str, str] = {}

    def rename(key: str) -> str:
        if key not in mapping:
            mapping[key] = f"n{len(mapping)}"
        return mapping[key]

    # rename only node ids at the start of a statement, never numbers inside labels
    renamed = _TORCHVIZ_STATEMENT.sub(
        lambda m: "\t" + rename(m.group(1)) + (" -> " + rename(m.group(3)) if m.group(2) else ""),
        source,
    )
    return TorchvizPicture(renamed)
