"""Where a replay writes a gradient on an edge: beside the edge, never over it.

A label centred on a short edge hid the edge and its arrowhead. Both renderers (the
built-in layout in ``graphs.svg`` and Graphviz's SVG in ``graphs.dot``) place each label
with :func:`place_label`: next to the middle of its edge, at the first spot that covers
no edge, no arrowhead, no box and no label placed before, inside the canvas.
"""

from __future__ import annotations

import re
from bisect import bisect_left

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # x0, y0, x1, y1


def sample_polyline(points: list[Point], step: float = 2.0) -> list[Point]:
    """Points every ``step`` units along a polyline (its corners included)."""
    out = [points[0]]
    for (ax, ay), (bx, by) in zip(points, points[1:], strict=False):
        length = ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5
        count = max(int(length / step), 1)
        out.extend(
            (ax + (bx - ax) * k / count, ay + (by - ay) * k / count) for k in range(1, count + 1)
        )
    return out


def sample_path(d: str) -> list[Point]:
    """Points along an SVG path of straight (``M``/``L``) or cubic (``C``) pieces."""
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", d)]
    pts = list(zip(numbers[0::2], numbers[1::2], strict=False))
    if "C" not in d:
        return sample_polyline(pts)
    out = [pts[0]]
    for k in range(0, len(pts) - 3, 3):
        p0, p1, p2, p3 = pts[k : k + 4]
        for j in range(1, 25):
            t = j / 24
            a, b, c, e = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t**3
            out.append(
                (
                    a * p0[0] + b * p1[0] + c * p2[0] + e * p3[0],
                    a * p0[1] + b * p1[1] + c * p2[1] + e * p3[1],
                )
            )
    return out


def _overlaps(a: Rect, b: Rect) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_label(
    middle: Point,
    size: tuple[float, float],
    own: list[Point],
    lines: list[Point],
    boxes: list[Rect],
    placed: list[Rect],
    bounds: Rect,
) -> Rect:
    """A free rectangle of ``size`` beside the edge through ``middle``.

    ``own`` samples the label's edge, ``lines`` every edge and arrowhead of the picture,
    ``boxes`` the node boxes, ``placed`` the labels already placed (the result is added to
    it); ``bounds`` is the canvas. Tries right of the edge, then left, then further out and
    a little up or down; falls back to the first spot right of the edge.
    """
    w, h = size
    mx, my = middle
    gap = 3.0
    first = None
    for dy in (0.0, -h / 2, h / 2, -h, h):
        top = my + dy - h / 2
        if top < bounds[1] or top + h > bounds[3]:
            continue
        # what lies in this horizontal band, found once: x of drawn points, boxes, labels
        xs = sorted(px for px, py in lines if top - 1 <= py <= top + h + 1)
        rects = [r for r in [*boxes, *placed] if r[1] < top + h and top < r[3]]
        band = [px for px, py in own if top - 1 <= py <= top + h + 1] or [mx]
        right, left = max(band) + gap, min(band) - gap - w
        for shift in range(0, 80, 4):
            for x0 in (right + shift, left - shift):
                rect = (x0, top, x0 + w, top + h)
                first = first or rect
                if x0 < bounds[0] or x0 + w > bounds[2]:
                    continue
                k = bisect_left(xs, x0 - 1)
                if k < len(xs) and xs[k] <= x0 + w + 1:
                    continue  # a point of an edge or arrowhead lies under it
                if any(_overlaps(rect, other) for other in rects):
                    continue
                placed.append(rect)
                return rect
    if first is None:
        first = (mx + gap, my - h / 2, mx + gap + w, my + h / 2)
    x0 = min(max(first[0], bounds[0]), bounds[2] - w)
    rect = (x0, first[1], x0 + w, first[3])
    placed.append(rect)
    return rect
