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
            "torch.tensor reads the dtype off the Python numbers, the way Python tells 1 (an "
            "int) from 1.0 (a float). It matters beyond this check: only floating-point (and "
            "complex) tensors can require gradients (lesson 05)."
        ),
    ),
    Misconception(
        exercise_id="00.first_tensor",
        label="float64 asked for",
        build_answer=lambda: torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),
        message=(
            "float64 (also called double) is the 64-bit floating-point dtype. PyTorch's own "
            "default for floats is the 32-bit float32: leave out dtype, or name float32."
        ),
    ),
    Misconception(
        exercise_id="00.first_tensor",
        label="an extra pair of brackets",
        build_answer=lambda: torch.tensor([[1.0, 2.0, 3.0]]),
        message=(
            "Each pair of square brackets adds a dimension: [[...]] makes a table with one "
            "row. The task asks for a flat list of three numbers, so use one pair of brackets."
        ),
    ),
]
