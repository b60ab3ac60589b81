"""Typical wrong answers to lesson 03's exercises (shapes and views)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _as_batch_always_unsqueeze(x):
    return x.unsqueeze(0)


def _as_batch_squeeze_first(x):
    return x.squeeze().unsqueeze(0)


def _as_batch_unsqueeze_last(x):
    return x if x.dim() == 4 else x.unsqueeze(-1)


def _flatten_everything(batch):
    return batch.flatten()


def _flatten_from_dim2(batch):
    return batch.flatten(start_dim=2)


def _flatten_after_squeeze(batch):
    return batch.squeeze().flatten(start_dim=1)


def _columns_contiguous_instead_of_flatten(m):
    return m.t().contiguous()


def _columns_contiguous_first(m):
    return m.contiguous().view(-1)


_MORE = [
    # --- 03.column_grid ---
    Misconception(
        exercise_id="03.column_grid",
        label="view with swapped sizes",
        build_answer=lambda: torch.arange(12).view(4, 3),
        message=(
            "Your grid has the right shape, but its numbers still run along the rows: relabelling "
            "the same memory as 4 rows of 3 fills the new shape row by row, in memory order. To "
            "turn rows into columns you need a transpose of the (3, 4) grid."
        ),
        hint=(
            "Does giving the 12 numbers a new shape ever move a number to another place in memory "
            "order?"
        ),
        cause=(
            "view (and reshape) never move numbers: they fill the new shape row by row, in memory "
            "order."
        ),
        evidence=("call:view|reshape",),
    ),
    Misconception(
        exercise_id="03.column_grid",
        label="grid without the transpose",
        build_answer=lambda: torch.arange(12).view(3, 4),
        message=(
            "This grid runs 0..11 along the rows. The task wants the numbers to run down the "
            "columns: the rows of this grid must become columns."
        ),
        hint="Which operation turns the rows of a grid into its columns?",
    ),
    Misconception(
        exercise_id="03.column_grid",
        label="reshape after the transpose",
        build_answer=lambda: torch.arange(12).view(3, 4).t().reshape(3, 4),
        message=(
            "Your grid holds the numbers scrambled: the transposed grid was read row by row again "
            "and refilled into (3, 4). The transposed grid itself already is the answer's layout."
        ),
        hint="After the transpose, what shape does the grid already have?",
        cause=(
            "Reshaping the transposed grid back to (3, 4) reads it row by row again and scrambles "
            "the columns."
        ),
        evidence=("call:reshape|view",),
    ),
    # --- 03.pair_columns ---
    Misconception(
        exercise_id="03.pair_columns",
        label="stack along dim 0",
        build_answer=lambda: torch.stack([torch.tensor([1, 2, 3]), torch.tensor([10, 20, 30])]),
        message=(
            "Your pair holds xs and ys as rows, shape (2, 3). The new dimension can go in another "
            "position: choose the one that makes them columns."
        ),
        hint="Where must the new dimension go so that xs and ys become columns?",
        cause="stack's default dim=0 puts the stacked tensors as rows.",
        evidence=("call:stack",),
    ),
    Misconception(
        exercise_id="03.pair_columns",
        label="cat instead of stack",
        build_answer=lambda: torch.cat([torch.tensor([1, 2, 3]), torch.tensor([10, 20, 30])]),
        message=(
            "Your result is one vector of 6 numbers: the two vectors were joined end to end along "
            "their existing dimension. A pair needs a new dimension."
        ),
        hint="Which way of combining two vectors adds a new dimension instead of lengthening one?",
        cause=(
            "cat joins along an existing dimension, so two vectors of 3 become one vector of 6. "
            "Only stack creates a new dimension."
        ),
        evidence=("call:cat|concat|concatenate",),
    ),
    Misconception(
        exercise_id="03.pair_columns",
        label="rows reshaped into columns",
        build_answer=lambda: torch.stack(
            [torch.tensor([1, 2, 3]), torch.tensor([10, 20, 30])]
        ).reshape(3, 2),
        message=(
            "Your pairs mix xs and ys within the rows: your rows hold all of xs, then all of ys, "
            "two numbers at a time, as the six numbers lie one after another. Rows become columns "
            "by a transpose, or by stacking along the right dimension in the first place."
        ),
        hint="Does refilling the same numbers into a new shape turn rows into columns?",
        cause=(
            "view and reshape keep the numbers in the order they lie in memory (xs, then ys) and "
            "only cut that order into new rows, so a (3, 2) shape takes them two at a time."
        ),
        evidence=("call:reshape|view",),
    ),
    # --- 03.transpose_error ---
    Misconception(
        exercise_id="03.transpose_error",
        label="a bad value",
        build_answer=lambda: ValueError,
        message=(
            "PyTorch treats a dimension number like an index into the list of dimensions. Think of "
            "what Python raises when an index is past the end of a list."
        ),
        hint="What does Python raise for an index past the end of a list?",
    ),
    Misconception(
        exercise_id="03.transpose_error",
        label="wrong argument type",
        build_answer=lambda: TypeError,
        message=(
            "The arguments have the right type, two ints. The problem is their value: a 2-D tensor "
            "has only dimensions 0 and 1 (or -1 and -2)."
        ),
        hint="Which dimension numbers does a 2-D tensor have?",
    ),
    # --- 03.as_batch ---
    Misconception(
        exercise_id="03.as_batch",
        label="always unsqueeze",
        build_answer=lambda: _as_batch_always_unsqueeze,
        message=(
            "An input that already is a batch (4-D) comes out 5-D: your function adds a dimension "
            "to every input. Look at how many dimensions x has before adding one."
        ),
        hint="What should your function do with an input that already has 4 dimensions?",
    ),
    Misconception(
        exercise_id="03.as_batch",
        label="squeeze() without a dim",
        build_answer=lambda: _as_batch_squeeze_first,
        message=(
            "An input that already is a batch comes out 5-D, with a leading size-1 dimension: "
            "size-1 dimensions were dropped and then one was added in front for every input. "
            "Decide from x's number of dimensions whether a batch dimension is missing."
        ),
        hint="How can your function tell a single image from a batch of images?",
        cause=(
            "squeeze() with no dim removes every dimension of size 1, whatever it means: a "
            "single-channel image loses its channel, and an input that already is a batch then "
            "gets a fifth dimension from the new one in front."
        ),
        evidence=("call:squeeze()",),
    ),
    Misconception(
        exercise_id="03.as_batch",
        label="new dimension at the end",
        build_answer=lambda: _as_batch_unsqueeze_last,
        message=(
            "A single image comes out with a size-1 dimension at the end, (C, H, W, 1). The batch "
            "dimension comes first, in front of the channels."
        ),
        hint="In which position does the batch dimension go?",
        cause="unsqueeze(-1) adds the size-1 dimension at the end; position 0 is in front.",
        evidence=("call:unsqueeze",),
    ),
    # --- 03.flatten_images ---
    Misconception(
        exercise_id="03.flatten_images",
        label="flatten() merges the batch too",
        build_answer=lambda: _flatten_everything,
        message=(
            "Your function returns one long vector: the batch dimension was merged too. Keep "
            "dimension 0 and merge only the ones after it."
        ),
        hint="Which dimension must survive the flattening?",
        cause=(
            "flatten() with no arguments merges every dimension, the batch dimension too, into one "
            "long vector."
        ),
        evidence=("call:flatten()",),
    ),
    Misconception(
        exercise_id="03.flatten_images",
        label="flatten from dim 2",
        build_answer=lambda: _flatten_from_dim2,
        message=(
            "Your function keeps the channels separate and merges only height and width. Every "
            "dimension after the batch dimension belongs in the vector."
        ),
        hint="Which dimensions belong in each image's vector: from which one on?",
        cause=(
            "flatten's start_dim is the first dimension that gets merged, so starting at 2 keeps "
            "the channels separate."
        ),
        evidence=("call:flatten",),
    ),
    Misconception(
        exercise_id="03.flatten_images",
        label="squeeze() without a dim",
        build_answer=lambda: _flatten_after_squeeze,
        message=(
            "A batch of one single-channel image comes out without its batch dimension: size-1 "
            "dimensions were dropped before flattening. Flatten the batch as it comes."
        ),
        hint="What should happen to a batch of one: does it keep its batch dimension?",
        cause=(
            "squeeze() with no dim removes every dimension of size 1, so a batch of one loses its "
            "batch dimension (and a single channel its channel)."
        ),
        evidence=("call:squeeze()",),
    ),
    # --- 03.columns_in_order ---
    Misconception(
        exercise_id="03.columns_in_order",
        label="transpose dropped: row order",
        build_answer=lambda: _columns_contiguous_first,
        message=(
            "Your vector lists m's elements row by row: m's rows were flattened, not its columns. "
            "Keep the transpose (its rows are m's columns) and fix only the flattening step."
        ),
        hint="Which tensor has m's columns as its rows?",
    ),
    Misconception(
        exercise_id="03.columns_in_order",
        label="contiguous() instead of flattening",
        build_answer=lambda: _columns_contiguous_instead_of_flatten,
        message=(
            "Your result is the transposed matrix itself, still 2-D. The fix must still flatten "
            "the result into one vector."
        ),
        hint="How many dimensions should the result have?",
        cause=(
            ".contiguous() copies the transposed tensor into row-major memory, but it keeps the "
            "2-D shape."
        ),
        evidence=("call:contiguous",),
    ),
    # --- 03.quiz_stride ---
    Misconception(
        exercise_id="03.quiz_stride",
        label="sizes given as strides",
        build_answer=lambda: (4, 2, 5),
        message=(
            "those are the sizes. A stride is how many elements to skip in memory to take one step "
            "along a dimension."
        ),
        hint="How many elements do you skip in memory to move one step along the last dimension?",
    ),
    Misconception(
        exercise_id="03.quiz_stride",
        label="first dimension fastest",
        build_answer=lambda: (1, 4, 8),
        message=(
            "that is the column-major (Fortran) layout, where the first dimension moves fastest. "
            "PyTorch stores row-major: the last dimension has stride 1, and each stride is the "
            "product of the sizes to its right."
        ),
        hint="In row-major order, which dimension has stride 1?",
    ),
    Misconception(
        exercise_id="03.quiz_stride",
        label="only the next size",
        build_answer=lambda: (2, 5, 1),
        message=(
            "a stride is the product of *all* sizes to the right of its dimension, not only the "
            "next one: one step along dim 0 skips a whole 2×5 block."
        ),
        hint="One step along dim 0 skips how many elements: one row, or a whole block?",
    ),
    Misconception(
        exercise_id="03.quiz_stride",
        label="strides listed in reverse",
        build_answer=lambda: (1, 5, 10),
        message=(
            "the numbers are right but in reverse order: stride() lists one stride per dimension "
            "in the same order as the shape, so the stride 1 of the last dimension comes last."
        ),
        hint="In which order are the strides listed: like the shape, or reversed?",
    ),
    # --- 03.quiz_stack_shape ---
    Misconception(
        exercise_id="03.quiz_stack_shape",
        label="new dimension always in front",
        build_answer=lambda: (3, 4, 5),
        message=(
            "that is stack along dim 0. The dim argument says where the new dimension (one entry "
            "per stacked tensor) goes."
        ),
        hint="What does stack's dim argument decide?",
    ),
    Misconception(
        exercise_id="03.quiz_stack_shape",
        label="stack read as cat",
        build_answer=lambda: (4, 15),
        message=(
            "That is what cat(dim=1) would give: cat joins along an existing dimension. stack adds "
            "a new dimension and keeps every existing size."
        ),
        hint="Does stack add a new dimension, or lengthen an existing one?",
    ),
    Misconception(
        exercise_id="03.quiz_stack_shape",
        label="new dimension at the end",
        build_answer=lambda: (4, 5, 3),
        message=(
            "that puts the new dimension last (dim=2 or dim=-1). dim=1 inserts it at position 1 of "
            "the result."
        ),
        hint="At which position of the result does dim=1 put the new dimension?",
    ),
]


def _as_batch_hard_coded(x):
    return x.reshape(1, 3, 4, 5)


def _flatten_with_view(batch):
    return batch.view(batch.shape[0], -1)


def _columns_with_view(m):
    return m.t().view(-1)


MISCONCEPTIONS = [
    Misconception(
        exercise_id="03.permute_shape",
        label="inverse permutation",
        build_answer=lambda: (4, 3, 5, 2),
        message=(
            "that is the inverse permutation: old dimension i sent to position dims[i]. permute "
            "reads the other way round: position i of the result takes old dimension dims[i]."
        ),
        hint=(
            "Position 0 of the result: which old dimension does it take, the one named by dims[0]?"
        ),
    ),
    Misconception(
        exercise_id="03.permute_shape",
        label="permute leaves the shape alone",
        build_answer=lambda: (2, 3, 4, 5),
        message=(
            "permute does reorder the shape: it moves no data in memory, but the sizes (and the "
            "strides) are listed in the new order."
        ),
        hint="Are the sizes of a permuted tensor listed in the old order or the new one?",
    ),
    Misconception(
        exercise_id="03.permute_shape",
        label="arguments read as sizes",
        build_answer=lambda: (3, 1, 0, 2),
        message=(
            "the arguments of permute are dimension numbers, not sizes: look up the size of each "
            "named dimension in x's shape."
        ),
        hint="Is each argument of permute a size, or the number of a dimension?",
    ),
    Misconception(
        exercise_id="03.permute_stride",
        label="strides before the permute",
        build_answer=lambda: (60, 20, 5, 1),
        message=(
            "those are x's own strides, before the permute. permute moves each stride together "
            "with its size, so the result lists them in the new order."
        ),
        hint="When a dimension moves to a new position, does its stride move with it?",
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
        hint="Does permute copy the data into a new layout, or keep each dimension's stride?",
    ),
    Misconception(
        exercise_id="03.permute_stride",
        label="inverse permutation",
        build_answer=lambda: (5, 20, 1, 60),
        message=(
            "that is the inverse permutation: old dimension i sent to position dims[i]. Position i "
            "of the result takes old dimension dims[i], with its stride."
        ),
        hint="Position 0 of the result: which old dimension's stride does it take?",
    ),
    *_MORE,
    Misconception(
        exercise_id="03.fancy_index_shares",
        label="every index gives a view",
        build_answer=lambda: True,
        message=(
            "slices give views, but a list of indices is advanced indexing, which always copies "
            "the picked elements into new memory, even rows a slice could have picked."
        ),
        hint="Which kind of indexing gives a view, and which always copies?",
    ),
]

# wrong functions that raise, or that change their input in place
MISCONCEPTIONS += [
    Misconception(
        exercise_id="03.as_batch",
        label="reshape to one hard-coded shape",
        build_answer=lambda: _as_batch_hard_coded,
        message=(
            "Your function stops with an error for any input but the (3, 4, 5) example image: the "
            "sizes of that one image are written into the result's shape, so another image size "
            "(or a batch that is already 4-D) cannot take it. Add the batch dimension without "
            "naming the other sizes."
        ),
        hint="How can you add a dimension of size 1 in front without naming the other sizes?",
        cause="reshape(1, 3, 4, 5) writes in the sizes of one example image.",
        evidence=("call:reshape|view",),
    ),
    Misconception(
        exercise_id="03.flatten_images",
        label="view on a non-contiguous batch",
        build_answer=lambda: _flatten_with_view,
        message=(
            "Your function stops with an error on a batch whose elements are not laid out row by "
            "row (for example after a permute). A function must work for every batch: use an "
            "operation that copies when it has to."
        ),
        hint="Which way of changing the shape works on every layout, copying when it must?",
        cause=(
            "view only relabels the memory it is given, so it fails on a batch that is not "
            "contiguous; reshape (or flatten) copies when it has to."
        ),
        evidence=("call:view",),
    ),
    Misconception(
        exercise_id="03.columns_in_order",
        label="view after the transpose",
        build_answer=lambda: _columns_with_view,
        message=(
            "Your function stops with an error: the transposed matrix is not contiguous, and "
            "flattening it without a copy is impossible. Flatten it with an operation that is "
            "allowed to copy."
        ),
        hint="Can a transposed matrix be read as one row without copying it?",
        cause=(
            "A transpose only swaps the strides, so view(-1) cannot read the result as one row and "
            "raises."
        ),
        evidence=("call:view",),
    ),
    Misconception(
        exercise_id="03.zeros_like_view",
        label="a new buffer is always contiguous",
        build_answer=lambda: None,
        message=(
            "zeros_like makes a new tensor, but with the layout of the tensor it copies: the "
            "buffer of x.t() has x.t()'s strides, so it is not contiguous, and view cannot read it "
            "as one row without a copy. Print buffer.stride() and buffer.is_contiguous()."
        ),
        hint="Which layout does a tensor made by zeros_like get: a fresh one, or the original's?",
    ),
]
