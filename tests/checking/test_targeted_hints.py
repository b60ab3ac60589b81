"""The first hint after a diagnosed mistake addresses that mistake (issue 12); the tiers
follow unchanged, and the solution still comes only when asked for."""

import pytest
import torch

from course_helpers import lessons
from course_helpers.checking.checker import check
from course_helpers.checking.hints import hint, next_hint, reset_hints
from course_helpers.lessons import get


@pytest.fixture(autouse=True)
def _fresh_counter():
    reset_hints()
    yield
    reset_hints()


def _entry(exercise_id, label):
    return next(m for m in lessons.for_exercise(exercise_id) if m.label == label)


def test_after_a_catalogued_mistake_the_first_hint_is_about_it():
    entry = _entry("03.permute_shape", "inverse permutation")
    check("03.permute_shape", entry.build_answer())
    first = next_hint("03.permute_shape")
    assert str(first).startswith("Hint for 03.permute_shape: about your last answer")
    assert entry.hint_text in str(first)
    assert "again for hint 1/" in str(first) and not first.is_last
    tiers = get("03.permute_shape").hints
    second = next_hint("03.permute_shape")
    assert str(second).startswith(f"Hint 1/{len(tiers)} for 03.permute_shape\n{tiers[0]}")


def test_without_a_diagnosed_mistake_the_tiers_come_as_before():
    check("03.permute_shape", (1, 2, 3, 4))  # wrong, but no catalogued mistake
    tiers = get("03.permute_shape").hints
    assert str(next_hint("03.permute_shape")).startswith(f"Hint 1/{len(tiers)}")


def test_a_right_answer_or_another_check_clears_the_pending_mistake():
    entry = _entry("03.permute_shape", "inverse permutation")
    check("03.permute_shape", entry.build_answer())
    check("03.permute_shape", (5, 3, 2, 4))
    assert str(next_hint("03.permute_shape")).startswith("Hint 1/")


def test_the_same_mistake_is_addressed_once_and_a_new_one_again():
    entry = _entry("03.permute_shape", "inverse permutation")
    check("03.permute_shape", entry.build_answer())
    assert "about your last answer" in str(next_hint("03.permute_shape"))
    check("03.permute_shape", entry.build_answer())  # the same mistake again
    assert str(next_hint("03.permute_shape")).startswith("Hint 1/")
    other = [m for m in lessons.for_exercise("03.permute_shape") if m is not entry][0]
    check("03.permute_shape", other.build_answer())
    shown = str(next_hint("03.permute_shape"))
    assert "about your last answer" in shown and other.hint_text in shown
    assert "again for hint 2/" in shown  # the tiers go on where they were


def test_a_forbidden_pattern_is_what_the_first_hint_addresses():
    def predict(weight, inputs):
        with torch.no_grad():
            return inputs @ weight.data

    result = check("07.predict_no_grad", predict)
    assert result.status == "failed"
    shown = str(next_hint("07.predict_no_grad"))
    assert "about your last answer" in shown and "`.data`" in shown


def test_the_solution_still_needs_solution_true():
    entry = _entry("03.permute_shape", "inverse permutation")
    check("03.permute_shape", entry.build_answer())
    exercise = get("03.permute_shape")
    for _ in range(len(exercise.hints) + 2):
        assert exercise.solution.strip() not in str(hint("03.permute_shape"))
    assert exercise.solution.strip() in str(hint("03.permute_shape", solution=True))


def test_a_demo_check_leaves_the_hints_alone():
    entry = _entry("03.permute_shape", "inverse permutation")
    check("03.permute_shape", entry.build_answer(), demo=True)
    assert str(next_hint("03.permute_shape")).startswith("Hint 1/")


def _predict_with_data(weight, inputs):
    with torch.no_grad():
        return inputs @ weight.data


def test_the_hint_button_under_a_verdict_does_not_repeat_it():
    """Issue 24 (3): the Hint button right under the feedback gives the next tier, not the
    feedback's own text again; hint(id) in a later cell still addresses the mistake. (A
    forbidden pattern's note is both the verdict's text and the mistake: since issue 34 a
    catalogued mistake has a hint of its own, which the verdict never shows.)"""
    from course_helpers.checking.feedback import hint_widget
    from course_helpers.checking.hints import _shown

    result = check("07.predict_no_grad", _predict_with_data)
    assert "`.data`" in result.message
    button = hint_widget("07.predict_no_grad", shown=result.message).children[0]
    button.click()
    assert _shown["07.predict_no_grad"] == 1  # the first click gave tier 1
    shown = next_hint("07.predict_no_grad", shown=result.message)
    assert str(shown).startswith("Hint 2/")


def test_hint_after_a_check_does_not_repeat_its_verdict():
    """Issue 24 (3): hint(id) right after a failed check gives something new: a targeted
    hint whose text the verdict already showed is skipped, the tiers come instead."""
    result = check("07.predict_no_grad", _predict_with_data)
    shown = str(hint("07.predict_no_grad"))
    assert shown.startswith("Hint 1/") and "`.data`" not in shown
    assert "`.data`" in result.message


def test_the_first_hint_after_a_catalogued_mistake_is_its_own_question():
    """Issue 34 (6): after "use .reshape(3, 4)" the first hint is about rows and columns,
    not tier 1's "Which function makes the numbers 0, 1, ..., 11?"; the Hint button under the
    verdict gives it too, since the verdict does not hold it."""
    from course_helpers.checking.feedback import hint_widget

    entry = _entry("01.arange_grid", "rows and columns swapped")
    result = check("01.arange_grid", torch.arange(12).reshape(4, 3))
    assert entry.message in result.message and entry.hint not in result.message
    first = hint("01.arange_grid")
    assert str(first).startswith("Hint for 01.arange_grid: about your last answer")
    assert entry.hint in str(first)
    assert get("01.arange_grid").hints[0] not in str(first)
    reset_hints()
    check("01.arange_grid", torch.arange(12).reshape(4, 3))
    clicked = []
    import IPython.display

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(IPython.display, "display", lambda obj, **_: clicked.append(str(obj)))
        hint_widget("01.arange_grid", shown=result.message).children[0].click()
    assert entry.hint in clicked[0]


def test_a_wrong_shape_is_what_the_first_hint_asks_about():
    """Issue 34 (6): a wrong shape that no catalogued mistake explains still gets a first
    hint about the shape, naming only the shapes the verdict saw."""
    result = check("01.arange_grid", torch.arange(12).reshape(2, 6))
    assert result.status == "failed" and "shape (2, 6)" in result.message
    first = str(hint("01.arange_grid"))
    assert "about your last answer" in first
    assert "(2, 6) where (3, 4) is expected" in first
    assert str(hint("01.arange_grid")).startswith("Hint 1/3")


def test_a_wrong_shape_inside_a_function_keeps_its_question():
    def every_other_column(x):
        return x[:, ::2].squeeze()

    check("01.every_other_column", every_other_column)
    first = str(hint("01.every_other_column"))
    assert "about your last answer" in first and "(2,) where (2, 1) is expected" in first


def test_the_hint_buttons_footer_says_click_again_and_hint_calls_say_run(monkeypatch):
    """A learner who clicks Hint is told to click again, not to run hint(...) (issue 28)."""
    import IPython.display

    from course_helpers.checking.feedback import hint_widget

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **_: shown.append(str(obj)))
    count = len(get("03.permute_shape").hints)
    box = hint_widget("03.permute_shape")
    button = box.children[0]
    for _ in range(count):
        button.click()
    assert len(shown) == count
    assert "Click Hint again for hint" not in shown[0]  # tier 1 of 3 has no footer
    assert all("Run hint(" not in text for text in shown)
    assert "in a code cell, run hint('03.permute_shape', solution=True)" in shown[-1]
    assert button.disabled
    reset_hints("03.permute_shape")
    entry = _entry("03.permute_shape", "inverse permutation")
    check("03.permute_shape", entry.build_answer())
    assert "Click Hint again for hint 1/" in str(next_hint("03.permute_shape", button=True))
    check("03.permute_shape", entry.build_answer())
    reset_hints("03.permute_shape")
    check("03.permute_shape", entry.build_answer())
    assert "Run hint('03.permute_shape') again" in str(next_hint("03.permute_shape"))
