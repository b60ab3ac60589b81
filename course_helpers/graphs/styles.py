"""The colours and border styles of graph pictures, shared by the DOT and SVG renderers and
the replay: one place, so every picture and every step reads the same."""

from __future__ import annotations

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


# the border of a node that already ran in a replay: purple, far in hue from the output's green
# and the running node's red (a green "ran" read as the output's colour, issue 36 item 6)
DONE = "#7b3294"


BACKGROUND = "#ffffff"  # every picture is opaque: legible on light and dark themes


LABEL_TEXT = "#9c1c1d"  # gradient values written on edges during a replay


def node_style(node) -> tuple[str, str, str]:
    """(fill, border, border style) of a picture node, by its kind and replay state."""
    fill, border, style = STYLES[node.kind]
    if node.active:
        fill = ACTIVE_FILL
    if node.done:
        border = DONE
    if node.on_path or node.active:
        border = HIGHLIGHT
    return fill, border, style
