"""Typical wrong answers to lesson 03's exercises (shapes and views)."""

from __future__ import annotations

from course_helpers.misconceptions import Misconception

MISCONCEPTIONS = [
    Misconception(
        exercise_id="03.permute_shape",
        label="inverse permutation",
        build_answer=lambda: (4, 3, 5, 2),
        message=(
            "that is the inverse permutation: you sent old dimension i to position dims[i]. "
            "permute reads the other way round: position i of the result takes old dimension "
            "dims[i]."
        ),
    ),
    Misconception(
        exercise_id="03.permute_shape",
        label="permute leaves the shape alone",
        build_answer=lambda: (2, 3, 4, 5),
        message=(
            "permute does reorder the shape: it moves no data in memory, but the sizes (and "
            "the strides) are listed in the new order."
        ),
    ),
    Misconception(
        exercise_id="03.permute_shape",
        label="arguments read as sizes",
        build_answer=lambda: (3, 1, 0, 2),
        message=(
            "the arguments of permute are dimension numbers, not sizes: look up the size of "
            "each named dimension in x's shape."
        ),
    ),
    Misconception(
        exercise_id="03.permute_stride",
        label="strides before the permute",
        build_answer=lambda: (60, 20, 5, 1),
        message=(
            "those are x's own strides, before the permute. permute moves each stride together "
            "with its size, so the result lists them in the new order."
        ),
    ),
    Misconception(
        exercise_id="03.permute_stride",
        label="contiguous strides of the new shape",
        build_answer=lambda: (24, 8, 4, 1),
        message=(
            "those would be the strides of a fresh contiguous tensor of the new shape. permute "
            "copies nothing: each dimension keeps the stride it had in x, only their order "
            "changes."
        ),
    ),
    Misconception(
        exercise_id="03.permute_stride",
        label="inverse permutation",
        build_answer=lambda: (5, 20, 1, 60),
        message=(
            "that is the inverse permutation: you sent old dimension i to position dims[i]. "
            "Position i of the result takes old dimension dims[i], with its stride."
        ),
    ),
]
