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


def _snapshot_sharing_memory():
    import numpy as np

    data = np.array([1.0, 2.0, 3.0])
    snapshot = torch.from_numpy(data)
    data[0] = 100.0  # the task's later change to the array
    return snapshot


def _snapshot_as_float32():
    import numpy as np

    return torch.Tensor(np.array([1.0, 2.0, 3.0]))


def _fahrenheit_in_place(celsius):
    return celsius.mul_(9 / 5).add_(32)


MISCONCEPTIONS = [
    # --- 01.arange_grid ---
    Misconception(
        exercise_id="01.arange_grid",
        label="arange counted from 1",
        build_answer=lambda: torch.arange(1, 13).reshape(3, 4),
        message=(
            "Your grid runs from 1 to 12, one more than the expected grid everywhere: the task's "
            "numbers start at 0 and end at 11."
        ),
        hint="Which is the first number of the grid, and which the last?",
        cause=(
            "torch.arange(start, end) stops before end, and start defaults to 0: read the task "
            "again for the first and the last number, and let arange's defaults work for you."
        ),
        evidence=("call:arange",),
    ),
    Misconception(
        exercise_id="01.arange_grid",
        label="rows and columns swapped",
        build_answer=lambda: torch.arange(12).reshape(4, 3),
        message=(
            "Your grid has 4 rows of 3 numbers, the task's has 3 rows of 4: a shape lists the "
            "number of rows first, then how many numbers each row holds."
        ),
        hint="In a shape (a, b), which number counts the rows?",
        cause=(
            "reshape's sizes are listed in the order of the shape: the first number is how many "
            "rows, the second how many numbers in each row."
        ),
        evidence=("call:reshape|view",),
    ),
    Misconception(
        exercise_id="01.arange_grid",
        label="float arange",
        build_answer=lambda: torch.arange(12.0).reshape(3, 4),
        message=(
            "Your numbers are floats (float32), though they are the right whole numbers: the task "
            "asks for an integer tensor. A float anywhere in how the numbers are made gives "
            "floats; whole numbers come out as integers only when everything that makes them is an "
            "integer."
        ),
        hint="Which of the arguments that made your numbers is a float, or makes floats?",
        cause={
            "call:arange": (
                "a float argument (arange(12.0)) gives floats; whole numbers 0, 1, 2, ... come "
                "out as integers when arange gets integer arguments."
            ),
            "call:Tensor": (
                "torch.Tensor(list) makes the default float type (float32 unless you changed "
                "it) from any numbers; torch.tensor(list), lower case, keeps whole numbers as "
                "int64."
            ),
        },
        evidence=("call:arange|Tensor",),
    ),
    # --- 01.linspace_points ---
    Misconception(
        exercise_id="01.linspace_points",
        label="arange misses the end",
        build_answer=lambda: torch.arange(-1, 1, 0.5),
        message=(
            "Your points stop before the right end: 1 is missing. When both ends must be included "
            "and you know how many points you want, use the function that takes a number of points "
            "instead of a step."
        ),
        hint="Which function takes the number of points you want, both ends included?",
        cause=(
            "torch.arange stops before its end value, so the right end is missing; torch.linspace "
            "takes a number of points and includes both ends."
        ),
        evidence=("call:arange",),
    ),
    Misconception(
        exercise_id="01.linspace_points",
        label="steps read as intervals",
        build_answer=lambda: torch.linspace(-1, 1, 4),
        message=(
            "You have 4 points from -1 to 1, one too few: 5 points include both ends and have 4 "
            "gaps between them."
        ),
        hint="How many points does the task ask for, counting both ends?",
        cause=(
            "The third argument of torch.linspace is the number of points, both ends included, not "
            "the number of gaps between them."
        ),
        evidence=("call:linspace",),
    ),
    Misconception(
        exercise_id="01.linspace_points",
        label="step = range / points",
        build_answer=lambda: torch.arange(-1, 1, 0.4),
        message=(
            "Your points are 0.4 apart, so they never reach 1: the range divided by the number of "
            "points gives one gap too many (a step too small). n points have n - 1 gaps between "
            "them."
        ),
        hint="Five points from -1 to 1: how many gaps lie between them, and how wide is each?",
        cause="arange never reaches its end value either: count the points, not the step.",
        evidence=("call:arange",),
    ),
    # --- 01.every_other_column ---
    Misconception(
        exercise_id="01.every_other_column",
        label="sliced the rows",
        build_answer=lambda: _every_other_row,
        message=(
            "Your function kept every other row, with all its columns: the step landed in the "
            "first dimension. A slice applies to one dimension per position: keep the rows whole "
            "and put the step in the second position."
        ),
        hint="Which position inside the square brackets stands for the columns?",
    ),
    Misconception(
        exercise_id="01.every_other_column",
        label="started at column 1",
        build_answer=lambda: _odd_columns,
        message=(
            "Your function kept the second, fourth, ... columns: column numbers start at 0, and "
            "the first column must be kept."
        ),
        hint="What is the number of the first column?",
    ),
    Misconception(
        exercise_id="01.every_other_column",
        label="columns returned as rows",
        build_answer=lambda: _every_other_column_transposed,
        message=(
            "Your function picks the right columns but returns them as rows (the transpose of the "
            "expected result). Take the columns directly, so the result keeps x's layout."
        ),
        hint="Can you pick the columns without swapping the dimensions first?",
        cause=(
            "Transposing first picks the right columns but returns them as rows. Slice the column "
            "dimension directly so the result keeps x's layout."
        ),
        evidence=("call:t|transpose",),
    ),
    # --- 01.celsius_to_fahrenheit ---
    Misconception(
        exercise_id="01.celsius_to_fahrenheit",
        label="factor 5/9 instead of 9/5",
        build_answer=lambda: _fahrenheit_inverted_factor,
        message=(
            "Your temperatures are scaled by 5/9, the factor of the other direction (Fahrenheit to "
            "Celsius). A Fahrenheit degree is smaller than a Celsius degree, so the Celsius value "
            "is multiplied by a factor greater than 1."
        ),
        hint=(
            "Is a Fahrenheit degree larger or smaller than a Celsius degree, and so is the factor "
            "above or below 1?"
        ),
    ),
    Misconception(
        exercise_id="01.celsius_to_fahrenheit",
        label="32 added before scaling",
        build_answer=lambda: _fahrenheit_added_first,
        message=(
            "Your temperatures are (C + 32) × 9/5: the offset was scaled too. In the formula, only "
            "the Celsius value is scaled; 32 is added afterwards."
        ),
        hint="In F = C × 9/5 + 32, which happens first: the scaling or the addition?",
    ),
    Misconception(
        exercise_id="01.celsius_to_fahrenheit",
        label="floor division",
        build_answer=lambda: _fahrenheit_floor_division,
        message=(
            "Your temperatures are all whole numbers, each rounded down: the fractional part of "
            "every temperature is lost. Use true division."
        ),
        hint="Which kind of division rounds every result down to a whole number?",
        cause=(
            "// is floor division: it rounds every result down to a whole number. / is true "
            "division."
        ),
        evidence=("op:floordiv",),
    ),
    # --- 01.numpy_grad_error ---
    Misconception(
        exercise_id="01.numpy_grad_error",
        label="a bad value",
        build_answer=lambda: ValueError,
        message=(
            "No value is wrong here: the numbers are fine. PyTorch refuses the conversion because "
            "the tensor takes part in autograd, and NumPy could not keep its history; it reports "
            "that with its general class for failures at run time."
        ),
        hint=(
            "Is anything wrong with the numbers themselves, or with what the tensor takes part in?"
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
        hint="Does the lookup of the method fail, or the call that follows it?",
    ),
    # --- 01.snapshot_copy ---
    Misconception(
        exercise_id="01.snapshot_copy",
        label="from_numpy shares memory",
        build_answer=_snapshot_sharing_memory,
        message=(
            "Your snapshot saw the later change to the array (it holds 100.0): it uses the array's "
            "own memory instead of a copy of the numbers. Make the tensor in a way that copies "
            "them."
        ),
        hint=(
            "Which ways of making a tensor from an array copy the numbers, and which share the "
            "array's memory?"
        ),
        cause=(
            "torch.from_numpy (and torch.as_tensor) use the array's own memory instead of copying "
            "it; torch.tensor(array) copies."
        ),
        evidence=("call:from_numpy|as_tensor",),
    ),
    Misconception(
        exercise_id="01.snapshot_copy",
        label="copied to float32",
        build_answer=_snapshot_as_float32,
        message=(
            "The copy is right, but its dtype is float32, while the task wants the array's own "
            "float64. Pick a way of copying that keeps the dtype the array already has."
        ),
        hint="Which way of copying an array into a tensor keeps the array's dtype?",
        cause=(
            "torch.Tensor(...) and .float() give float32 whatever the array holds; "
            "torch.tensor(array) keeps its float64."
        ),
        evidence=("call:Tensor|float",),
    ),
]

# wrong functions that raise, or that change their input in place
MISCONCEPTIONS += [
    Misconception(
        exercise_id="01.celsius_to_fahrenheit",
        label="converted in place",
        build_answer=lambda: _fahrenheit_in_place,
        message=(
            "Your function overwrote the caller's Celsius values with Fahrenheit ones: it writes "
            "into the tensor it was given. Compute a new tensor instead."
        ),
        hint="Does your function leave the tensor it was given as it was?",
        cause=(
            "mul_ and add_ (the methods ending in an underscore) write into the tensor you were "
            "given. Compute a new tensor with * and + instead."
        ),
        evidence=("call:mul_|add_",),
    ),
]


# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="01.snapshot_copy",
        label="numbers typed in by hand",
        build_answer=lambda: torch.tensor([1, 2, 3]),
        message=(
            "Your snapshot holds whole numbers (int64), while the array holds float64 numbers: "
            "make the tensor from the array itself, in a way that copies it, so it keeps the "
            "array's float64."
        ),
        hint="Does your snapshot come from the array, and does it keep the array's dtype?",
    ),
]
