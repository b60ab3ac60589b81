"""A small layered (Sugiyama-style) layout that writes SVG, for machines without Graphviz.

It needs no system program and no extra package: layers by longest path from the
outputs, virtual points for edges that skip layers, a few barycenter sweeps to
reduce crossings, then boxes centred over their neighbours. The result is simpler
than Graphviz's picture but deterministic and fast (see docs/graph-rendering.md).
"""

from __future__ import annotations

import re
import textwrap
from html import escape

from course_helpers.graphs.labels import place_label, sample_polyline

# Graphviz draws 10 pt text (13.3 px at 96 dpi); this layout works in 11 px units, so its
# SVG is shown SCALE times larger: the same text size with and without ``dot``.
SCALE = (10 * 4 / 3) / 11
CHAR_W = 6.6  # px per character at 11px monospace
LINE_H = 14.0
PAD_X = 8.0
PAD_Y = 5.0
GAP_X = 18.0
GAP_Y = 34.0
MARGIN = 12.0


def layout(sizes: list[tuple[float, float]], edges: list[tuple[int, int]]):
    """Place boxes of ``sizes`` (w, h); edges go from an input (above) to its user (below).

    Returns (centres, routes, width, height): ``centres[i]`` is (x, y) of box i and
    ``routes[k]`` is the list of points of edge k.
    """
    n = len(sizes)
    users: list[list[int]] = [[] for _ in range(n)]
    inputs: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        users[a].append(b)
        inputs[b].append(a)
    # depth from the bottom: outputs 0, an input sits one layer above its highest user
    pending = [len(users[i]) for i in range(n)]
    depth = [0] * n
    ready = [i for i in range(n) if pending[i] == 0]
    while ready:
        i = ready.pop()
        for a in inputs[i]:
            depth[a] = max(depth[a], depth[i] + 1)
            pending[a] -= 1
            if pending[a] == 0:
                ready.append(a)
    top = max(depth) if n else 0
    layer_of = [top - d for d in depth]

    # virtual points for edges spanning several layers
    widths = [w for w, _ in sizes]
    layer_members: list[list[int]] = [[] for _ in range(top + 1)]
    for i in range(n):
        layer_members[layer_of[i]].append(i)
    node_layer = list(layer_of)
    up: list[list[int]] = [[] for _ in range(n)]  # neighbours one layer above
    down: list[list[int]] = [[] for _ in range(n)]
    chains: list[list[int]] = []
    for a, b in edges:
        chain = [a]
        for layer in range(layer_of[a] + 1, layer_of[b]):
            v = len(node_layer)
            node_layer.append(layer)
            widths.append(2.0)
            up.append([])
            down.append([])
            layer_members[layer].append(v)
            chain.append(v)
        chain.append(b)
        for s, t in zip(chain, chain[1:], strict=False):
            down[s].append(t)
            up[t].append(s)
        chains.append(chain)

    # crossing reduction: barycenter sweeps, ties broken by the current position
    position = {}
    for members in layer_members:
        for k, v in enumerate(members):
            position[v] = k
    for sweep in range(4):
        layers = range(1, top + 1) if sweep % 2 == 0 else range(top - 1, -1, -1)
        for layer in layers:
            members = layer_members[layer]
            near = up if sweep % 2 == 0 else down

            def key(v, near=near):
                ps = [position[u] for u in near[v]]
                return (sum(ps) / len(ps) if ps else position[v], position[v])

            members.sort(key=key)
            for k, v in enumerate(members):
                position[v] = k

    # x: pack left to right, then pull each node towards its neighbours' mean
    x = [0.0] * len(node_layer)
    for members in layer_members:
        cursor = 0.0
        for v in members:
            x[v] = cursor + widths[v] / 2
            cursor += widths[v] + GAP_X
    for sweep in range(6):
        layers = range(1, top + 1) if sweep % 2 == 0 else range(top - 1, -1, -1)
        for layer in layers:
            near = up if sweep % 2 == 0 else down
            members = layer_members[layer]
            wanted = []
            for v in members:
                ps = [x[u] for u in near[v]]
                wanted.append(sum(ps) / len(ps) if ps else x[v])
            _place(members, wanted, widths, x)
    left = min((x[v] - widths[v] / 2 for v in range(len(x))), default=0.0)
    x = [value - left + MARGIN for value in x]

    heights = [max((sizes[v][1] for v in m if v < n), default=0.0) for m in layer_members]
    y_top = []
    cursor = MARGIN
    for h in heights:
        y_top.append(cursor)
        cursor += h + GAP_Y
    centres = [(x[i], y_top[layer_of[i]] + heights[layer_of[i]] / 2) for i in range(n)]
    routes = []
    for chain in chains:
        a, b = chain[0], chain[-1]
        pts = [(x[a], y_top[layer_of[a]] + heights[layer_of[a]] / 2 + sizes[a][1] / 2)]
        for v in chain[1:-1]:
            layer = node_layer[v]
            pts.append((x[v], y_top[layer] + heights[layer] / 2))
        pts.append((x[b], y_top[layer_of[b]] + heights[layer_of[b]] / 2 - sizes[b][1] / 2))
        routes.append(pts)
    width = max((x[v] + widths[v] / 2 for v in range(len(x))), default=0.0) + MARGIN
    height = cursor - GAP_Y + MARGIN
    return centres, routes, width, height


def _place(members, wanted, widths, x):
    """Move members (left-to-right order fixed) close to ``wanted`` without overlaps."""
    placed = []
    for v, want in zip(members, wanted, strict=False):
        lo = placed[-1] if placed else None
        if lo is not None:
            want = max(want, x[lo] + widths[lo] / 2 + GAP_X + widths[v] / 2)
        x[v] = want
        placed.append(v)
    # shift back left where the push overshot the mean wish of the layer
    if members:
        excess = sum(x[v] - w for v, w in zip(members, wanted, strict=False)) / len(members)
        for v in members:
            x[v] -= excess


BACKGROUND = "#ffffff"  # opaque: legible on light and dark notebook themes alike
TEXT = "#1a1a1a"
EDGE = "#444444"
NOTE_TEXT = "#7a4200"
LABEL_TEXT = "#9c1c1d"
ARROW_LEN = 7.0
ARROW_HALF = 3.5


def box_size(lines) -> tuple[float, float]:
    """Width and height of a box holding ``lines`` of monospace text."""
    chars = max(len(line) for line in lines)
    return chars * CHAR_W + 2 * PAD_X, len(lines) * LINE_H + 2 * PAD_Y


def _spread_ports(routes, edges, centres, sizes) -> None:
    """Give each edge its own end point on the box edge it enters or leaves.

    Edges entering one box end at distinct points spread along its top edge (ordered by
    where they come from, so they do not cross there); edges leaving a box start at
    distinct points along its bottom edge.
    """
    incoming: dict[int, list[int]] = {}
    outgoing: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(edges):
        outgoing.setdefault(a, []).append(k)
        incoming.setdefault(b, []).append(k)
    before = [list(pts) for pts in routes]
    for node, ks in incoming.items():
        ks.sort(key=lambda k: (before[k][-2][0], k))
        x0 = centres[node][0] - sizes[node][0] / 2
        for j, k in enumerate(ks):
            routes[k][-1] = (x0 + sizes[node][0] * (j + 1) / (len(ks) + 1), routes[k][-1][1])
    for node, ks in outgoing.items():
        ks.sort(key=lambda k: (before[k][1][0], k))
        x0 = centres[node][0] - sizes[node][0] / 2
        for j, k in enumerate(ks):
            routes[k][0] = (x0 + sizes[node][0] * (j + 1) / (len(ks) + 1), routes[k][0][1])


def _arrow(pts):
    """(path points shortened to the arrow's base, arrowhead polygon points)."""
    (px, py), (tx, ty) = pts[-2], pts[-1]
    length = max(((tx - px) ** 2 + (ty - py) ** 2) ** 0.5, 1e-6)
    ux, uy = (tx - px) / length, (ty - py) / length
    bx, by = tx - ux * ARROW_LEN, ty - uy * ARROW_LEN
    head = [
        (tx, ty),
        (bx - uy * ARROW_HALF, by + ux * ARROW_HALF),
        (bx + uy * ARROW_HALF, by - ux * ARROW_HALF),
    ]
    return [*pts[:-1], (bx, by)], head


def _midpoint(pts):
    """The point halfway along a polyline."""
    seg = [
        ((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5 for a, b in zip(pts, pts[1:], strict=False)
    ]
    half = sum(seg) / 2
    for (a, b), length in zip(zip(pts, pts[1:], strict=False), seg, strict=False):
        if half <= length and length > 0:
            t = half / length
            return a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
        half -= length
    return pts[-1]


def _svg(
    boxes, edges, note, title: str, sizes=None, labels=None, reserve=None, backward=False
) -> str:
    """boxes: list of dict(lines, fill, border, dash, bold[, id]); edges: (src, dst, colour,
    bold). ``sizes`` fixes the box sizes used for the layout (a replay passes the same sizes
    for every step, so the layout never moves); ``labels`` maps an edge index to a short
    text written on that edge; ``reserve`` is a note whose space is kept (empty when
    ``note`` is None), so pictures with and without the note have the same size;
    ``backward`` puts the arrowheads at the input's end (the way gradients flow)."""
    if sizes is None:
        sizes = [box_size(box["lines"]) for box in boxes]
    pairs = [(a, b) for a, b, _, _ in edges]
    centres, routes, width, height = layout(sizes, pairs)
    routes = [list(pts) for pts in routes]
    _spread_ports(routes, pairs, centres, sizes)
    note_lines = textwrap.wrap(note, 90) if note else []
    space = textwrap.wrap(reserve, 90) if reserve else note_lines
    offset = len(space) * 13.0 + (6 if space else 0)
    if space:
        width = max(width, max(len(line) for line in space) * 6.1 + 2 * MARGIN)
    total = height + offset
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * SCALE:.0f}" '
        f'height="{total * SCALE:.0f}" viewBox="0 0 {width:.1f} {total:.1f}" '
        'font-family="monospace" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect class="background" x="0" y="0" width="{width:.1f}" height="{total:.1f}" '
        f'fill="{BACKGROUND}"/>',
    ]
    for k, line in enumerate(note_lines):
        out.append(
            f'<text class="notice" x="{MARGIN}" y="{MARGIN + 13.0 * k:.1f}" font-size="10" '
            f'font-style="italic" fill="{NOTE_TEXT}">{escape(line)}</text>'
        )
    out.append(f'<g transform="translate(0,{offset:.1f})">')
    ids = [box.get("id", str(k)) for k, box in enumerate(boxes)]
    drawn: list[list[tuple[float, float]]] = []  # sampled points of each edge and arrowhead
    for (a, b, colour, bold), pts in zip(edges, routes, strict=False):
        line, head = _arrow(pts[::-1] if backward else pts)
        drawn.append(sample_polyline(line) + sample_polyline([*head, head[0]], 1.0))
        d = "M" + " L".join(f"{px:.1f},{py:.1f}" for px, py in line)
        points = " ".join(f"{px:.1f},{py:.1f}" for px, py in head)
        out.append(
            f'<g class="edge"><title>{escape(ids[a])}-&gt;{escape(ids[b])}</title>'
            f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{2 if bold else 1}"/>'
            f'<polygon points="{points}" fill="{colour}" stroke="{colour}"/></g>'
        )
    dashes = {"dashed": ' stroke-dasharray="5,3"', "dotted": ' stroke-dasharray="2,2"'}
    for k, (box, (w, h), (cx, cy)) in enumerate(zip(boxes, sizes, centres, strict=False)):
        x0, y0 = cx - w / 2, cy - h / 2
        stroke = f' stroke-width="{2.5 if box["bold"] else 1}"'
        out.append(f'<g class="node"><title>{escape(ids[k])}</title>')
        out.append(
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w:.1f}" height="{h:.1f}" rx="5" '
            f'fill="{box["fill"]}" stroke="{box["border"]}"{stroke}'
            f"{dashes.get(box['dash'], '')}/>"
        )
        for j, line in enumerate(box["lines"]):
            ty = y0 + PAD_Y + LINE_H * (j + 0.78)
            weight = ' font-weight="bold"' if j == 0 else ""
            out.append(
                f'<text x="{cx:.1f}" y="{ty:.1f}" text-anchor="middle" fill="{TEXT}"{weight}>'
                f"{escape(line)}</text>"
            )
        out.append("</g>")
    rects = [
        (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        for (w, h), (cx, cy) in zip(sizes, centres, strict=False)
    ]
    everything = [pt for pts in drawn for pt in pts]
    placed: list[tuple[float, float, float, float]] = []
    for k, text in sorted((labels or {}).items()):
        w = len(text) * CHAR_W + 6
        x0, y0, x1, _ = place_label(
            _midpoint(routes[k]),
            (w, 15.0),
            drawn[k],
            everything,
            rects,
            placed,
            (0, 0, width, height),
        )
        out.append(
            f'<g class="edge-label"><rect x="{x0:.1f}" y="{y0:.1f}" width="{w:.1f}" '
            f'height="15" rx="3" fill="{BACKGROUND}" stroke="{LABEL_TEXT}" stroke-width="0.8"/>'
            f'<text x="{(x0 + x1) / 2:.1f}" y="{y0 + 11.5:.1f}" text-anchor="middle" '
            f'fill="{LABEL_TEXT}" font-weight="bold">{escape(text)}</text></g>'
        )
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def render_svg(picture, note: str | None = None, reserve: str | None = None) -> str:
    """SVG for a :class:`course_helpers.graphs.picture.GraphPicture` without Graphviz."""
    from course_helpers.graphs.styles import HIGHLIGHT, node_style

    index = {node.id: k for k, node in enumerate(picture.nodes)}
    boxes, edges, labels = [], [], {}
    fixed = picture.box_sizes
    for node in picture.nodes:
        fill, border, dash = node_style(node)
        boxes.append(
            {
                "id": node.id,
                "lines": node_lines(node),
                "fill": fill,
                "border": border,
                "dash": dash,
                "bold": node.on_path or node.active or node.done,
            }
        )
    for node in picture.nodes:
        for src in node.inputs:
            hot = node.on_path and picture.nodes[index[src]].on_path
            label = picture.edge_labels.get((src, node.id))
            if label is not None:
                labels[len(edges)] = label
            bold = hot or label is not None
            edges.append((index[src], index[node.id], HIGHLIGHT if bold else EDGE, bold))
    notes = list(picture.notes)
    kept = " | ".join([reserve, *notes]) if reserve else None
    if note:
        notes.insert(0, note)
    sizes = None
    if fixed:
        sizes = [fixed.get(b["id"]) or box_size(b["lines"]) for b in boxes]
    return _svg(
        boxes,
        edges,
        " | ".join(notes) or None,
        picture.title,
        sizes,
        labels,
        kept,
        backward=picture.arrows == "backward",
    )


def node_lines(node) -> list[str]:
    """The text lines of a node's box: its id and first line, then the others."""
    return [f"{node.id}: {node.lines[0]}", *node.lines[1:]]


_NODE = re.compile(r'(?m)^\t(\w+) \[label=("(?:[^"\\]|\\.)*"|[^\s\]]+)([^\]]*)\]')
_EDGE = re.compile(r"(?m)^\t(\w+) -> (\w+)")
_FILL = re.compile(r"fillcolor=(\"[^\"]*\"|\w+)")


def render_dot_source(source: str, note: str | None = None) -> str:
    """SVG for the simple DOT that torchviz writes (node lines and edge lines)."""
    colours = {"lightblue": "#add8e6", "orange": "#ffa500", "darkolivegreen1": "#caff70"}
    colours["darkolivegreen3"] = "#a2cd5a"
    order: dict[str, int] = {}
    boxes = []
    for name, label, rest in _NODE.findall(source):
        fill = _FILL.search(rest)
        colour = fill.group(1).strip('"') if fill else "lightgrey"
        if label.startswith('"'):
            label = label[1:-1]
        text = label.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        lines = [part.strip() for part in text.split("\n") if part.strip()] or [name]
        order[name] = len(boxes)
        boxes.append(
            {
                "id": name,
                "lines": lines,
                "fill": colours.get(colour, "#d3d3d3"),
                "border": EDGE,
                "dash": "solid",
                "bold": False,
            }
        )
    edges = _EDGE.findall(source)
    resolved = [(order[a], order[b], EDGE, False) for a, b in edges if a in order and b in order]
    return _svg(boxes, resolved, note, "torchviz graph")


def picture_html(svg: str, text: str, summary: str, max_height: str | None = None) -> str:
    """HTML: the SVG as an image, then ``text`` in a collapsible ``<details>`` under it.
    ``max_height`` (a CSS length) scales a tall picture down to fit, keeping its shape.

    The SVG goes in an ``<img>`` data URL, which JupyterLab's HTML sanitizer keeps (it
    strips inline ``<svg>``), so the picture also shows in a notebook that is not trusted.
    """
    import base64
    from html import escape

    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    first = text.splitlines()[0] if text else summary
    style = "max-width:100%" + (f";max-height:{max_height};width:auto" if max_height else "")
    return (
        f'<div class="course-graph"><img src="data:image/svg+xml;base64,{data}" '
        f'alt="{escape(first)} ({summary.lower()} below)" style="{style}"/>'
        f"<details><summary>{escape(summary)}</summary><pre>{escape(text)}</pre></details></div>"
    )
