"""``check(exercise_id, answer)``: collect an answer, judge it, show the verdict.

Checking is split in two so that grading can happen outside the learner's kernel:
:func:`~course_helpers.checking.submissions.collect` turns the answer into a submission of
plain records where the answer lives, and :func:`~course_helpers.checking.judges.judge`
compares that submission with the reference anywhere. ``check`` then records the attempt
(``checking.progress``), tells the hints what went wrong (``checking.hints``) and shows the
verdict (``checking.feedback``).

``COURSE_STRICT=1`` makes a check that does not pass raise :class:`ExerciseFailed`;
``COURSE_GRADING_DIR`` (set by the grader) makes ``check`` keep every submission for the
grader (see ``checking.submissions``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from typing import Any

from course_helpers.checking import diagnosis as dx
from course_helpers.checking.judges import checker_failed, judge, quiet
from course_helpers.checking.submissions import collect, save_for_grader
from course_helpers.errors import CourseError, OneLineTraceback

STRICT_ENV = "COURSE_STRICT"


class ExerciseFailed(OneLineTraceback, AssertionError):
    """Raised by ``check`` in strict mode (``COURSE_STRICT=1``) when an answer does not pass."""


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one ``check``: ``.passed``, ``.status``, ``.message`` (plain text).

    Displays itself as a compact coloured verdict in Jupyter (text/html) and as plain
    text elsewhere; both forms are deterministic.
    """

    exercise_id: str
    title: str
    status: str
    message: str
    hint_count: int = 0  # hints on offer for this result (0: none, e.g. a bug in the course)
    # from the progress file (0 when progress is off): this check's attempt number, and the
    # attempt on which the exercise first passed
    attempt: int = 0
    first_passed: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        from course_helpers.checking.feedback import result_text

        return result_text(self)

    def __repr__(self) -> str:
        return str(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from course_helpers.checking.feedback import result_bundle

        return result_bundle(self)

    def _ipython_display_(self):
        from course_helpers.checking.feedback import show_result

        shown = _shown_in(self)
        if shown is None or shown != _current_execution():  # not yet shown in this cell
            show_result(self)


# --------------------------------------------------------------------------- check


def check(exercise_id: str, answer: Any = ..., *, demo: bool = False) -> CheckResult:
    """Check your answer to exercise ``exercise_id`` and show what, if anything, is wrong.

    ``answer`` is what the exercise asks for: a tensor, a number, your function itself,
    an option key, or an exception class. Never raises while you learn; with
    ``COURSE_STRICT=1`` a failed check raises ``ExerciseFailed``.
    ``demo=True`` (for a lesson's worked example, not the learner's attempt) shows the
    verdict but records nothing: no progress, no attempt for the grader.
    """
    from course_helpers.errors import require_flag
    from course_helpers.lessons import get

    try:
        exercise = get(exercise_id)
        require_flag(demo, "demo", "check")
    except CourseError as err:
        return _finish(CheckResult(_id_label(exercise_id), "", "error", str(err)))
    except Exception as err:  # e.g. a lesson module with a bug: still no traceback here
        message = f"The exercise list could not be loaded ({type(err).__name__}: {err})."
        return _finish(CheckResult(_id_label(exercise_id), "", "error", message))
    try:
        with quiet():  # the test inputs' warnings are no part of the feedback
            submission = collect(exercise, answer)
    except CourseError as err:  # an answer that cannot be recorded: the message says why
        return _finish(CheckResult(exercise.id, exercise.title, "error", str(err)))
    except Exception as err:  # a bug in the checker must not become the learner's traceback
        return _finish(_internal_error(exercise, err))
    finally:
        _note_cells_read(exercise.id)
    try:
        if not demo:
            save_for_grader(exercise.id, submission)
    except Exception as err:
        _note_once(f"answer not recorded for grading: {err}")
    verdict = judge(exercise, submission)
    # an "error" that is the course's fault (not the learner's code) offers no hint
    helps = verdict.status != "error" or verdict.learner_error
    result = CheckResult(
        exercise.id,
        exercise.title,
        verdict.status,
        _not_repeated(answer, verdict),
        len(exercise.hints) if helps else 0,
    )
    if not demo:
        _note_for_hints(exercise, verdict)
        attempts = _record_progress(exercise, result, submission, verdict.misconception)
        if attempts is not None:
            result = dataclasses.replace(
                result, attempt=attempts.count, first_passed=attempts.first_passed
            )
    return _finish(result)


PRINTED_ABOVE = (
    "The run failed: the message printed above this verdict says on which rank, with which "
    "error, and at which line of your code."
)


def _not_repeated(answer: Any, verdict: dx.Diagnosis) -> str:
    """The verdict's message, or, for a failed two-rank run whose message this very cell
    printed already (``run_on_two_ranks``), a pointer to it: shown once, not twice."""
    printed_in = getattr(answer, "printed_in", None)
    if verdict.status == "error" and printed_in is not None and printed_in == _current_execution():
        return PRINTED_ABOVE
    return verdict.message


def _id_label(exercise_id: Any) -> str:
    """How a wrong first argument of ``check`` is named in the verdict's heading: an id as
    written (cut short), anything else by its type (a whole tensor would fill the heading)."""
    if isinstance(exercise_id, str):
        return exercise_id if len(exercise_id) <= 60 else exercise_id[:57] + "..."
    return f"({type(exercise_id).__name__} where an exercise id belongs)"


def _note_cells_read(exercise_id: str) -> None:
    """The next exercise's code begins after this cell (``checking.answer_code``)."""
    try:
        from course_helpers.checking.answer_code import note_check

        note_check(exercise_id)
    except Exception as err:
        _note_once(f"cells not noted: {err}")


def strict_mode() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _finish(result: CheckResult) -> CheckResult:
    if strict_mode() and not result.passed:
        raise ExerciseFailed(f"{result.exercise_id} ({result.status}): {result.message}")
    _show_now(result)
    return result


# --------------------------------------------------------------------------- display
# The verdict is shown where ``check`` is called, not only when it is a cell's last expression
# (a ``print`` after it, ``if check(...)``, a call inside a function). The cell's displayhook
# then skips the same result, so it appears exactly once; in a later cell it shows again.


def _current_execution():
    """The running cell's number in a real IPython shell; None outside one."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython
    from IPython.core.interactiveshell import InteractiveShell

    shell = get_ipython()
    return shell.execution_count if isinstance(shell, InteractiveShell) else None


def _shown_in(result: CheckResult):
    return getattr(result, "_course_shown_in", None)


def _show_now(result: CheckResult) -> None:
    cell = _current_execution()
    if cell is None:
        return
    from course_helpers.checking.feedback import show_result

    show_result(result)
    object.__setattr__(result, "_course_shown_in", cell)  # frozen: a private mark only


def _internal_error(exercise, err: Exception) -> CheckResult:
    return CheckResult(exercise.id, exercise.title, "error", checker_failed(err))


def _record_progress(exercise, result: CheckResult, submission: dict, misconception: str = ""):
    """Record the result (and the ``misconception`` it was diagnosed with, by label); the
    attempts so far (None when progress is off or failed). The same answer checked again
    (its submission's fingerprint) is no new attempt."""
    try:
        from course_helpers.checking import mistakes
        from course_helpers.checking.progress import answer_fingerprint, enabled, record

        if not enabled():
            return None
        answer = answer_fingerprint(submission)
        mistake = mistakes.describe(exercise.id, misconception, submission.get("code"))
        return record(exercise.id, exercise.lesson, result.status, answer, mistake)
    except Exception as err:  # progress must never break a learner's cell
        _note_once(f"progress not saved: {err}")
        return None


def _note_for_hints(exercise, verdict: dx.Diagnosis) -> None:
    """The next hint addresses the mistake this verdict diagnosed (if any)."""
    from course_helpers.checking.hints import note_check

    note_check(exercise.id, "" if verdict.passed else verdict.mistake, verdict.message)


_noted: set[str] = set()


def _note_once(text: str) -> None:
    """One line on stderr, once per process for each kind of trouble."""
    kind = text.split(":", 1)[0]
    if kind not in _noted:
        _noted.add(kind)
        print(f"note: {text}", file=sys.stderr)


# --------------------------------------------------------------------------- collect


# --------------------------------------------------------------------------- judge
