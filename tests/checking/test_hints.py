"""Tiered hints: hint(id) gives the next one; the solution only when asked."""

import html

import pytest
from answer_cells import run_in_kernel

import course_helpers
from course_helpers.checking.hints import hint, reset_hints, solution
from course_helpers.errors import CourseError
from course_helpers.lessons import catalog, get


@pytest.fixture(autouse=True)
def _fresh_counter():
    reset_hints()
    yield
    reset_hints()


def test_hints_come_in_order_numbered():
    hints = get("00.first_tensor").hints
    count = len(hints)
    for number, text in enumerate(hints, start=1):
        shown = hint("00.first_tensor")
        assert str(shown).startswith(f"Hint {number}/{count} for 00.first_tensor\n{text}")
    assert "That was the last hint" in str(shown)
    assert "hint('00.first_tensor', solution=True)" in str(shown)


def test_after_the_last_hint_it_repeats_and_points_to_the_solution():
    for _ in get("00.first_tensor").hints:
        hint("00.first_tensor")
    again = hint("00.first_tensor")
    assert "You have seen all the hints" in str(again)
    assert get("00.first_tensor").solution not in str(again)


def test_no_hint_gives_away_the_full_solution():
    for exercise in catalog():
        reset_hints(exercise.id)
        for _ in exercise.hints:
            assert exercise.solution.strip() not in str(hint(exercise.id)), exercise.id


def test_solution_only_when_asked():
    expected = get("00.first_tensor").solution.strip()
    assert expected in str(hint("00.first_tensor", solution=True))
    assert expected in str(solution("00.first_tensor"))


def test_counters_are_per_exercise_and_resettable():
    hint("00.first_tensor")
    assert str(hint("00.how_to_run")).startswith("Hint 1/")
    reset_hints("00.first_tensor")
    assert str(hint("00.first_tensor")).startswith("Hint 1/")


def test_display_forms():
    bundle = hint("00.first_tensor")._repr_mimebundle_()
    assert bundle["text/plain"].startswith("Hint 1/")
    assert bundle["text/html"].startswith('<div class="course-hint"')


def test_unknown_id_is_a_course_error():
    with pytest.raises(CourseError, match="00.first_tensor"):
        hint("00.first_tensr")


def test_public_name():
    assert course_helpers.hint is hint


def test_a_hint_called_mid_cell_is_shown_once_where_it_is_called():
    # a real kernel: hint() on a line that is not the cell's last, then the same object last
    nb = run_in_kernel(
        [
            "import os\nos.environ['COURSE_PROGRESS'] = 'off'\nfrom course_helpers import hint\n"
            "h = hint('00.first_tensor')\nprint('after the call')\nh",
            "hint('00.first_tensor')",
        ],
        timeout=60,
    )
    first = nb.cells[0].outputs
    texts = [o["data"]["text/plain"] for o in first if "data" in o]
    assert len(texts) == 1 and texts[0].startswith("Hint 1/")  # shown once, not twice
    assert first[0]["output_type"] == "display_data"  # before the print: where it was called
    second = [o["data"]["text/plain"] for o in nb.cells[1].outputs if "data" in o]
    assert len(second) == 1 and second[0].startswith("Hint 2/")


def test_the_hint_box_carries_a_note_for_when_its_kernel_is_gone():
    from course_helpers.checking.feedback import hint_widget
    from course_helpers.widgets import STALE_NOTE, WIDGET_CSS

    box = hint_widget("00.first_tensor")
    assert "course-widget" in box._dom_classes  # what the stylesheet's rules select
    note = box.children[-1]
    assert "course-stale-note" in note._dom_classes
    assert html.escape(STALE_NOTE) in note.value
    assert WIDGET_CSS in note.value  # restored from a saved notebook, it styles itself
    assert ".course-widget.jupyter-widgets-disconnected .course-stale-note" in WIDGET_CSS


def test_a_widget_that_cannot_be_displayed_leaves_a_line_of_text(monkeypatch, capsys):
    import IPython.display

    from course_helpers.widgets import display_widget

    def broken(*args, **kwargs):
        raise ImportError("cannot import name 'Widget'")

    monkeypatch.setattr(IPython.display, "display", broken)
    assert display_widget(object(), "Run hint('00.first_tensor') for a hint.") is False
    out = capsys.readouterr().out
    assert out.startswith("Run hint('00.first_tensor') for a hint. (buttons unavailable here:")
    assert "ImportError" in out


def test_in_a_kernel_the_stylesheet_comes_only_with_outputs_followed_by_a_widget():
    from course_helpers.widgets import widget_style

    nb = run_in_kernel(
        [
            "import torch\nfrom course_helpers import check, quiz",
            'check("00.first_tensor", torch.tensor([1, 2, 3]))',
            'check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))',
            'quiz("00.how_to_run")',
        ],
    )
    failed, passed, asked = (cell.outputs for cell in nb.cells[1:])
    assert failed[0]["data"]["text/html"].startswith(widget_style())
    assert failed[1]["data"]["text/plain"] == "[Hint button for 00.first_tensor]"
    assert len(passed) == 1 and widget_style() not in passed[0]["data"]["text/html"]
    assert asked[0]["data"]["text/html"].startswith(widget_style())
    assert asked[1]["data"]["text/plain"] == "[quiz menu for 00.how_to_run]"
    assert all("text/html" not in o["data"] for o in (failed[1], asked[1]))  # nbval: unchanged
