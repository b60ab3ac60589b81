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
    record = _through_the_log(collect(exercise, np.float64(12.0)))["answer"]
    assert type(record) is float and record == 12.0


def test_an_unreadable_attempt_costs_that_attempt_only(tmp_path, monkeypatch):
    # one answer that weights_only loading refuses used to make the whole log unreadable
    from course_helpers.checking import submissions
    from course_helpers.grading.grade import _judge_one, _read_attempts

    good = collect(get("00.how_to_run"), "b")
    odd = dict(collect(get("00.how_to_run"), "b"), answer=np.float32(1.0))  # not loadable
    monkeypatch.setattr(
        submissions, "_grader_log", [("00.how_to_run", odd), ("00.how_to_run", good)]
    )
    submissions.dump_for_grader(tmp_path)
    attempts, problem = _read_attempts(tmp_path)
    assert problem == ""
    first, last = attempts["00.how_to_run"]
    assert _judge_one(get("00.how_to_run"), first)[0] == "rejected"
    assert _judge_one(get("00.how_to_run"), last) == (
        "passed",
        judge(get("00.how_to_run"), good).message,
    )
