"""Graphviz's ``dot``: finding it, running it, labelling its edges, and the one-time notice
shown when it is missing and the built-in layout (``graphs.svg``) draws instead."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from course_helpers.graphs.styles import BACKGROUND, LABEL_TEXT

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


def graphviz_dot() -> str | None:
    """Path of Graphviz's ``dot`` program, or None when it is missing or disabled.

    ``COURSE_GRAPHVIZ=off`` forces the pure-Python renderer (tests use it).
    """
    if os.environ.get(GRAPHVIZ_ENV, "").strip().lower() in ("off", "0", "no", "false"):
        return None
    return shutil.which("dot")


_DOT_EDGE = re.compile(
    r'<g id="[^"]*" class="edge">\s*<title>(\w+)&#45;&gt;(\w+)</title>\s*<path [^>]*d="([^"]+)"/>'
    r"((?:\s*<polygon [^>]*/>)*)"
)


_DOT_NODE = re.compile(r'class="node">\s*<title>\w+</title>\s*<polygon [^>]*points="([^"]+)"')


_POINTS = re.compile(r'points="([^"]+)"')


_VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')


def _points(text: str) -> list[tuple[float, float]]:
    pairs = [p.split(",") for p in text.split()]
    return [(float(x), float(y)) for x, y in pairs]


def label_dot_edges(svg: str, labels: dict) -> str:
    """Write each label of ``labels`` beside the middle of its edge in a Graphviz SVG,
    where it covers no edge, arrowhead, box or other label (``graphs.labels``)."""
    from html import escape

    from course_helpers.graphs.labels import place_label, sample_path, sample_polyline

    box = _VIEWBOX.search(svg)
    end = svg.rfind("</g>")
    if box is None or end < 0:
        return svg
    width, height = float(box.group(1)), float(box.group(2))
    bounds = (-4.0, 4.0 - height, width - 4.0, 4.0)  # the graph group is translated (4, h - 4)
    edges = []
    for src, dst, path, heads in _DOT_EDGE.findall(svg):
        pts = sample_path(path)
        for head in _POINTS.findall(heads):
            corners = _points(head)
            pts += sample_polyline(corners, 1.0)
        edges.append((src, dst, path, pts))
    lines = [pt for *_, pts in edges for pt in pts]
    rects = []
    for text in _DOT_NODE.findall(svg):
        xs, ys = zip(*_points(text), strict=False)
        rects.append((min(xs), min(ys), max(xs), max(ys)))
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for src, dst, path, pts in edges:
        text = labels.get((src, dst))
        if text is None:
            continue
        w = len(text) * 6.0 + 6
        x0, y0, x1, _ = place_label(
            _bezier_middle(path), (w, 13.0), pts, lines, rects, placed, bounds
        )
        out.append(
            f'<g class="edge-label"><rect x="{x0:.1f}" y="{y0:.1f}" '
            f'width="{w:.1f}" height="13" rx="3" fill="{BACKGROUND}" '
            f'stroke="{LABEL_TEXT}" stroke-width="0.8"/><text text-anchor="middle" '
            f'x="{(x0 + x1) / 2:.1f}" y="{y0 + 10:.1f}" font-family="monospace" font-size="10.00" '
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


def dot_size(size: tuple[float, float]) -> tuple[float, float]:
    """A box size of the SVG fallback (px) as Graphviz inches for 10pt monospace text."""
    from course_helpers.graphs.svg import CHAR_W, LINE_H, PAD_X, PAD_Y

    chars = (size[0] - 2 * PAD_X) / CHAR_W
    lines = (size[1] - 2 * PAD_Y) / LINE_H
    return (chars * 6.0 + 14) / 72, (lines * 11.5 + 7) / 72


def dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


_GENERATED = re.compile(r"<!-- Generated by graphviz[^>]*-->\n?")


def draw_svg(source: str, fallback) -> str:
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
