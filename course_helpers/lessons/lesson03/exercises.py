"""Checked exercises for lesson 03: shapes, views, strides, cat and stack."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Exercise

LESSON = "03_shapes_and_views"


def _column_grid():
    return torch.arange(12).view(3, 4).t()


def _pair_columns():
    return torch.stack([torch.tensor([1, 2, 3]), torch.tensor([10, 20, 30])], dim=1)


def _as_batch(x):
    return x if x.dim() == 4 else x.unsqueeze(0)


def _as_batch_cases(g):
    return [
        (torch.rand(3, 4, 5, generator=g),),
        (torch.rand(2, 3, 4, 5, generator=g),),
        (torch.rand(1, 3, 2, 2, generator=g),),  # already a batch of one: keep it 4-D
        (torch.rand(1, 2, 2, generator=g),),  # one single-channel image
    ]


def _flatten_images(batch):
    return batch.flatten(start_dim=1)


def _flatten_images_cases(g):
    return [
        (torch.rand(4, 3, 2, 2, generator=g),),
        (torch.rand(2, 2, 3, 3, generator=g).permute(0, 3, 1, 2),),  # not contiguous
        (torch.rand(1, 1, 4, 4, generator=g),),  # a batch of one
        (torch.rand(0, 3, 2, 2, generator=g),),  # an empty batch
    ]


def _columns_in_order(m):
    return m.t().reshape(-1)


def _columns_in_order_cases(g):
    return [
        (torch.rand(3, 4, generator=g),),
        (torch.randint(0, 10, (2, 5), generator=g),),
        (torch.rand(1, 5, generator=g),),  # a single row
        (torch.rand(4, 1, generator=g),),  # a single column
        (torch.rand(0, 3, generator=g),),  # no rows
    ]


EXERCISES = [
    Exercise(
        id="03.column_grid",
        any_integer_dtype=True,
        task_says={
            "whose columns count up": "check:value (the values are compared)",
            "One line with arange and two shape operations is enough": (
                "advice: a remark on the size of the answer; the numbers typed in are not forbidden"
                " here"
            ),
        },
        title="Numbers down the columns",
        lesson=LESSON,
        kind="value",
        build_reference=_column_grid,
        hints=(
            "Start from the 3×4 grid whose rows are 0..3, 4..7, 8..11. How do rows become columns?",
            "torch.arange(12).view(3, 4) has those rows; a transpose turns them into columns.",
            "Build the (3, 4) grid from arange and view exactly as in hint 2, then call .t() "
            "(or .T) on the result.",
        ),
        solution="answer = torch.arange(12).view(3, 4).t()",
    ),
    Exercise(
        id="03.pair_columns",
        title="Pairs side by side",
        lesson=LESSON,
        kind="value",
        build_reference=_pair_columns,
        hints=(
            "The result has a dimension that neither xs nor ys has: the pair. Which function "
            "creates a new dimension, cat or stack?",
            "torch.stack([xs, ys]) puts xs and ys as rows (shape (2, 3)); you want them as "
            "columns, so stack along dimension 1.",
            "Keep the call torch.stack([xs, ys]) and add one keyword argument that names "
            "dimension 1.",
        ),
        solution="answer = torch.stack([xs, ys], dim=1)",
    ),
    Exercise(
        id="03.permute_shape",
        task_says={
            "Without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Predict a permuted shape",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (5, 3, 2, 4),
        options=None,
        hints=(
            "permute(3, 1, 0, 2) means: new dim 0 is old dim 3, new dim 1 is old dim 1, and so on.",
            "The old sizes are (2, 3, 4, 5): old dim 3 has size 5, old dim 1 size 3, old dim 0 "
            "size 2, old dim 2 size 4.",
            "Read the new order off: new dim 0 is old dim 3 (size 5), new dim 1 is old dim 1 "
            "(size 3); finish the tuple with old dims 0 and 2.",
        ),
        solution="answer = (5, 3, 2, 4)",
    ),
    Exercise(
        id="03.permute_stride",
        task_says={
            "Work it out by hand": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Predict the strides of a permute",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (1, 20, 60, 5),
        options=None,
        hints=(
            "First the strides of x: the last dimension has stride 1, and each dimension's "
            "stride is the product of the sizes to its right. Then remember that permute moves "
            "the strides together with the sizes: nothing in memory moves.",
            "x has strides (60, 20, 5, 1). permute(3, 1, 0, 2) takes old dim 3 first, then old "
            "dims 1, 0 and 2.",
            "Pick from (60, 20, 5, 1) in the order 3, 1, 0, 2: the tuple starts with 1 and 20.",
        ),
        solution="answer = (1, 20, 60, 5)",
    ),
    Exercise(
        id="03.transpose_error",
        title="Find the error: transpose(0, 2) on a 2-D tensor",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: IndexError,
        explanations={
            "RuntimeError": "Many shape errors are RuntimeErrors, but not this one. PyTorch "
            "treats a dimension number like an index into the list of dimensions: which "
            "exception does Python raise for an index past the end of a list?",
        },
        hints=(
            "How many dimensions does torch.zeros(2, 3) have, and which dimension numbers are "
            "valid for it?",
            "Dimension 2 would be the third dimension. PyTorch reports 'Dimension out of range', "
            "with the same exception class as a list index that is out of range.",
            "It is the same exception class a Python list raises for [1, 2][5].",
        ),
        solution="answer = IndexError",
    ),
    Exercise(
        id="03.as_batch",
        title="Always a batch",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _as_batch,
        cases=_as_batch_cases,
        hints=(
            "x.dim() tells you whether you got one image (3) or a batch (4).",
            "For a single image, x.unsqueeze(0) adds a batch dimension of size 1 in front. Do "
            "not use squeeze: a batch of one must stay 4-D.",
            "One conditional expression does it: give back x itself when it already has 4 "
            "dimensions, otherwise x with a new dimension 0.",
        ),
        solution=("def as_batch(x):\n    return x if x.dim() == 4 else x.unsqueeze(0)"),
    ),
    Exercise(
        id="03.flatten_images",
        title="Images to vectors",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _flatten_images,
        cases=_flatten_images_cases,
        hints=(
            "Keep dimension 0 as it is and merge the other three into one.",
            "view fails on the permuted batch, and reshape(n, -1) cannot infer the -1 when "
            "n is 0. One method merges 'every dimension from 1 on' without inferring anything.",
            "torch.flatten and Tensor.flatten take a start_dim: keep dim 0 and merge from dim 1 "
            "to the end.",
        ),
        solution="def flatten_images(batch):\n    return batch.flatten(start_dim=1)",
    ),
    Exercise(
        id="03.columns_in_order",
        title="Fix the bug: reading column by column",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _columns_in_order,
        cases=_columns_in_order_cases,
        hints=(
            "m.t() is right: its rows are the columns of m. The problem is the step after it.",
            "m.t() is not contiguous, so view cannot flatten it. Which method flattens and "
            "copies when it has to?",
            "Keep the transpose and replace the flattening view by the method that copies when "
            "the memory order requires it, with -1 for the size.",
        ),
        solution="def columns_in_order(m):\n    return m.t().reshape(-1)",
    ),
    Exercise(
        id="03.quiz_stride",
        title="Strides of a fresh 4×2×5 tensor",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (10, 5, 1),
        options=None,
        hints=(
            "The last dimension is the fastest: its stride is 1.",
            "One step along dim 1 skips a whole row of 5; one step along dim 0 skips a 2×5 block.",
            "(10, 5, 1)",
        ),
        solution='check("03.quiz_stride", (10, 5, 1))',
    ),
    Exercise(
        id="03.quiz_reshape_copy",
        title="Does reshape copy here?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "r is a view of t: reshape never copies.",
            "b": "r is a copy: t is not contiguous, so reshape has to copy.",
            "c": "The reshape raises an error, like view would.",
        },
        explanations={
            "a": "reshape returns a view only when it can; the transposed t cannot be read as "
            "one flat line in memory order, so reshape copies.",
            "c": "That is view's behaviour. reshape copies instead of failing.",
        },
        hints=(
            "Is t contiguous? Compare t.stride() with the strides of a fresh 3×2 tensor.",
            "reshape gives a view when the new shape can be described with strides over the "
            "same memory, and copies otherwise.",
            '"b"',
        ),
        solution='check("03.quiz_reshape_copy", "b")',
    ),
    Exercise(
        id="03.quiz_stack_shape",
        title="Shape after stack(dim=1)",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (4, 3, 5),
        options=None,
        explanations={},
        hints=(
            "stack adds a new dimension whose size is the number of tensors stacked.",
            "The new dimension of size 3 goes at position 1, between the 4 and the 5.",
            "(4, 3, 5)",
        ),
        solution='check("03.quiz_stack_shape", (4, 3, 5))',
    ),
    Exercise(
        id="03.fancy_index_shares",
        task_says={
            "Without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Does a list index share memory?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: False,
        options=None,
        hints=(
            "Slices like x[0:2] give views. Is a Python list inside the brackets a slice?",
            "Indexing with a list (or a tensor of indices, or a boolean mask) is advanced "
            "indexing, and PyTorch handles it the same way whichever indices the list holds.",
            "Advanced indexing always gathers the chosen elements into new memory, even when "
            "a slice could have picked the same ones; answer with a Python bool.",
        ),
        solution="answer = False",
    ),
    Exercise(
        id="03.zeros_like_view",
        title="view on a buffer made with zeros_like",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        explanations={
            "ValueError": "The sizes fit: 6 elements into shape (6,). What view cannot use is "
            "the layout the buffer inherited from x.t().",
            "TypeError": "view accepts these arguments; the problem is the buffer's strides.",
        },
        hints=(
            "Which strides does torch.zeros_like give a tensor made from a transposed one?",
            "zeros_like keeps the strides of x.t(), so the buffer is not contiguous; can view "
            "flatten it without copying?",
            "view refuses, with the error class PyTorch uses for most failed tensor operations "
            "(its message suggests .reshape).",
        ),
        solution="answer = RuntimeError",
    ),
]
