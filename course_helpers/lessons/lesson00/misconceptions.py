"""Typical wrong answers to lesson 00's exercises (start here)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception

MISCONCEPTIONS = [
    # --- 00.first_tensor ---
    Misconception(
        exercise_id="00.first_tensor",
        label="whole numbers give int64",
        build_answer=lambda: torch.tensor([1, 2, 3]),
        message=(
            "Your tensor holds whole numbers (int64): written without a decimal point, 1, 2 and 3 "
            "are Python ints, and a tensor made from ints holds integers. It matters beyond this "
            "check: only floating-point (and complex) tensors can require gradients (lesson 05)."
        ),
        hint="How do you write the number one so that Python reads it as a float, not an int?",
        cause=(
            "torch.tensor reads the dtype off the Python numbers, the way Python tells 1 (an int) "
            "from 1.0 (a float): write the numbers with a decimal point."
        ),
        evidence=("call:tensor",),
    ),
    Misconception(
        exercise_id="00.first_tensor",
        label="float64 asked for",
        build_answer=lambda: torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),
        message=(
            "Your tensor is float64 (also called double), the 64-bit floating-point dtype. "
            "PyTorch's own default for floats is the 32-bit float32, and that is what the task "
            "asks for."
        ),
        hint="Which floating-point dtype does PyTorch use when you name none?",
        cause="dtype=torch.float64 asks for 64 bits: leave out dtype, or name float32.",
        evidence=("kw:dtype",),
    ),
    Misconception(
        exercise_id="00.first_tensor",
        label="an extra pair of brackets",
        build_answer=lambda: torch.tensor([[1.0, 2.0, 3.0]]),
        message=(
            "Your tensor is a table with one row (shape (1, 3)): each pair of square brackets adds "
            "a dimension. The task asks for a flat list of three numbers, so use one pair of "
            "brackets."
        ),
        hint=(
            "How many dimensions does a flat list of three numbers have, and how many pairs of "
            "brackets does that take?"
        ),
    ),
]
