"""What a backward replay says around its pictures: the one-line colour legend above each
step, and the note of a saved copy of a step (where the step-through buttons are not shown)."""

from __future__ import annotations

from course_helpers.graphs.styles import ACTIVE_FILL, DONE, HIGHLIGHT, STYLES
from course_helpers.widgets import RUN_DOWN_TO_HERE


def static_note(number: int) -> str:
    """What a saved copy of step ``number`` says above its picture."""
    return (
        f"Static copy of step {number}. To step through the replay, run the notebook down to "
        f"here: {RUN_DOWN_TO_HERE} (the buttons need a running kernel with ipywidgets)."
    )


def legend_html(released: bool = True) -> str:
    """A compact one-line colour legend for the replay pictures (wraps tightly if narrow)."""
    op_fill = STYLES["op"][0]
    leaf_fill, leaf_border = STYLES["leaf"][:2]

    def swatch(fill: str, border: str, text: str) -> str:
        return (
            f'<span style="white-space:nowrap"><span style="display:inline-block;width:10px;'
            f"height:8px;background:{fill};border:2px solid {border};margin-right:3px;"
            f'vertical-align:-1px"></span>{text}</span>'
        )

    ran = "ran: saved tensors released" if released else "ran: saved tensors kept (retain_graph)"
    arrow = (
        f'<span style="white-space:nowrap"><b style="color:{HIGHLIGHT}">&#8594;</b> gradient '
        "sent now (sender &#8594; receiver)</span>"
    )
    return (
        '<div class="course-legend" style="font-size:12px;line-height:1.35;display:flex;'
        'flex-wrap:wrap;gap:0 10px;margin:2px 0">'
        f"{swatch(ACTIVE_FILL, HIGHLIGHT, 'running now')}"
        f"{swatch(op_fill, DONE, ran)}"
        f"{swatch(op_fill, STYLES['op'][1], 'waiting')}"
        f"{swatch(leaf_fill, leaf_border, 'leaf: .grad so far')}"
        '<span style="white-space:nowrap">in (so far): gradient received</span>'
        f"{arrow}</div>"
    )
