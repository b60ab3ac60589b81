"""Issue 23, item 11: helpers answer bad input with a clear message, never a traceback."""

import sys

import pytest

from course_helpers.errors import CourseError


def test_a_learner_function_calling_sys_exit_is_an_error_not_an_escape():
    # SystemExit from the learner's function escaped check() and stopped the cell
    from course_helpers.checking.submissions import call_and_record

    run = call_and_record(lambda x: sys.exit(3), (1,))
    assert run["error"]["type"] == "SystemExit"


def test_check_survives_sys_exit_in_a_function_answer():
    from course_helpers import check
    from course_helpers.lessons import catalog

    exercise = next(e for e in catalog() if e.kind == "function")

    def bails_out(*args):
        raise SystemExit("bye")

    result = check(exercise.id, bails_out)  # used to raise SystemExit out of check()
    assert result.status in ("failed", "error") and "SystemExit" in result.message, result


@pytest.mark.parametrize("bad", [3, 2.5, ["a"]])
def test_progress_with_a_bad_argument_says_what_it_takes(bad):
    from course_helpers.checking.progress import progress

    with pytest.raises(CourseError, match="progress"):
        progress(bad)
