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


def _recursive():
    answer = []
    answer.append(answer)
    return answer


def _nested():
    answer = [1.0]
    for _ in range(3000):
        answer = [answer]
    return answer


def _quantized():
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.quantize_per_tensor(torch.tensor([1.0, 2.0, 3.0]), 0.1, 0, torch.qint8)


def _expanded():
    import torch

    return torch.tensor(1.0).expand(2**25)  # 4 bytes of storage, 128 MiB as a copy


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_recursive, "contains itself"),
        (_nested, "nested more than"),
        (_quantized, "dequantize()"),
        (_expanded, "expand() or broadcasting"),
    ],
)
def test_answers_check_cannot_record_get_a_clear_message(make, says):
    # they gave "The checker itself failed ... a bug in the course" (RecursionError,
    # RuntimeError), or copied a stride-0 view into a huge tensor
    from course_helpers import check

    result = check("00.first_tensor", make())
    assert result.status == "error"
    assert says in result.message and "bug in the course" not in result.message
