"""Typical wrong answers to lesson 06's exercises (gradient accumulation)."""

from __future__ import annotations

from course_helpers.misconceptions import Misconception

MISCONCEPTIONS = [
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="only the last backward counts",
        build_answer=lambda: 8.0,
        message=(
            "that is the gradient of the last backward alone. backward() adds into .grad; "
            "nothing in the loop clears it, so every iteration's gradient is still in there."
        ),
    ),
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="derivative of w**2 taken as w",
        build_answer=lambda: 6.0,
        message=(
            "you added up the iterations, but check the derivative itself: d(w**2)/dw is 2 * w, "
            "so each loss k * w**2 contributes 2 * k * w."
        ),
    ),
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="gradients averaged over the calls",
        build_answer=lambda: 4.0,
        message=(
            "backward() adds each call's gradient into .grad; it never averages them. "
            "Averaging happens only if your loss divides by the number of terms."
        ),
    ),
]
