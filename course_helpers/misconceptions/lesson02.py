"""Typical wrong answers to lesson 02's exercises (dtype and device)."""

from __future__ import annotations

import torch

from course_helpers.misconceptions import Misconception

MISCONCEPTIONS = [
    Misconception(
        exercise_id="02.predict_promotion",
        label="the tensor's dtype wins",
        build_answer=lambda: torch.int32,
        message=(
            "the tensor's dtype does not simply win. A Python float changes the *kind* of the "
            "result (integer → floating point), because 2.5 cannot be stored in an integer."
        ),
    ),
    Misconception(
        exercise_id="02.predict_promotion",
        label="a Python float is float64",
        build_answer=lambda: torch.float64,
        message=(
            "Python's float is 64-bit, but a Python number only decides the kind of the result, "
            "not its precision. Which floating-point dtype does PyTorch use when nothing else "
            "says which one?"
        ),
    ),
]
