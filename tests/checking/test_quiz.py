"""quiz(id): a multiple-choice question as text, plus a menu and Check button in Jupyter."""

import pytest
import torch
from answer_cells import run_in_kernel

import course_helpers.checking.checker as checking
import course_helpers.lessons as exercises
from course_helpers.checking.quizzes import Quiz, quiz, quiz_widget
from course_helpers.errors import CourseError
from course_helpers.lessons.model import Exercise

HINTS = ("a nudge", "a stronger hint")

TEST_EXERCISES = {
    e.id: e
    for e in [
        Exercise(
            id="99.pick",
            title="Pick a shape",
            lesson="99_tests",
            kind="choice",
            build_reference=lambda: "b",
            options={"a": "(2, 3)", "b": "(3, 2)"},
            hints=HINTS,
            solution='check("99.pick", "b")',
        ),
        Exercise(
            id="99.free",
            title="Free prediction",
            lesson="99_tests",
            kind="choice",
            build_reference=lambda: (3, 2),
            hints=HINTS,
            solution="(3, 2)",
        ),
        Exercise(
            id="99.value",
            title="A value",
            lesson="99_tests",
            kind="value",
            build_reference=lambda: torch.zeros(2),
            hints=HINTS,
            solution="torch.zeros(2)",
        ),
    ]
}


@pytest.fixture(autouse=True)
def _test_exercises(monkeypatch):
    real_get = exercises.get
    monkeypatch.setattr(
        exercises, "get", lambda i: TEST_EXERCISES[i] if i in TEST_EXERCISES else real_get(i)
    )


def test_text_form_lists_the_options_and_the_check_line():
    shown = quiz("99.pick", "x has shape (2, 3). What is the shape of x.T?")
    assert isinstance(shown, Quiz)
    assert str(shown) == (
        "x has shape (2, 3). What is the shape of x.T?\n"
        "  a: (2, 3)\n"
        "  b: (3, 2)\n"
        'Answer in code: check("99.pick", "<letter>")'
    )
    assert str(quiz("99.pick")).startswith("Pick a shape\n")  # the title by default


def test_display_forms_are_deterministic_and_escaped():
    first = quiz("99.pick", "a < b?")._repr_mimebundle_()
    second = quiz("99.pick", "a < b?")._repr_mimebundle_()
    assert first == second
    assert set(first) == {"text/plain", "text/html"}
    assert "a &lt; b?" in first["text/html"]
    assert (
        "<code>check(&quot;99.pick&quot;, &quot;&lt;letter&gt;&quot;)</code>"
        in (first["text/html"])
    )


def test_bad_uses_are_course_errors_naming_the_fix():
    with pytest.raises(CourseError, match="free-form prediction.*check\\('99.free'"):
        quiz("99.free")
    with pytest.raises(CourseError, match="a value exercise"):
        quiz("99.value")
    with pytest.raises(CourseError, match="question should be a string"):
        quiz("99.pick", 3)
    with pytest.raises(CourseError):
        quiz("99.no_such_id")


def test_widget_has_a_fixed_text_form_and_checks_the_picked_option(monkeypatch):
    calls = []
    monkeypatch.setattr(checking, "check", lambda i, a: calls.append((i, a)) or "verdict")
    box = quiz_widget(quiz("99.pick"))
    assert repr(box) == "[quiz menu for 99.pick]"
    menu, button = box.children[0].children
    assert menu.value is None
    assert [label for label, _ in menu.options] == ["a: (2, 3)", "b: (3, 2)"]
    button.click()
    assert calls == []  # nothing picked yet
    menu.value = "b"
    button.click()
    assert calls == [("99.pick", "b")]


def test_in_a_kernel_the_text_comes_before_the_menu():
    nb = run_in_kernel(
        [
            "from course_helpers.checking.quizzes import quiz\n"
            'quiz("04.quiz_linear_layer", "What is the shape?")',
        ],
    )
    texts = [o["data"]["text/plain"] for o in nb.cells[0].outputs]
    assert texts[0].startswith("What is the shape?\n  a: ")
    assert texts[0].endswith('Answer in code: check("04.quiz_linear_layer", "<letter>")')
    assert texts[1:] == ["[quiz menu for 04.quiz_linear_layer]"]


def test_the_module_name_does_not_shadow_the_public_function():
    import course_helpers
    import course_helpers.checking.quizzes

    assert not hasattr(course_helpers, "quiz") or callable(course_helpers.quiz)
    assert course_helpers.checking.quizzes.quiz is quiz


def test_options_that_are_not_letters_get_a_neutral_placeholder(monkeypatch):
    numbered = Exercise(
        id="99.numbered",
        title="Numbered",
        lesson="99_tests",
        kind="choice",
        build_reference=lambda: 2,
        options={1: "one", 2: "two"},
        hints=HINTS,
        solution="2",
    )
    monkeypatch.setitem(TEST_EXERCISES, "99.numbered", numbered)
    assert str(quiz("99.numbered")).endswith('check("99.numbered", "<option>")')


def test_the_quiz_box_carries_a_note_for_when_its_kernel_is_gone():
    from course_helpers.widgets import STALE_NOTE

    box = quiz_widget(quiz("99.pick"))
    assert "course-widget" in box._dom_classes
    note = box.children[-1]
    assert "course-stale-note" in note._dom_classes and STALE_NOTE in note.value
