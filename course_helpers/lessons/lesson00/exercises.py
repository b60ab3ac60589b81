"""Lesson 00 (start here): two tiny exercises that show how checking works."""

from __future__ import annotations

from course_helpers.lessons.model import Exercise


def _first_tensor():
    import torch

    return torch.tensor([1.0, 2.0, 3.0])


def _how_to_run():
    return "b"


EXERCISES = [
    Exercise(
        id="00.first_tensor",
        title="Your first tensor",
        lesson="00_start_here",
        kind="value",
        build_reference=_first_tensor,
        hints=(
            "torch.tensor(...) turns a Python list into a tensor.",
            "Write the numbers as floats (1.0, not 1) so the tensor's dtype is float32.",
            "answer = torch.tensor([1.0, 2.0, ...]): finish the list.",
        ),
        solution="answer = torch.tensor([1.0, 2.0, 3.0])",
    ),
    Exercise(
        id="00.how_to_run",
        title="Running a cell",
        lesson="00_start_here",
        kind="choice",
        build_reference=_how_to_run,
        options={"a": "Enter", "b": "Shift+Enter", "c": "Ctrl+S", "d": "Tab"},
        explanations={
            "a": "Enter starts a new line inside the cell; it does not run it.",
            "b": "Shift+Enter runs the cell and moves to the next one.",
            "c": "Ctrl+S saves the notebook; it runs nothing.",
            "d": "Tab completes a name or indents; it runs nothing.",
        },
        hints=(
            "It is a key combination, not a single key.",
            "Plain Enter only adds a new line inside the cell; hold one more key.",
            "Hold the key you use for capital letters, and press Enter while you hold it.",
        ),
        solution='answer = "b"  # Shift+Enter',
    ),
]
