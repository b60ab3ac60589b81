"""Pictures of the autograd graph that PyTorch records.

``draw_graph(loss)`` walks the graph behind ``loss`` (iteratively, so a chain of
10,000 operations is fine) and returns a :class:`GraphPicture`. Nodes get ids from
the traversal order (``n0`` is the output), never from memory addresses, so the
same graph gives the same DOT source and the same text on every run and machine.

In Jupyter the picture shows as SVG. Graphviz's ``dot`` draws it when it is
installed; otherwise a pure-Python layered layout (``course_helpers.graphs.svg``)
draws a simpler picture; the first such picture in a kernel carries a one-line
install notice (later ones do not repeat it). The ``text/plain`` form is the same in
both cases: it is what nbval compares. Every picture has an opaque white background,
so it stays legible in dark notebook themes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from course_helpers.errors import CourseError
from course_helpers.graphs.dot import NoticeShare, dot_escape, dot_size, draw_svg, label_dot_edges
from course_helpers.graphs.styles import BACKGROUND, HIGHLIGHT, LABEL_TEXT, node_style
from course_helpers.graphs.svg import picture_html
from course_helpers.graphs.walk import (
    WALK_LIMIT,
    as_outputs,
    collapse_chains,
    describe_nodes,
    highlight_targets,
    path_to,
    tensor_names,
    truncate,
    walk,
)

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


# --------------------------------------------------------------------------- input checks


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


# --------------------------------------------------------------------------- the walk


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
        # "forward": arrows from a node's inputs to it (the forward pass, draw_graph);
        # "backward": from a node to its inputs, the way gradients flow (a replay's steps)
        self.arrows = "forward"
        self.done_note = ""  # what "+ = already ran" adds in the text form (a replay's steps)

    # -- text ------------------------------------------------------------------------------
    def text(self) -> str:
        """Plain-text rendering: one node per line in traversal order, inputs after ``<-``."""
        head = [
            f"{self.title}: {len(self.nodes)} nodes. 'a <- b' means a is computed from b; "
            "backward() runs from n0 towards the leaves."
        ]
        if self.arrows == "backward":
            head.append(
                "arrows in the picture point the way gradients flow: from the node that "
                "sends a gradient to the node it is computed from"
            )
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
            head.append("> = running now, + = already ran" + self.done_note)
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
            out.append(f'\tlabel="{dot_escape(" | ".join(self.notes))}" labelloc=t')
        for node in self.nodes:
            fill, border, style = node_style(node)
            label = dot_escape(f"{node.id}: {node.lines[0]}")
            extra = "".join("\\n" + dot_escape(line) for line in node.lines[1:])
            width = " penwidth=2.5" if node.on_path or node.active or node.done else ""
            size = self.box_sizes.get(node.id)
            if size:  # fixed size, so the layout ignores the text (a replay's steps)
                w, h = dot_size(size)
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
                    label = f' xlabel="{dot_escape(text)}" fontcolor="{LABEL_TEXT}"'
                    attrs = f' [color="{HIGHLIGHT}" penwidth=2{label if xlabels else ""}]'
                elif node.on_path and self._by_id(src).on_path:
                    attrs = f' [color="{HIGHLIGHT}" penwidth=2]'
                if self.arrows == "backward":  # same layout, arrowhead at the input
                    attrs = f" [dir=back {attrs[2:]}" if attrs else " [dir=back]"
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
        from course_helpers.graphs.svg import render_svg

        def fallback():  # the same picture keeps its notice when redrawn
            notice = self.notice_share.claim()
            shown = notice if self.show_notice else ""
            return render_svg(self, note=shown or None, reserve=notice or None)

        if not self.edge_labels:
            return draw_svg(self.source, fallback)
        # Graphviz's xlabels can grow the canvas, which would shift a replay's picture from
        # step to step: draw without them and write the labels onto the finished SVG.
        svg = draw_svg(self._dot(xlabels=False), fallback)
        return svg if 'class="edge-label"' in svg else label_dot_edges(svg, self.edge_labels)

    def html(self, svg: str | None = None) -> str:
        """The picture with its text form under it, in a collapsible "Graph as text"."""
        return picture_html(self.svg() if svg is None else svg, self.text(), "Graph as text")

    def _repr_mimebundle_(self, include=None, exclude=None):
        svg = self.svg()
        return {"image/svg+xml": svg, "text/html": self.html(svg), "text/plain": self.text()}

    def with_state(
        self,
        *,
        active=None,
        done=(),
        extra_lines=None,
        edge_labels=None,
        box_sizes=None,
        released=(),
    ) -> GraphPicture:
        """A copy with one node marked as running, some as done, extra lines per node,
        texts on edges and fixed box sizes (see ``edge_labels`` and ``box_sizes``); the
        nodes in ``released`` say "released" instead of their saved tensors' shapes."""
        extra_lines = extra_lines or {}
        nodes = []
        for n in self.nodes:
            lines = n.lines
            if n.id in released:
                lines = (lines[0], *(released_line(line) for line in lines[1:]))
            nodes.append(
                replace(
                    n,
                    active=(n.id == active),
                    done=(n.id in done),
                    lines=lines + tuple(extra_lines.get(n.id, ())),
                )
            )
        return GraphPicture(
            nodes, self.title, self.notes, edge_labels=edge_labels, box_sizes=box_sizes
        )


def released_line(line: str) -> str:
    """``saved self: (3, 4)`` -> ``saved self: released`` (the node that ran dropped its
    reference; the memory is freed only if nothing else holds the tensor); others as is."""
    if line.startswith("saved ") and ": " in line:
        return line.split(": ")[0] + ": released"
    return line


# --------------------------------------------------------------------------- describing nodes


@dataclass(frozen=True)
class WalkRecord:
    """What replay_backward needs besides the picture: the autograd objects each drawn node
    stands for, the leaves' AccumulateGrad nodes and names, and the options used. Kept apart
    from the picture so that a picture never keeps a graph (and its saved tensors) alive."""

    objects: tuple
    leaf_fns: dict
    names: dict
    options: dict
    complete: bool = True  # False: the walk stopped at WALK_LIMIT nodes


def build_picture(output, params, options: dict, who: str) -> tuple[GraphPicture, WalkRecord]:
    """Walk the graph and build the picture (shared by draw_graph and replay_backward)."""
    opts = _check_options(options)
    outputs = as_outputs(output, who)
    names = tensor_names(params, opts["names"])
    raws = walk(outputs, opts["show_accumulate"])
    total = len(raws)
    notes = []
    if total >= WALK_LIMIT:
        notes.append(
            f"the graph has more than {WALK_LIMIT:,} nodes: only the {WALK_LIMIT:,} nearest "
            "the output were walked; draw a smaller part of it to see the rest"
        )
    targets: set[int] = set()
    if opts["highlight"] is not None:
        targets = highlight_targets(raws, opts["highlight"], names)
    target_leaves = [raws[i].obj for i in targets]
    max_nodes = opts["max_nodes"]
    if total > max_nodes:
        raws = collapse_chains(raws)
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
        raws = truncate(raws, max_nodes - 1)
        targets = {i for i in targets if i < len(raws)}
        notes.append(
            f"{hidden:,} more nodes not drawn (graph too large); pass max_nodes={total} "
            "to draw everything (slow), or draw a smaller part of the model"
        )
    on_path = path_to(raws, targets) if targets else set()
    described = describe_nodes(raws, opts, names)
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
        complete=total < WALK_LIMIT,
    )
    return GraphPicture(nodes, "autograd graph", notes), record


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
