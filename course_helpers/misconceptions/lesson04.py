"""Typical wrong answers to lesson 04's exercises (broadcasting and matrix products)."""

from __future__ import annotations

from course_helpers.misconceptions import Misconception

MISCONCEPTIONS = [
    Misconception(
        exercise_id="04.broadcast_by_hand",
        label="size 1 does not stretch",
        build_answer=lambda: (8, 1, 6, 1),
        message=(
            "a dimension of size 1 stretches to the other tensor's size in that position: "
            "after broadcasting, a position holds 1 only when both sizes are 1."
        ),
    ),
    Misconception(
        exercise_id="04.broadcast_by_hand",
        label="the smaller size wins",
        build_answer=lambda: (1, 1, 1, 1),
        message=(
            "broadcasting never shrinks: where one size is 1 the result takes the other size, "
            "the larger one."
        ),
    ),
]
