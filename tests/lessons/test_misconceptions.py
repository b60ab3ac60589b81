"""The misconception catalogue: every entry is a wrong answer that gets its own explanation."""

import pytest

from course_helpers import lessons
from course_helpers.checking import misconceptions
from course_helpers.checking.checker import check
from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.lessons import catalog, get
from course_helpers.lessons.model import Misconception

ENTRIES = lessons.catalogue()
LABELS = [f"{m.exercise_id}:{m.label}" for m in ENTRIES]


def test_the_catalogue_has_entries_for_known_exercises():
    ids = {e.id for e in catalog()}
    assert ENTRIES
    assert [m.exercise_id for m in ENTRIES if m.exercise_id not in ids] == []


def _expected_status(entry) -> str:
    """ "error" for a wrong function that raises on some test input (its own code raised),
    "failed" for every other wrong answer."""
    exercise = get(entry.exercise_id)
    if exercise.kind != "function":
        return "failed"
    runs = collect(exercise, entry.build_answer())["answer"]["runs"]
    reference = collect(exercise, exercise.reference)["answer"]["runs"]
    raises = any(r["error"] and not w["error"] for r, w in zip(runs, reference, strict=True))
    return "error" if raises else "failed"


@pytest.mark.parametrize("entry", ENTRIES, ids=LABELS)
def test_each_misconception_fails_and_is_explained(entry):
    result = check(entry.exercise_id, entry.build_answer())
    assert result.status == _expected_status(entry)
    assert entry.message in result.message


@pytest.mark.parametrize("entry", ENTRIES, ids=LABELS)
def test_the_grader_gives_the_same_explanation(entry):
    exercise = get(entry.exercise_id)
    verdict = judge(exercise, collect(exercise, entry.build_answer()))
    assert verdict.status == _expected_status(entry)
    assert entry.message in verdict.message
    assert verdict.mistake == entry.hint_text  # what the next hint addresses


def _functions(kind: str) -> list:
    """Entries whose wrong function raises ("raises") or changes its input ("mutates")."""
    found = []
    for entry in ENTRIES:
        exercise = get(entry.exercise_id)
        if exercise.kind != "function":
            continue
        runs = collect(exercise, entry.build_answer())["answer"]["runs"]
        if kind == "raises" and any(r["error"] for r in runs):
            found.append(entry)
        if kind == "mutates" and any(any(r["mutated"]) for r in runs):
            found.append(entry)
    return found


def test_the_catalogue_has_raising_and_mutating_functions():
    raising, mutating = _functions("raises"), _functions("mutates")
    assert len(raising) >= 3 and len(mutating) >= 3
    assert len({m.exercise_id for m in raising + mutating}) >= 6


def test_a_function_raising_another_error_is_not_that_misconception():
    def raises_type_error(counts):
        raise TypeError("not the catalogued mistake")

    result = check("02.mean_of_counts", raises_type_error)
    assert result.status == "error" and "TypeError" in result.message
    assert not any(m.message in result.message for m in ENTRIES)


def test_a_function_changing_its_input_differently_is_not_that_misconception():
    def centred_then_zeroed(x):
        out = x - x.mean(dim=1, keepdim=True)
        x.zero_()  # changes the input, but not the way `x -= ...` does
        return out

    result = check("04.center_rows", centred_then_zeroed)
    assert result.status == "failed" and "in place" in result.message
    assert not any(m.message in result.message for m in ENTRIES)
    entry = next(m for m in ENTRIES if m.label == "-= on the input")
    assert entry.message in check("04.center_rows", entry.build_answer()).message


# free-form predictions: the answer is a short value that a message could give away
PREDICTIONS = [
    m for m in ENTRIES if get(m.exercise_id).kind == "choice" and get(m.exercise_id).options is None
]


@pytest.mark.parametrize(
    "entry", PREDICTIONS, ids=[f"{m.exercise_id}:{m.label}" for m in PREDICTIONS]
)
def test_an_explanation_never_gives_the_answer_away(entry):
    exercise = get(entry.exercise_id)
    shown = str(exercise.reference).removeprefix("torch.")
    assert shown not in entry.message


def test_entries_of_one_exercise_are_different_answers():
    for exercise_id in {m.exercise_id for m in ENTRIES}:
        entries = lessons.for_exercise(exercise_id)
        exercise = get(exercise_id)
        for entry in entries:
            matched = misconceptions.match(
                exercise, collect(exercise, entry.build_answer())["answer"], _judges()
            )
            assert matched is entry, f"{entry.label!r} is shadowed by {matched.label!r}"


def test_an_uncatalogued_wrong_prediction_keeps_the_generic_nudge():
    result = check("03.permute_shape", (1, 2, 3, 4))
    assert result.status == "failed"
    assert "work it out again step by step" in result.message
    assert not any(m.message in result.message for m in ENTRIES)


def test_a_broken_entry_never_breaks_a_check(monkeypatch):
    def broken():
        raise RuntimeError("bug in the catalogue")

    bad = Misconception("03.permute_shape", "broken", broken, "never shown")
    real = lessons.catalogue()
    monkeypatch.setattr(lessons, "catalogue", lambda: (bad, *real))
    result = check("03.permute_shape", (4, 3, 5, 2))
    assert result.status == "failed"
    assert "inverse permutation" in result.message
    assert "never shown" not in result.message


def test_a_right_answer_is_never_matched():
    for entry in ENTRIES:
        exercise = get(entry.exercise_id)
        right = collect(exercise, exercise.reference)["answer"]
        assert misconceptions.match(exercise, right, _judges()) is None, entry.label


def _judges():
    from course_helpers.checking.judges import JUDGES

    return JUDGES


# Exercises whose kind cannot have three different wrong answers (issue 12: "at least 3 per
# exercise where the kind allows"). Each needs its reason; a new exercise is never exempt.
FEWER_THAN_THREE_ALLOWED = {
    # a bool prediction: True is the only wrong answer there is
    "03.fancy_index_shares": "bool prediction",
    # the answer is what the two ranks saved and loaded; the other typical mistakes (a rank
    # that reads before rank 0 finished writing, a rank that never waits) end the run with
    # an error or a race instead of returning a value that could be catalogued
    "13.rank0_checkpoint": "other mistakes fail the run instead of returning a value",
}


def _catalogued_wrong_answers(exercise) -> int:
    """How many typical wrong answers an exercise has catalogued: its misconception entries,
    plus, for a multiple-choice exercise, the explanations of its wrong options (at most
    every wrong option) and, for an error exercise, the explanations of wrong classes."""
    entries = len(lessons.for_exercise(exercise.id))
    reference = exercise.reference
    if exercise.kind == "choice" and exercise.options is not None:
        wrong = [k for k in exercise.explanations if str(k) != str(reference)]
        return min(entries + len(wrong), len(exercise.options) - 1)
    if exercise.kind == "error":
        right = "None" if reference is None else reference.__name__
        return entries + len([k for k in exercise.explanations if k != right])
    return entries


def _wanted(exercise) -> int:
    """3, or every wrong option of a multiple-choice exercise with fewer than 4 options."""
    if exercise.kind == "choice" and exercise.options is not None:
        return min(3, len(exercise.options) - 1)
    return 3


def test_every_exercise_has_three_typical_wrong_answers():
    short = {
        e.id: _catalogued_wrong_answers(e)
        for e in catalog()
        if _catalogued_wrong_answers(e) < _wanted(e) and e.id not in FEWER_THAN_THREE_ALLOWED
    }
    assert short == {}, "catalogue at least 3 typical wrong answers for each of these"


def test_the_allow_list_holds_only_exercises_that_need_it():
    for exercise_id in FEWER_THAN_THREE_ALLOWED:
        exercise = get(exercise_id)  # a removed exercise leaves the list too
        assert _catalogued_wrong_answers(exercise) < _wanted(exercise), exercise_id
