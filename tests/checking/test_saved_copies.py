"""Plain copies of what a widget showed (issue 28, item 1): the hints revealed under a verdict,
the replay's step, and the option a quiz's Check button checked with its verdict. The browser
side (reopen → autosave → reopen) is tests/course/test_browser_autosave.py."""

from __future__ import annotations

import torch

from course_helpers import replay_backward
from course_helpers.checking.feedback import with_saved_hints
from course_helpers.checking.hints import HintText
from course_helpers.checking.quizzes import quiz, quiz_widget
from course_helpers.widgets import SAVED_COPY_CSS


def test_revealed_hints_are_copied_under_the_verdict_with_the_rule_that_hides_them():
    verdict = {"text/plain": "○ Not attempted: 99.x", "text/html": "<div>verdict</div>"}
    assert with_saved_hints(verdict, []) == verdict
    hints = [HintText("Hint 1/2 for 99.x", "look at the shape"), HintText("Hint 2/2", "b")]
    copy = with_saved_hints(verdict, hints)
    assert copy["text/plain"].startswith(verdict["text/plain"])
    assert "Hint 1/2 for 99.x\nlook at the shape" in copy["text/plain"]
    html = copy["text/html"]
    assert html.startswith("<div>verdict</div>") and SAVED_COPY_CSS in html
    saved = html[html.index('<div class="course-saved-hints">') :]
    assert "look at the shape" in saved and "Hint 2/2" in saved


def test_the_replays_saved_copy_shows_the_step_reached_and_keeps_the_table_as_text():
    x = torch.tensor(2.0, requires_grad=True)
    replay = replay_backward((x * x).sin(), params={"x": x})
    copy = replay._saved_copy(2)
    assert copy["text/plain"] == replay.table()
    assert 'class="course-replay-saved"' in copy["text/html"]
    assert "Static copy of step 2." in copy["text/html"]
    assert f"step 2 of {len(replay)}" in copy["text/html"]
    assert SAVED_COPY_CSS in copy["text/html"]


class _Handle:
    """Stands for the display handle of the quiz's question output: records its updates."""

    def __init__(self):
        self.updates = []

    def update(self, bundle, raw=False):
        self.updates.append(bundle)


def test_a_checked_quiz_answer_and_its_verdict_are_copied_into_the_question_output():
    shown = quiz("04.quiz_linear_layer", "What is the shape?")
    question = shown._repr_mimebundle_()
    handle = _Handle()
    box = quiz_widget(shown, question=(handle, question))
    menu, button = box.children[0].children
    button.click()
    assert handle.updates == []  # nothing picked: nothing to keep
    menu.value = "a"
    button.click()
    menu.value = "b"
    button.click()
    assert len(handle.updates) == 2
    first, last = handle.updates
    assert first["text/plain"] == (
        f"{question['text/plain']}\n\nYour answer: a: (32, 10)\n"
        "✗ Not yet: 04.quiz_linear_layer (Shape of a linear layer's output)\n"
        "'a' is not the right option. W.mT has shape (10, 5), so the 10 features are summed "
        "away.\nRun hint('04.quiz_linear_layer') for a hint."
    )
    assert last["text/plain"].startswith(f"{question['text/plain']}\n\nYour answer: b: (32, 5)\n")
    assert "✓ Passed: 04.quiz_linear_layer" in last["text/plain"]
    html = last["text/html"]
    assert html.startswith(question["text/html"]) and SAVED_COPY_CSS in html
    saved = html[html.index('<div class="course-saved-quiz">') :]
    assert "Your answer: <code>b: (32, 5)</code>" in saved and "✓ Passed" in saved
    assert "✗ Not yet" not in html  # only the latest verdict is kept
