"""Issue 23, item 9: honest answers of numpy or Enum types count in grading too."""

import enum
import io

import numpy as np
import torch

from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect, load_submission
from course_helpers.lessons import get


class Option(str, enum.Enum):
    B = "b"


def _through_the_log(submission):
    buffer = io.BytesIO()
    torch.save({"format": 1, "attempts": [("x", submission)]}, buffer)
    buffer.seek(0)
    return load_submission(buffer)["attempts"][0][1]


def test_numpy_and_enum_answers_survive_the_graders_safe_loading():
    # np.str_("b"), np.float64(12.0) and a str Enum passed check in the kernel, but the log
    # then failed weights_only loading and the whole notebook scored 0
    exercise = get("00.how_to_run")
    for answer in (np.str_("b"), Option.B):
        submission = _through_the_log(collect(exercise, answer))
        assert type(submission["answer"]) is str
        assert judge(exercise, submission).status == "passed", answer
    # issue 34: a NumPy number is named as one, its value kept as a plain Python float
    record = _through_the_log(collect(exercise, np.float64(12.0)))["answer"]
    assert record == {"_r": "numpy_scalar", "dtype": "float64", "value": 12.0}
    assert type(record["value"]) is float


def _frames(*attempts):
    """What a kernel's check() sends down the answer channel, attempt by attempt."""
    from course_helpers.checking.submissions import encode_frame

    return b"".join(encode_frame({"exercise_id": i, "submission": s}) for i, s in attempts)


def test_an_unreadable_attempt_costs_that_attempt_only():
    # one answer that weights_only loading refuses used to make the whole log unreadable
    from course_helpers.grading.grade import _judge_one, _read_attempts

    good = collect(get("00.how_to_run"), "b")
    odd = dict(collect(get("00.how_to_run"), "b"), answer=np.float32(1.0))  # not loadable
    attempts, _, problem = _read_attempts(_frames(("00.how_to_run", odd), ("00.how_to_run", good)))
    assert problem == ""
    first, last = attempts["00.how_to_run"]
    assert _judge_one(get("00.how_to_run"), first)[0] == "rejected"
    assert _judge_one(get("00.how_to_run"), last) == (
        "passed",
        judge(get("00.how_to_run"), good).message,
    )


def test_the_report_counts_attempts_as_the_learners_progress_does():
    # issue 28, item 8: a cell checked twice with the same answer is one attempt, in the
    # learner's progress and in the grader's report alike; a really different answer counts
    from course_helpers.grading.grade import _grade_exercise, _read_attempts

    def every_other_column(x):
        return x[:, ::1]

    def fixed(x):
        return x[:, ::2]

    exercise = get("01.every_other_column")
    answers = [every_other_column, every_other_column, fixed, fixed, every_other_column]
    log = [(exercise.id, collect(exercise, answer)) for answer in answers]
    attempts, _, _ = _read_attempts(_frames(*log))  # through the channel, as graded
    graded = _grade_exercise(exercise, exercise.id, attempts, first=False)
    assert (graded.attempts, graded.first_attempt, graded.status) == (3, "failed", "failed")
    first_two = {exercise.id: attempts[exercise.id][:4]}
    assert _grade_exercise(exercise, exercise.id, first_two, first=False).attempts == 2
