"""How a check result looks: plain text, a compact coloured HTML verdict, a Hint button.

The verdict always lives in the result's own text/plain and text/html forms, so
GitHub, nbval and a terminal show it too. In a Jupyter kernel with ipywidgets, a check
that did not pass (failed, not attempted, or the learner's own code raised) also shows a
"Hint" button that reveals the tiered hints one at a time. Everything here is
deterministic: no random ids, no varying emoji.
"""

from __future__ import annotations

import html
import re

from course_helpers.widgets import (
    display_widget,
    saved_copy_style,
    stale_note,
    widget_style,
    widgets_available,
)

# status -> (fixed symbol, label, colour)
STYLES = {
    "passed": ("✓", "Passed", "#2e7d32"),
    "failed": ("✗", "Not yet", "#c62828"),
    "not_attempted": ("○", "Not attempted", "#6d6d6d"),
    "error": ("!", "Error", "#e65100"),
}


def _wants_hint(result) -> bool:
    """Offer a hint unless it passed; ``hint_count`` is 0 when the error is the course's own
    (an unknown exercise id, a bug in the checker), where a hint would not help."""
    return result.status in ("failed", "not_attempted", "error") and result.hint_count > 0


def hint_line(exercise_id: str) -> str:
    return f"Run hint({exercise_id!r}) for a hint."


def result_text(result) -> str:
    """The plain-text verdict: one heading line, the diagnosis, and how to get a hint."""
    symbol, label, _ = STYLES.get(result.status, STYLES["error"])
    title = f" ({result.title})" if result.title else ""
    lines = [f"{symbol} {label}: {result.exercise_id}{title}", result.message]
    attempts = attempt_line(result)
    if attempts:
        lines.append(attempts)
    if _wants_hint(result):
        lines.append(hint_line(result.exercise_id))
    return "\n".join(lines)


def attempt_line(result) -> str:
    """Which attempt this was, and when it first passed ("" when attempts are not recorded:
    progress off, as in every build and test run, so saved outputs never depend on it)."""
    number, first = getattr(result, "attempt", 0), getattr(result, "first_passed", 0)
    if not number or result.status == "not_attempted":
        return ""
    if result.passed and first == number:
        return (
            "Passed on your first attempt." if number == 1 else f"Passed after {number} attempts."
        )
    if first:
        return f"Attempt {number}; you first passed this exercise on attempt {first}."
    return f"Attempt {number} at this exercise."


def result_html(result) -> str:
    """A compact coloured block; inline styles only, so it renders the same everywhere."""
    symbol, label, colour = STYLES.get(result.status, STYLES["error"])
    title = f" · {html.escape(result.title)}" if result.title else ""
    parts = [
        f'<div class="course-check course-check-{result.status}" style="border-left: 4px solid '
        f'{colour}; padding: 4px 10px; margin: 4px 0;">',
        f'<div><strong style="color: {colour};">{symbol} {label}</strong> '
        f"<code>{html.escape(result.exercise_id)}</code>{title}</div>",
        '<div style="white-space: pre-wrap; margin-top: 2px;">'
        f"{_code_spans(html.escape(result.message))}</div>",
    ]
    attempts = attempt_line(result)
    if attempts:
        parts.append(f'<div style="opacity: 0.75; margin-top: 2px;">{attempts}</div>')
    if _wants_hint(result):
        parts.append(
            '<div style="opacity: 0.75; margin-top: 2px;">'
            f"Run <code>hint({html.escape(repr(result.exercise_id))})</code> for a hint.</div>"
        )
    parts.append("</div>")
    return "".join(parts)


def _code_spans(escaped: str) -> str:
    """`code` in a message becomes <code>code</code> in HTML (the text form keeps backticks)."""
    return re.sub(r"`([^`\n]+)`", r"<code>\1</code>", escaped)


def result_bundle(result) -> dict:
    return {"text/plain": result_text(result), "text/html": result_html(result)}


def show_result(result) -> None:
    """Display the verdict, then (when widgets work here) a Hint button below it."""
    from IPython.display import display

    offer = _wants_hint(result) and widgets_available()
    bundle = result_bundle(result)
    if offer:  # the stylesheet travels with the output that precedes the widget
        bundle["text/html"] = widget_style() + bundle["text/html"]
    handle = display(bundle, raw=True, display_id=True if offer else None)
    if offer:
        try:
            button = hint_widget(result.exercise_id, shown=result.message, verdict=(handle, bundle))
        except Exception:  # no working widgets here: the text above already says hint(ID)
            return
        display_widget(button)


def with_saved_hints(bundle: dict, hints: list) -> dict:
    """The verdict ``bundle`` followed by the hints revealed under it: a plain output that a
    notebook keeps even when JupyterLab saves no widget state (hidden while the Hint box
    itself shows them; see docs/learner-journey.md)."""
    if not hints:
        return bundle
    blocks = "".join(h._repr_mimebundle_()["text/html"] for h in hints)
    return {
        "text/plain": "\n\n".join([bundle["text/plain"], *map(str, hints)]),
        "text/html": bundle["text/html"]
        + f'{saved_copy_style()}<div class="course-saved-hints">{blocks}</div>',
    }


def hint_widget(exercise_id: str, shown: str = "", verdict=None):
    """A "Hint" button and an output area; each click reveals the next tiered hint.

    Its text form is fixed (``[Hint button for ID]``), so saved notebooks compare
    equal however often the button was clicked. ``verdict``: the (display handle, bundle)
    of the verdict above, which each revealed hint is copied into.
    """
    import ipywidgets as widgets

    from course_helpers.checking.hints import next_hint

    class HintBox(widgets.VBox):
        def __repr__(self) -> str:  # the text form saved in notebooks: short and fixed
            return f"[Hint button for {exercise_id}]"

    feedback = shown
    button = widgets.Button(description="Hint", tooltip=f"the next hint for {exercise_id}")
    area = widgets.Output()
    revealed = []

    def reveal(_button):
        shown = next_hint(
            exercise_id, feedback, button=True
        )  # never the verdict right above, again
        with area:
            from IPython.display import display

            display(shown)
        revealed.append(shown)
        if verdict is not None and verdict[0] is not None:
            verdict[0].update(with_saved_hints(verdict[1], revealed), raw=True)
        if shown.is_last:
            button.disabled = True

    button.on_click(reveal)
    box = HintBox([button, area, stale_note()])
    box.add_class("course-widget")
    return box
