"""Tiered hints: ``hint(id)`` gives the next one (nudge → stronger → near-solution).

When the last check of an exercise diagnosed a typical mistake (a catalogued misconception,
a pattern the task forbids), the next hint addresses that mistake first; the tiers follow.
A mistake whose text the verdict itself already showed is not repeated by ``hint(id)`` or
the Hint button: they give the next tier.

The count of hints shown lives in this kernel only, so restarting the kernel starts
again at hint 1. In a notebook a hint appears where ``hint(id)`` is called, even when the
call is not the cell's last line: every hint counted is a hint shown. The full solution is
shown only when asked for explicitly: ``hint(id, solution=True)`` or ``solution(id)``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

_shown: dict[str, int] = {}
# exercise id -> the mistake diagnosed by its last check, not hinted at yet / hinted at last
_pending: dict[str, str] = {}
_addressed: dict[str, str] = {}
_verdicts: dict[str, str] = {}  # exercise id -> the text of its last check's verdict

# the bordered block that hints and quizzes are shown in (inline: renders the same everywhere)
BLOCK_STYLE = "border-left: 4px solid #1565c0; padding: 4px 10px; margin: 4px 0;"


@dataclass(frozen=True)
class HintText:
    """A hint (or the solution) that displays as text and as a small HTML block."""

    heading: str
    body: str
    footer: str = ""
    is_last: bool = False
    # set once this hint has been displayed in a notebook, so it never appears twice
    _displayed: list = field(default_factory=list, repr=False, compare=False)

    def __str__(self) -> str:
        return "\n".join(part for part in (self.heading, self.body, self.footer) if part)

    def __repr__(self) -> str:
        return str(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        footer = (
            f'<div style="opacity: 0.75;">{html.escape(self.footer)}</div>' if self.footer else ""
        )
        block = (
            f'<div class="course-hint" style="{BLOCK_STYLE}">'
            f"<strong>{html.escape(self.heading)}</strong>"
            f'<div style="white-space: pre-wrap;">{html.escape(self.body)}</div>{footer}</div>'
        )
        return {"text/plain": str(self), "text/html": block}

    def _ipython_display_(self):
        if self._displayed:  # already shown where hint() was called
            return
        self._displayed.append(True)
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)


def _show_now(text: HintText) -> HintText:
    """In IPython, display the hint at once (a hint counted must be a hint seen)."""
    import sys

    if "IPython" in sys.modules:
        from IPython import get_ipython

        if get_ipython() is not None:
            text._ipython_display_()
    return text


def hint(exercise_id: str, solution: bool = False) -> HintText:
    """The next hint for ``exercise_id`` ("Hint 1/3", "Hint 2/3", ...).

    After the last hint, further calls repeat it and point to the full solution,
    which ``hint(exercise_id, solution=True)`` shows.
    """
    from course_helpers.errors import require_flag
    from course_helpers.lessons import get

    exercise_id = get(exercise_id).id  # a clear CourseError for a wrong id, or a list of them
    if require_flag(solution, "solution", f"hint({exercise_id!r})"):
        return _show_now(_solution(exercise_id))
    return _show_now(next_hint(exercise_id, _verdicts.get(exercise_id, "")))


def solution(exercise_id: str) -> HintText:
    """The full solution of ``exercise_id`` (try the hints first)."""
    return _solution(exercise_id)


def note_check(exercise_id: str, mistake: str, verdict: str = "") -> None:
    """Called by ``check``: the mistake its verdict diagnosed ("" for none) is what the next
    hint addresses, unless that hint was already about this very mistake, or the verdict's
    own text (``verdict``) already says it word for word: then the next tier comes."""
    _verdicts[exercise_id] = verdict
    if not mistake:
        _pending.pop(exercise_id, None)
    elif _addressed.get(exercise_id) != mistake:
        _pending[exercise_id] = mistake


def next_hint(exercise_id: str, shown: str = "", *, button: bool = False) -> HintText:
    """The hint about the last check's diagnosed mistake, if one is pending; otherwise
    advance this kernel's hint counter for the exercise and return that tier.

    ``shown`` is feedback already on screen right above the hint (the Hint button under a
    verdict): a pending mistake whose text it already holds is not repeated; the next tier
    comes instead. ``button``: the hint answers a click on the Hint button, so its footer
    says to click again rather than to run ``hint(...)``."""
    from course_helpers.lessons import get

    exercise = get(exercise_id)
    hints = tuple(exercise.hints)
    count = len(hints)
    seen = _shown.get(exercise.id, 0)
    mistake = _pending.pop(exercise.id, "")
    if mistake and shown and mistake.strip() in shown:
        _addressed[exercise.id] = mistake
        mistake = ""
    if mistake:
        _addressed[exercise.id] = mistake
        after = min(seen + 1, count)
        return HintText(
            f"Hint for {exercise.id}: about your last answer",
            mistake,
            (
                f"Click Hint again for hint {after}/{count}."
                if button
                else f"Run hint({exercise.id!r}) again for hint {after}/{count}."
            ),
        )
    number = min(seen + 1, count)
    _shown[exercise.id] = number
    _tell_grader(exercise.id, number)
    is_last = number == count
    footer = ""
    if is_last:
        again = "You have seen all the hints. " if seen >= count else "That was the last hint. "
        where = "in a code cell, run " if button else ""
        footer = again + f"The full solution: {where}hint({exercise.id!r}, solution=True)"
    return HintText(f"Hint {number}/{count} for {exercise.id}", hints[number - 1], footer, is_last)


def reset_hints(exercise_id: str | None = None) -> None:
    """Start the hints again at 1 (for one exercise, or for all)."""
    for counts in (_shown, _pending, _addressed, _verdicts):
        if exercise_id is None:
            counts.clear()
        else:
            counts.pop(exercise_id, None)


def _solution(exercise_id: str) -> HintText:
    from course_helpers.lessons import get

    exercise = get(exercise_id)
    _tell_grader(exercise.id, 0)
    return HintText(f"Solution for {exercise.id}", exercise.solution.strip(), "", True)


def _tell_grader(exercise_id: str, tier: int) -> None:
    """While graded, the grader's report names the hints shown (tier 0: the solution)."""
    from course_helpers.checking.submissions import note_hint_for_grader

    note_hint_for_grader(exercise_id, tier)
