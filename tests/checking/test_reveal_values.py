"""By-hand exercises (reveal_values=False): feedback says how far off, never the expected values."""

import dataclasses

import pytest
import torch

from course_helpers import check
from course_helpers.lessons import get

HIDDEN = ["05.hand_chain_rule", "05.central_difference", "06.chunk_weights"]

WRONG = {
    "05.hand_chain_rule": [
        (torch.tensor([-12.0, 6.5]), "factor of 2"),
        (torch.tensor([6.0, -3.25]), "sign"),
        (torch.tensor([-6.0, 2.25]), "1 of 2 values differ"),
        (torch.tensor([-6, 3]), "dtype"),
    ],
    "05.central_difference": [
        (torch.tensor(12.0, dtype=torch.float64), "smaller than expected"),
        (12.0, "smaller than expected"),
        (torch.tensor(13.0, dtype=torch.float64), "larger than expected"),
    ],
    "06.chunk_weights": [
        (torch.tensor([0.4, 0.4, 0.4]), "1 of 3 values differ"),
        (torch.tensor([4, 4, 2]), "factor of 10"),
        (torch.tensor([1 / 3, 1 / 3, 1 / 3]), "3 of 3 values differ"),
    ],
}


def _spellings(value: float) -> set[str]:
    """The ways a message could print ``value`` (as the diagnosis formats numbers)."""
    out = {f"{value:g}", repr(value), f"{value:.4f}".rstrip("0"), f"{value:.6f}"}
    if value == int(value):
        out |= {f"{int(value)}.0", f"{int(value)}."}
    return {s for s in out if s not in ("0.", "0", "-0.")}


def test_the_flag_is_set_on_the_by_hand_exercises():
    assert all(get(i).reveal_values is False for i in HIDDEN)
    assert get("05.cube_vjp").reveal_values is True  # the default elsewhere


@pytest.mark.parametrize(
    ("exercise_id", "answer", "says"),
    [(i, a, s) for i, cases in WRONG.items() for a, s in cases],
)
def test_wrong_answers_say_how_far_off_without_the_expected_values(exercise_id, answer, says):
    result = check(exercise_id, answer)
    assert result.status == "failed", result.message
    assert says in result.message
    assert "Expected" not in result.message
    expected = get(exercise_id).reference
    values = expected.double().reshape(-1).tolist() if torch.is_tensor(expected) else [expected]
    for value in values:
        for spelled in _spellings(float(value)):
            assert spelled not in result.message, (spelled, result.message)


@pytest.mark.parametrize("exercise_id", HIDDEN)
def test_the_reference_still_passes(exercise_id):
    assert check(exercise_id, get(exercise_id).reference).passed


def test_the_same_exercise_with_the_flag_off_shows_the_values():
    # the flag, not the exercise, hides the values: with reveal_values=True the excerpt is back
    from course_helpers.checking.judges import judge
    from course_helpers.checking.submissions import collect

    ex = dataclasses.replace(get("05.hand_chain_rule"), reveal_values=True)
    verdict = judge(ex, collect(ex, torch.tensor([-12.0, 6.5])))
    assert verdict.status == "failed"
    assert "-6" in verdict.message and "3.25" in verdict.message


def test_the_concealed_verdict_survives_judging_outside_the_kernel():
    from course_helpers.checking.judges import judge
    from course_helpers.checking.submissions import collect

    ex = get("06.chunk_weights")
    verdict = judge(ex, collect(ex, torch.tensor([0.5, 0.3, 0.2])))
    assert verdict.status == "failed"
    assert "0.4" not in verdict.message and "2 of 3 values differ" in verdict.message
