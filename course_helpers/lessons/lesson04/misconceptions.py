"""Typical wrong answers to lesson 04's exercises (broadcasting and matrix products)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _center_by_column_means(x):
    return x - x.mean(dim=0)


def _center_by_global_mean(x):
    return x - x.mean()


def _mse_unchanged(prediction, target):
    return ((prediction - target) ** 2).mean()


def _mse_summed(prediction, target):
    return ((prediction.squeeze(1) - target) ** 2).sum()


def _pairwise_cdist(a, b):
    return torch.cdist(a, b)


def _pairwise_summed_over_points(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=1)


def _pairwise_swapped(a, b):
    return ((a[None, :, :] - b[:, None, :]) ** 2).sum(dim=-1)


def _gram_wrong_order(x):
    return x.mT @ x


def _gram_diagonal_only(x):
    return (x * x).sum(dim=-1)


_MORE = [
    # --- 04.times_table ---
    Misconception(
        exercise_id="04.times_table",
        label="no column and row: element-wise",
        build_answer=lambda: torch.arange(1, 6) * torch.arange(1, 6),
        message=(
            "Your table is a single row of 5 numbers, the squares: two tensors of the same shape "
            "(5,) are combined element by element. Broadcasting builds a table when one operand is "
            "a column and the other a row."
        ),
        hint="Which shapes must the two operands have so that every number meets every other?",
    ),
    Misconception(
        exercise_id="04.times_table",
        label="numbers from 0",
        build_answer=lambda: torch.arange(5)[:, None] * torch.arange(5)[None, :],
        message=(
            "Your table's first row and first column are all zeros: its numbers start at 0. The "
            "table starts at 1 × 1."
        ),
        hint="Which is the first number of each factor, and which the last?",
        cause="arange(5) starts at 0: give arange a start as well as an end.",
        evidence=("call:arange",),
    ),
    Misconception(
        exercise_id="04.times_table",
        label="@ of two vectors",
        build_answer=lambda: torch.arange(1, 6) @ torch.arange(1, 6),
        message=(
            "Your answer is a single number: the dot product of the two vectors (the sum of the "
            "squares). The table comes from element-wise products between a column and a row, with "
            "broadcasting."
        ),
        hint="Which operation keeps every product separate instead of adding them up?",
        cause="@ of two 1-D tensors is their dot product, one number.",
        evidence=("op:matmul",),
    ),
    # --- 04.center_rows ---
    Misconception(
        exercise_id="04.center_rows",
        label="column means (dim=0)",
        build_answer=lambda: _center_by_column_means,
        message=(
            "Each column was shifted by its own mean, so the columns' means are 0 and the rows' "
            "are not. Each row needs its own mean."
        ),
        hint="Which dimension must the mean reduce away to give one mean per row?",
        cause=(
            "dim names the dimension that is reduced away: dim=0 averages down the columns, giving "
            "one mean per column; a mean per row reduces the columns (dim=1)."
        ),
        evidence=("call:mean",),
    ),
    Misconception(
        exercise_id="04.center_rows",
        label="one global mean",
        build_answer=lambda: _center_by_global_mean,
        message=(
            "Every row was shifted by one common number, the mean of the whole matrix, so the "
            "rows' own means are not 0. Each row needs its own mean."
        ),
        hint="How many means does the task subtract: one, or one per row?",
        cause="mean() with no dim averages the whole matrix.",
        evidence=("call:mean()",),
    ),
    # --- 04.fix_mse ---
    Misconception(
        exercise_id="04.fix_mse",
        label="shapes still broadcast to (N, N)",
        build_answer=lambda: _mse_unchanged,
        message=(
            "Your loss is the loss's old, too large value: prediction (N, 1) minus target (N,) "
            "still broadcasts to an (N, N) table of every prediction against every target. Make "
            "the two shapes equal before subtracting."
        ),
        hint="What is the shape of the difference when one operand is (N, 1) and the other (N,)?",
    ),
    Misconception(
        exercise_id="04.fix_mse",
        label="sum instead of mean",
        build_answer=lambda: _mse_summed,
        message=(
            "The shapes are fixed now, but your loss is N times the expected one: the sum of "
            "squared errors grows with N. A mean squared error divides by the number of elements."
        ),
        hint="Does the loss add the squared errors up, or average them?",
    ),
    # --- 04.expand_write_error ---
    Misconception(
        exercise_id="04.expand_write_error",
        label="a bad value",
        build_answer=lambda: ValueError,
        message=(
            "Nothing is wrong with the value 1. The problem is where += writes: after expand, both "
            "rows read the same 3 memory locations, and PyTorch refuses in-place arithmetic that "
            "writes there while the operation runs."
        ),
        hint="After expand, how many memory locations do the six elements share?",
    ),
    Misconception(
        exercise_id="04.expand_write_error",
        label="wrong types",
        build_answer=lambda: TypeError,
        message=(
            "Adding a Python int to a float tensor is fine; the types are not the problem. An "
            "expanded tensor's elements share memory, so one in-place write would hit the same "
            "location twice."
        ),
        hint="Is anything wrong with the types, or with where the write lands?",
    ),
    Misconception(
        exercise_id="04.expand_write_error",
        label="expand out of range",
        build_answer=lambda: IndexError,
        message=(
            "expand(2, 3) on a tensor of size 3 is allowed: it adds a leading dimension of size 2 "
            "without copying. The failure comes at +=, the in-place write."
        ),
        hint="Which line fails: the expand, or the write that follows it?",
    ),
    # --- 04.pairwise_sq_dists ---
    Misconception(
        exercise_id="04.pairwise_sq_dists",
        label="torch.cdist: distances, not squared",
        build_answer=lambda: _pairwise_cdist,
        message=(
            "Every distance is the square root of the expected one: these are the Euclidean "
            "distances, and the task asks for the squared distances, built with broadcasting."
        ),
        hint="Is a squared distance what you get before or after taking a square root?",
        cause=(
            "torch.cdist returns the Euclidean distances themselves, the square roots of the "
            "squared distances."
        ),
        evidence=("call:cdist",),
    ),
    Misconception(
        exercise_id="04.pairwise_sq_dists",
        label="summed over the wrong dimension",
        build_answer=lambda: _pairwise_summed_over_points,
        message=(
            "Your result has one entry per point of a and per coordinate, (N, D): the squared "
            "differences were added over the points of b. The squared distance sums over the "
            "coordinates, the last dimension."
        ),
        hint="The (N, M, D) differences: which dimension holds the coordinates to add up?",
    ),
    Misconception(
        exercise_id="04.pairwise_sq_dists",
        label="new dimensions swapped",
        build_answer=lambda: _pairwise_swapped,
        message=(
            "Your result is (M, N), the transpose of the expected one: the points of b run down "
            "the rows. The row index i belongs to a, so a needs the new dimension in position 1."
        ),
        hint="Which tensor's points should run down the rows of the result?",
    ),
    # --- 04.gram ---
    Misconception(
        exercise_id="04.gram",
        label="transpose on the left",
        build_answer=lambda: _gram_wrong_order,
        message=(
            "Your result is (D, D): it pairs up the columns of x. The Gram matrix of the rows "
            "pairs every row with every row, (N, N): the transpose goes on the right."
        ),
        hint="To pair every row with every row, which operand of the product must be transposed?",
    ),
    Misconception(
        exercise_id="04.gram",
        label="only the diagonal",
        build_answer=lambda: _gram_diagonal_only,
        message=(
            "Your result pairs each row only with itself: it is the diagonal of the Gram matrix. "
            "Every pair of rows needs its own entry, which a matrix product gives."
        ),
        hint="How many entries does a Gram matrix of N rows have?",
    ),
    # --- 04.quiz_keepdim_shape ---
    Misconception(
        exercise_id="04.quiz_keepdim_shape",
        label="keepdim ignored",
        build_answer=lambda: (5,),
        message=(
            "That is the shape without keepdim. keepdim=True keeps the summed dimension in its "
            "place, with size 1, so the result has as many dimensions as x."
        ),
        hint="With keepdim=True, how many dimensions does the result have?",
    ),
    Misconception(
        exercise_id="04.quiz_keepdim_shape",
        label="summed the other dimension",
        build_answer=lambda: (6, 1),
        message=(
            "dim=0 names the dimension that is summed away, the one of size 6: it is that one that "
            "shrinks to size 1, not the other."
        ),
        hint="Which size belongs to the dimension that is summed away?",
    ),
    Misconception(
        exercise_id="04.quiz_keepdim_shape",
        label="keepdim keeps the size",
        build_answer=lambda: (6, 5),
        message=(
            "keepdim keeps the dimension, not its size: the summed dimension is still reduced to a "
            "single entry."
        ),
        hint="After summing, how many entries are left along the summed dimension?",
    ),
    # --- 04.quiz_matvec_shape ---
    Misconception(
        exercise_id="04.quiz_matvec_shape",
        label="the vector's extra dimension kept",
        build_answer=lambda: (7, 2, 1),
        message=(
            "A 1-D vector on the right is treated as a column (3, 1) for the product, and that "
            "added dimension is removed again from the result."
        ),
        hint="Does the dimension added to the vector for the product stay in the result?",
    ),
    Misconception(
        exercise_id="04.quiz_matvec_shape",
        label="batch dimension lost",
        build_answer=lambda: (2,),
        message=(
            "That is the shape for one matrix. The 7 in front is a batch dimension: matmul "
            "multiplies each of the 7 matrices by v and keeps the batch."
        ),
        hint="What happens to the 7 in front: is it summed over, or kept as a batch?",
    ),
    Misconception(
        exercise_id="04.quiz_matvec_shape",
        label="kept the inner size",
        build_answer=lambda: (7, 3),
        message=(
            "the size 3 is the one that matmul sums over (each row of a (2, 3) matrix meets v): it "
            "disappears, and each matrix's number of rows remains."
        ),
        hint="Which size does a matrix-vector product sum over?",
    ),
]


def _center_rows_in_place(x):
    x -= x.mean(dim=1, keepdim=True)
    return x


MISCONCEPTIONS = [
    Misconception(
        exercise_id="04.broadcast_by_hand",
        label="size 1 does not stretch",
        build_answer=lambda: (8, 1, 6, 1),
        message=(
            "a dimension of size 1 stretches to the other tensor's size in that position: after "
            "broadcasting, a position holds 1 only when both sizes are 1."
        ),
        hint="When one size is 1 and the other 6, what size does broadcasting give?",
    ),
    Misconception(
        exercise_id="04.broadcast_by_hand",
        label="the smaller size wins",
        build_answer=lambda: (1, 1, 1, 1),
        message=(
            "broadcasting never shrinks: where one size is 1 the result takes the other size, the "
            "larger one."
        ),
        hint="Can broadcasting ever make a dimension smaller than it was?",
    ),
    *_MORE,
]

# wrong functions that raise, or that change their input in place
MISCONCEPTIONS += [
    Misconception(
        exercise_id="04.center_rows",
        label="-= on the input",
        build_answer=lambda: _center_rows_in_place,
        message=(
            "Your function overwrote the caller's tensor: the rows they passed in are centred too. "
            "Return a new tensor and leave the input as it was."
        ),
        hint="Does your function leave the tensor it was given unchanged?",
        cause=(
            "x -= ... is an in-place subtraction: it writes into the caller's tensor. Return x - "
            "... as a new tensor."
        ),
        evidence=("op:isub",),
    ),
]


def _mse_square_of_mean(prediction, target):
    return (prediction.squeeze(1) - target).mean() ** 2


def _mse_root(prediction, target):
    return ((prediction.squeeze(1) - target) ** 2).mean().sqrt()


def _gram_bmm(x):
    return torch.bmm(x, x.mT)


# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="04.broadcast_by_hand",
        label="the missing dimension dropped",
        build_answer=lambda: (7, 6, 5),
        message=(
            "the result never has fewer dimensions than the larger operand: the shorter shape is "
            "padded with 1s on the left, and those 1s stretch like any other size 1."
        ),
        hint="How many dimensions does the longer of the two shapes have?",
    ),
    Misconception(
        exercise_id="04.fix_mse",
        label="mean squared instead of squares averaged",
        build_answer=lambda: _mse_square_of_mean,
        message=(
            "Your loss is the square of the mean error: positive and negative errors cancel before "
            "they are squared. A mean squared error squares each difference first and then "
            "averages."
        ),
        hint="Which comes first in a mean squared error: squaring or averaging?",
    ),
    Misconception(
        exercise_id="04.fix_mse",
        label="root of the mean",
        build_answer=lambda: _mse_root,
        message=(
            "Your loss is the square root of the expected one: the root mean squared error (RMSE), "
            "a different loss. The function must return the mean of the squared differences "
            "itself."
        ),
        hint="Does a mean squared error take a square root at the end?",
    ),
    Misconception(
        exercise_id="04.gram",
        label="bmm needs exactly 3 dimensions",
        build_answer=lambda: _gram_bmm,
        message=(
            "Your function stops with an error on a single matrix (2-D input): the product it uses "
            "accepts only batches with exactly one batch dimension (3-D tensors). Use a product "
            "that handles any number of batch dimensions."
        ),
        hint=(
            "Which matrix product works for a single matrix and for any number of batch dimensions?"
        ),
        cause=(
            "torch.bmm multiplies batches of exactly one batch dimension (3-D tensors), so it "
            "fails on a single matrix and on two batch dimensions. @ (torch.matmul) handles any "
            "number of batch dimensions."
        ),
        evidence=("call:bmm",),
    ),
]
