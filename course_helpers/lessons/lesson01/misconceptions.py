"""Typical wrong answers to lesson 01's exercises (tensors)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _every_other_row(x):
    return x[::2]


def _odd_columns(x):
    return x[:, 1::2]


def _every_other_column_transposed(x):
    return x.t()[::2]


def _fahrenheit_inverted_factor(celsius):
    return celsius * 5 / 9 + 32


def _fahrenheit_added_first(celsius):
    return (celsius + 32) * 9 / 5


def _fahrenheit_floor_division(celsius):
    return celsius * 9 // 5 + 32


def _fahrenheit_in_place(celsius):
    return celsius.mul_(9 / 5).add_(32)


MISCONCEPTIONS = [
    # --- 01.arange_grid ---
    Misconception(
        exercise_id="01.arange_grid",
        label="arange counted from 1",
        build_answer=lambda: torch.arange(1, 13).reshape(3, 4),
        message=(
            "torch.arange(start, end) stops before end, and start defaults to 0: read the "
            "task again for the first and the last number, and let arange's defaults work "
            "for you."
        ),
    ),
    Misconception(
        exercise_id="01.arange_grid",
        label="rows and columns swapped",
        build_answer=lambda: torch.arange(12).reshape(4, 3),
        message=(
            "reshape's sizes are listed in the order of the shape: the first number is how "
            "many rows, the second how many numbers in each row."
        ),
    ),
    Misconception(
        exercise_id="01.arange_grid",
        label="float arange",
        build_answer=lambda: torch.arange(12.0).reshape(3, 4),
        message=(
            "Your numbers are floats. A float argument (arange(12.0)) or torch.Tensor(...), "
            "which always makes float32, gives floats; whole numbers 0, 1, 2, ... come out as "
            "integers when arange gets integer arguments."
        ),
    ),
    # --- 01.linspace_points ---
    Misconception(
        exercise_id="01.linspace_points",
        label="arange misses the end",
        build_answer=lambda: torch.arange(-1, 1, 0.5),
        message=(
            "torch.arange stops before its end value, so the right end is missing. When both "
            "ends must be included and you know how many points you want, use the function "
            "that takes a number of points instead of a step."
        ),
    ),
    Misconception(
        exercise_id="01.linspace_points",
        label="steps read as intervals",
        build_answer=lambda: torch.linspace(-1, 1, 4),
        message=(
            "The third argument of torch.linspace is the number of points, both ends "
            "included, not the number of gaps between them."
        ),
    ),
    Misconception(
        exercise_id="01.linspace_points",
        label="step = range / points",
        build_answer=lambda: torch.arange(-1, 1, 0.4),
        message=(
            "Dividing the range by the number of points gives one gap too many (so a step "
            "too small): n points have n - 1 gaps between them, and arange never reaches its "
            "end value anyway."
        ),
    ),
    # --- 01.every_other_column ---
    Misconception(
        exercise_id="01.every_other_column",
        label="sliced the rows",
        build_answer=lambda: _every_other_row,
        message=(
            "x[::2] slices the first dimension, the rows. A slice applies to one dimension "
            "per position: keep the rows whole with `:` and put the step in the second "
            "position."
        ),
    ),
    Misconception(
        exercise_id="01.every_other_column",
        label="started at column 1",
        build_answer=lambda: _odd_columns,
        message=(
            "Column numbers start at 0, so starting the slice at 1 keeps the second, fourth, "
            "... columns: the first column must be kept."
        ),
    ),
    Misconception(
        exercise_id="01.every_other_column",
        label="columns returned as rows",
        build_answer=lambda: _every_other_column_transposed,
        message=(
            "Transposing first picks the right columns but returns them as rows. Slice the "
            "column dimension directly so the result keeps x's layout."
        ),
    ),
    # --- 01.celsius_to_fahrenheit ---
    Misconception(
        exercise_id="01.celsius_to_fahrenheit",
        label="factor 5/9 instead of 9/5",
        build_answer=lambda: _fahrenheit_inverted_factor,
        message=(
            "5/9 is the factor of the other direction (Fahrenheit to Celsius). A Fahrenheit "
            "degree is smaller than a Celsius degree, so the Celsius value is multiplied by "
            "a factor greater than 1."
        ),
    ),
    Misconception(
        exercise_id="01.celsius_to_fahrenheit",
        label="32 added before scaling",
        build_answer=lambda: _fahrenheit_added_first,
        message=(
            "The brackets change the order: here 32 is added first and then scaled. In the "
            "formula, only the Celsius value is scaled; the offset is added afterwards."
        ),
    ),
    Misconception(
        exercise_id="01.celsius_to_fahrenheit",
        label="floor division",
        build_answer=lambda: _fahrenheit_floor_division,
        message=(
            "// is floor division: it rounds every result down to a whole number, so the "
            "fractional part of each temperature is lost. Use true division."
        ),
    ),
    # --- 01.numpy_grad_error ---
    Misconception(
        exercise_id="01.numpy_grad_error",
        label="a bad value",
        build_answer=lambda: ValueError,
        message=(
            "No value is wrong here: the numbers are fine. PyTorch refuses the conversion "
            "because the tensor takes part in autograd, and NumPy could not keep its history; "
            "it reports that with its general class for failures at run time."
        ),
    ),
    Misconception(
        exercise_id="01.numpy_grad_error",
        label="no .numpy method",
        build_answer=lambda: AttributeError,
        message=(
            "Every tensor has a .numpy() method, so the lookup succeeds; the call itself is "
            "refused because the tensor requires grad. Read the pitfall's error again."
        ),
    ),
    # --- 01.snapshot_copy ---
    Misconception(
        exercise_id="01.snapshot_copy",
        label="from_numpy shares memory",
        build_answer=lambda: torch.tensor([100.0, 2.0, 3.0], dtype=torch.float64),
        message=(
            "Your snapshot saw the later change to the array: torch.from_numpy (and "
            "torch.as_tensor) use the array's own memory instead of copying it. Make the "
            "tensor in a way that copies the numbers."
        ),
    ),
    Misconception(
        exercise_id="01.snapshot_copy",
        label="copied to float32",
        build_answer=lambda: torch.tensor([1.0, 2.0, 3.0]),
        message=(
            "The copy is right, but it changed the dtype: torch.Tensor(...) and .float() "
            "give float32, while the task wants the array's own float64. Pick a way of copying "
            "that keeps the dtype the array already has."
        ),
    ),
]

# wrong functions that raise, or that change their input in place
MISCONCEPTIONS += [
    Misconception(
        exercise_id="01.celsius_to_fahrenheit",
        label="converted in place",
        build_answer=lambda: _fahrenheit_in_place,
        message=(
            "mul_ and add_ (the methods ending in an underscore) write into the tensor you were "
            "given: the caller's Celsius values are overwritten with Fahrenheit ones. Compute a "
            "new tensor with * and + instead."
        ),
    ),
]


# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="01.snapshot_copy",
        label="numbers typed in by hand",
        build_answer=lambda: torch.tensor([1, 2, 3]),
        message=(
            "Typing the numbers in by hand gives up the link to data, and written without a "
            "decimal point they make an int64 tensor. Make the tensor from the array itself, "
            "in a way that copies it, so it keeps the array's float64."
        ),
    ),
]
