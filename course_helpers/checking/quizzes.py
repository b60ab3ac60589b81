"""``quiz(exercise_id)``: ask a multiple-choice exercise, with a menu and a Check button.

The question and its options are always shown as text (text/plain and text/html, both
deterministic), ending with the ``check(...)`` line that answers it in code. In a Jupyter
kernel with ipywidgets a menu and a "Check" button follow; pressing Check runs ``check``
and shows its verdict (and the Hint button) under the menu, and copies the option checked and
its verdict into the question's own output, a plain output that survives a save without
widget state (hidden while the menu shows; see docs/learner-journey.md).

(The module is not called ``quiz``: a submodule of that name would shadow the public
function ``course_helpers.quiz`` once imported.)
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from course_helpers.checking.hints import BLOCK_STYLE
from course_helpers.errors import CourseError


@dataclass(frozen=True)
class Quiz:
    """A multiple-choice question ready to display; see :func:`quiz`."""

    exercise_id: str
    question: str
    options: tuple[tuple[str, str], ...]

    @property
    def check_line(self) -> str:
        letters = all(len(key) == 1 and key.isalpha() for key, _ in self.options)
        return f'check("{self.exercise_id}", "<{"letter" if letters else "option"}>")'

    def __str__(self) -> str:
        lines = [self.question]
        lines += [f"  {key}: {text}" for key, text in self.options]
        lines.append(f"Answer in code: {self.check_line}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        items = "".join(
            f"<li><code>{html.escape(key)}</code>: {html.escape(text)}</li>"
            for key, text in self.options
        )
        block = (
            f'<div class="course-quiz" style="{BLOCK_STYLE}">'
            f"<div>{html.escape(self.question)}</div>"
            f'<ul style="margin: 2px 0;">{items}</ul>'
            f'<div style="opacity: 0.75;">Answer in code: <code>{html.escape(self.check_line)}'
            "</code></div></div>"
        )
        return {"text/plain": str(self), "text/html": block}

    def _ipython_display_(self):
        from IPython.display import display

        from course_helpers.widgets import display_widget, widget_style, widgets_available

        offer = widgets_available()
        bundle = self._repr_mimebundle_()
        if offer:  # the stylesheet travels with the output that precedes the widget
            bundle["text/html"] = widget_style() + bundle["text/html"]
        handle = display(bundle, raw=True, display_id=True if offer else None)
        if offer:
            try:
                menu = quiz_widget(self, question=(handle, bundle))
            except Exception:  # widgets that do not work here: the text above is enough
                return
            display_widget(menu)


def quiz(exercise_id: str, question: str = "") -> Quiz:
    """Show the options of choice exercise ``exercise_id`` and, in Jupyter with ipywidgets,
    a menu with a "Check" button that checks the picked option.

    ``question``: the text to show above the options (default: the exercise's title).
    Without widgets, answer with the ``check("ID", "<letter>")`` line it prints.
    """
    from course_helpers.lessons import get

    if not isinstance(question, str):
        raise CourseError(
            f"quiz(): question should be a string, not {type(question).__name__}; "
            'pass the text to show, e.g. quiz("04.quiz_linear_layer", "What is the shape?").'
        )
    exercise = get(exercise_id)
    if exercise.kind != "choice" or not exercise.options:
        raise CourseError(
            f"quiz() needs a multiple-choice exercise with options, but {exercise.id} is "
            + ("a free-form prediction" if exercise.kind == "choice" else f"a {exercise.kind}")
            + f" exercise: answer it with check({exercise.id!r}, your_answer)."
        )
    options = tuple((str(key), str(text)) for key, text in exercise.options.items())
    text = question.strip() or exercise.title
    return Quiz(exercise.id, text, options)


def with_saved_answer(bundle: dict, shown: Quiz, key: str, result) -> dict:
    """The question ``bundle`` followed by the option ``key`` the learner checked and its
    verdict ``result``: a plain output that a notebook keeps even when JupyterLab saves no
    widget state (hidden while the quiz menu shows the verdict itself)."""
    from course_helpers.checking.feedback import result_bundle
    from course_helpers.widgets import saved_copy_style

    verdict = result_bundle(result)
    picked = f"{key}: {dict(shown.options)[key]}"
    return {
        "text/plain": f"{bundle['text/plain']}\n\nYour answer: {picked}\n{verdict['text/plain']}",
        "text/html": bundle["text/html"]
        + f'{saved_copy_style()}<div class="course-saved-quiz">'
        + f"<div>Your answer: <code>{html.escape(picked)}</code></div>"
        + f"{verdict['text/html']}</div>",
    }


def quiz_widget(shown: Quiz, question=None):
    """The menu, the Check button and the area where the verdict appears.

    Its text form is fixed (``[quiz menu for ID]``), so saved notebooks compare equal
    whatever was picked. ``question``: the (display handle, bundle) of the question above,
    which each checked option and its verdict are copied into.
    """
    import ipywidgets as widgets
    from IPython.display import display

    from course_helpers.checking.checker import check
    from course_helpers.widgets import stale_note

    exercise_id = shown.exercise_id

    class QuizBox(widgets.VBox):
        def __repr__(self) -> str:  # the text form saved in notebooks: short and fixed
            return f"[quiz menu for {exercise_id}]"

    choice = widgets.Dropdown(
        options=[(f"{key}: {text}", key) for key, text in shown.options],
        value=None,
        description="Answer",
    )
    button = widgets.Button(description="Check")
    verdict = widgets.Output()

    def on_click(_button):
        verdict.clear_output()
        with verdict:
            if choice.value is None:
                print("Pick an answer in the menu first.")
            else:
                result = check(exercise_id, choice.value)
                display(result)
                if question is not None and question[0] is not None:
                    saved = with_saved_answer(question[1], shown, choice.value, result)
                    question[0].update(saved, raw=True)

    button.on_click(on_click)
    box = QuizBox([widgets.HBox([choice, button]), verdict, stale_note()])
    box.add_class("course-widget")
    return box
