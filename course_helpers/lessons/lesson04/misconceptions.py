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
            "Two tensors of the same shape (5,) are multiplied element by element: that gives "
            "the squares only. Broadcasting builds a table when one operand is a column and "
            "the other a row."
        ),
    ),
    Misconception(
        exercise_id="04.times_table",
        label="numbers from 0",
        build_answer=lambda: torch.arange(5)[:, None] * torch.arange(5)[None, :],
        message=(
            "arange(5) starts at 0, so the first row and column are all zeros. The table "
            "starts at 1 × 1: give arange a start as well as an end."
        ),
    ),
    Misconception(
        exercise_id="04.times_table",
        label="@ of two vectors",
        build_answer=lambda: torch.arange(1, 6) @ torch.arange(1, 6),
        message=(
            "@ of two 1-D tensors is their dot product, one number. The table comes from "
            "element-wise * between a column view and a row view, with broadcasting."
        ),
    ),
    # --- 04.center_rows ---
    Misconception(
        exercise_id="04.center_rows",
        label="column means (dim=0)",
        build_answer=lambda: _center_by_column_means,
        message=(
            "mean(dim=0) averages down the columns, giving one mean per column. dim names "
            "the dimension that is reduced away: a mean per row reduces the columns."
        ),
    ),
    Misconception(
        exercise_id="04.center_rows",
        label="one global mean",
        build_answer=lambda: _center_by_global_mean,
        message=(
            "mean() with no dim averages the whole matrix, so the rows are shifted by one "
            "common number and their own means are not 0. Each row needs its own mean."
        ),
    ),
    # --- 04.fix_mse ---
    Misconception(
        exercise_id="04.fix_mse",
        label="shapes still broadcast to (N, N)",
        build_answer=lambda: _mse_unchanged,
        message=(
            "prediction (N, 1) minus target (N,) still broadcasts to an (N, N) table of every "
            "prediction against every target. squeeze(0), unsqueeze(0) on the target and "
            "F.mse_loss do not change that: make the two shapes equal before subtracting."
        ),
    ),
    Misconception(
        exercise_id="04.fix_mse",
        label="sum instead of mean",
        build_answer=lambda: _mse_summed,
        message=(
            "The shapes are fixed now, but the sum of squared errors grows with N. A mean "
            "squared error divides by the number of elements."
        ),
    ),
    # --- 04.expand_write_error ---
    Misconception(
        exercise_id="04.expand_write_error",
        label="a bad value",
        build_answer=lambda: ValueError,
        message=(
            "Nothing is wrong with the value 1. The problem is where += writes: after "
            "expand, both rows read the same 3 memory locations, and PyTorch refuses an "
            "in-place write there while the operation runs."
        ),
    ),
    Misconception(
        exercise_id="04.expand_write_error",
        label="wrong types",
        build_answer=lambda: TypeError,
        message=(
            "Adding a Python int to a float tensor is fine; the types are not the problem. "
            "An expanded tensor's elements share memory, so one in-place write would hit the "
            "same location twice."
        ),
    ),
    Misconception(
        exercise_id="04.expand_write_error",
        label="expand out of range",
        build_answer=lambda: IndexError,
        message=(
            "expand(2, 3) on a tensor of size 3 is allowed: it adds a leading dimension of "
            "size 2 without copying. The failure comes at +=, the in-place write."
        ),
    ),
    # --- 04.pairwise_sq_dists ---
    Misconception(
        exercise_id="04.pairwise_sq_dists",
        label="torch.cdist: distances, not squared",
        build_answer=lambda: _pairwise_cdist,
        message=(
            "torch.cdist returns the Euclidean distances themselves, the square roots. The "
            "task asks for squared distances, built with broadcasting."
        ),
    ),
    Misconception(
        exercise_id="04.pairwise_sq_dists",
        label="summed over the wrong dimension",
        build_answer=lambda: _pairwise_summed_over_points,
        message=(
            "The difference has shape (N, M, D); summing dim 1 adds over the points of b. "
            "The squared distance sums over the coordinates, the last dimension."
        ),
    ),
    Misconception(
        exercise_id="04.pairwise_sq_dists",
        label="new dimensions swapped",
        build_answer=lambda: _pairwise_swapped,
        message=(
            "With a[None] and b[:, None] the points of b run down the rows, giving (M, N). "
            "The row index i belongs to a, so a needs the new dimension in position 1."
        ),
    ),
    # --- 04.gram ---
    Misconception(
        exercise_id="04.gram",
        label="transpose on the left",
        build_answer=lambda: _gram_wrong_order,
        message=(
            "x.mT @ x multiplies (D, N) by (N, D) and pairs up the columns of x. The Gram "
            "matrix of the rows pairs every row with every row: the transpose goes on the "
            "right."
        ),
    ),
    Misconception(
        exercise_id="04.gram",
        label="only the diagonal",
        build_answer=lambda: _gram_diagonal_only,
        message=(
            "(x * x).sum(-1) pairs each row only with itself: that is the diagonal of the "
            "Gram matrix. Every pair of rows needs its own entry, which a matrix product gives."
        ),
    ),
    # --- 04.quiz_keepdim_shape ---
    Misconception(
        exercise_id="04.quiz_keepdim_shape",
        label="keepdim ignored",
        build_answer=lambda: (5,),
        message=(
            "That is the shape without keepdim. keepdim=True keeps the summed dimension in "
            "its place, with size 1, so the result has as many dimensions as x."
        ),
    ),
    Misconception(
        exercise_id="04.quiz_keepdim_shape",
        label="summed the other dimension",
        build_answer=lambda: (6, 1),
        message=(
            "dim=0 names the dimension that is summed away, the one of size 6: it is that "
            "one that shrinks to size 1, not the other."
        ),
    ),
    Misconception(
        exercise_id="04.quiz_keepdim_shape",
        label="keepdim keeps the size",
        build_answer=lambda: (6, 5),
        message=(
            "keepdim keeps the dimension, not its size: the summed dimension is still "
            "reduced to a single entry."
        ),
    ),
    # --- 04.quiz_matvec_shape ---
    Misconception(
        exercise_id="04.quiz_matvec_shape",
        label="the vector's extra dimension kept",
        build_answer=lambda: (7, 2, 1),
        message=(
            "A 1-D vector on the right is treated as a column (3, 1) for the product, and "
            "that added dimension is removed again from the result."
        ),
    ),
    Misconception(
        exercise_id="04.quiz_matvec_shape",
        label="batch dimension lost",
        build_answer=lambda: (2,),
        message=(
            "That is the shape for one matrix. The 7 in front is a batch dimension: matmul "
            "multiplies each of the 7 matrices by v and keeps the batch."
        ),
    ),
    Misconception(
        exercise_id="04.quiz_matvec_shape",
        label="kept the inner size",
        build_answer=lambda: (7, 3),
        message=(
            "the size 3 is the one that matmul sums over (each row of a (2, 3) matrix meets "
            "v): it disappears, and each matrix's number of rows remains."
        ),
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
    *_MORE,
]

# wrong functions that raise, or that change their input in place
MISCONCEPTIONS += [
    Misconception(
        exercise_id="04.center_rows",
        label="-= on the input",
        build_answer=lambda: _center_rows_in_place,
        message=(
            "x -= ... is an in-place subtraction: it overwrites the caller's tensor, so the "
            "rows they passed in are centred too. Return x - ... as a new tensor."
        ),
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
            "the result never has fewer dimensions than the larger operand: the shorter shape "
            "is padded with 1s on the left, and those 1s stretch like any other size 1."
        ),
    ),
    Misconception(
        exercise_id="04.fix_mse",
        label="mean squared instead of squares averaged",
        build_answer=lambda: _mse_square_of_mean,
        message=(
            "Squaring the mean error lets positive and negative errors cancel before they are "
            "squared. A mean squared error squares each difference first and then averages."
        ),
    ),
    Misconception(
        exercise_id="04.fix_mse",
        label="root of the mean",
        build_answer=lambda: _mse_root,
        message=(
            "The square root turns it into the root mean squared error (RMSE), a different "
            "loss. The function must return the mean of the squared differences itself."
        ),
    ),
    Misconception(
        exercise_id="04.gram",
        label="bmm needs exactly 3 dimensions",
        build_answer=lambda: _gram_bmm,
        message=(
            "torch.bmm multiplies batches of exactly one batch dimension (3-D tensors), so it "
            "fails on a single matrix and on two batch dimensions. @ (torch.matmul) handles "
            "any number of batch dimensions."
        ),
    ),
]
