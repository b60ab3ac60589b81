"""Checked exercises for lesson 04: broadcasting, keepdim, expand, matmul shapes."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Exercise

LESSON = "04_broadcasting_and_matmul"


def _times_table():
    numbers = torch.arange(1, 6)
    return numbers[:, None] * numbers[None, :]


def _center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def _center_rows_cases(g):
    return [
        (torch.randn(4, 3, generator=g),),
        (torch.randn(3, 3, generator=g),),  # square: a missing keepdim raises no error here
        (torch.randn(1, 5, generator=g),),  # a single row
        (torch.randn(5, 1, generator=g),),  # a single column: every entry becomes 0
        (torch.randn(0, 4, generator=g),),  # no rows
    ]


def _mse(prediction, target):
    return ((prediction.squeeze(1) - target) ** 2).mean()


def _mse_cases(g):
    cases = []
    for n in (5, 3, 1):  # n = 1: the broadcast bug gives the right value by luck
        target = torch.randn(n, generator=g)
        prediction = (target + 0.1 * torch.randn(n, generator=g)).unsqueeze(1)
        cases.append((prediction, target))
    return cases


def _pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def _pairwise_sq_dists_cases(g):
    return [
        (torch.randn(4, 3, generator=g), torch.randn(5, 3, generator=g)),
        (torch.randn(3, 2, generator=g), torch.randn(3, 2, generator=g)),  # square result
        (torch.randn(1, 2, generator=g), torch.randn(3, 2, generator=g)),  # one point in a
        (torch.randn(3, 1, generator=g), torch.randn(2, 1, generator=g)),  # D = 1
        (torch.randn(0, 3, generator=g), torch.randn(2, 3, generator=g)),  # no points in a
    ]


def _gram(x):
    return x @ x.mT


def _gram_cases(g):
    return [
        (torch.randn(2, 3, 4, generator=g),),
        (torch.randn(3, 2, generator=g),),  # a single matrix
        (torch.randn(2, 2, 3, 2, generator=g),),  # two batch dimensions
        (torch.randn(1, 1, 4, generator=g),),  # batch of one, N = 1
        (torch.randn(2, 0, 3, generator=g),),  # matrices with no rows: (2, 0, 0)
    ]


EXERCISES = [
    Exercise(
        id="04.broadcast_by_hand",
        task_says={
            "Broadcast by hand": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Broadcast by hand",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (8, 7, 6, 5),
        options=None,
        hints=(
            "Write the shapes under each other, aligned on the right, and pad the shorter one "
            "with 1s on the left.",
            "(8, 1, 6, 1) against (1, 7, 1, 5): in each position, a 1 stretches to the other size.",
            "Position by position: 8 against 1 gives 8, 1 against 7 gives 7; do the same for the "
            "last two positions.",
        ),
        solution="answer = (8, 7, 6, 5)",
    ),
    Exercise(
        id="04.times_table",
        forbid=("op:matmul", "call:matmul", "call:mm", "call:outer|einsum|kron|ger", "loop:python"),
        require=("call:arange",),
        any_integer_dtype=True,
        task_says={
            "Use one arange, a column, a row and broadcasting": "check:call:arange",
            "a column, a row and broadcasting": "check:call:outer|einsum|kron|ger",
            "no loops": "check:loop:python",
        },
        title="A multiplication table",
        lesson=LESSON,
        kind="value",
        build_reference=_times_table,
        hints=(
            "torch.arange(1, 6) gives 1, 2, 3, 4, 5. A column of shape (5, 1) times a row of "
            "shape (1, 5) broadcasts to (5, 5).",
            "numbers[:, None] is the column and numbers[None, :] the row.",
            "numbers = torch.arange(1, 6); multiply the column view by the row view and "
            "broadcasting builds the 5×5 table.",
        ),
        solution="numbers = torch.arange(1, 6)\nanswer = numbers[:, None] * numbers[None, :]",
        # an integer matrix product gives the same table on the CPU and fails on CUDA
    ),
    Exercise(
        id="04.center_rows",
        title="Center each row",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _center_rows,
        cases=_center_rows_cases,
        hints=(
            "x.mean(dim=1) has one mean per row. What shape must it have to be subtracted from "
            "every entry of its own row?",
            "Shape (N,) lines up with the columns; shape (N, 1) lines up with the rows. "
            "keepdim=True keeps the reduced dimension as size 1.",
            "Subtract from x its row means taken with keepdim=True, so they have shape (N, 1) and "
            "broadcast along each row.",
        ),
        solution="def center_rows(x):\n    return x - x.mean(dim=1, keepdim=True)",
    ),
    Exercise(
        id="04.fix_mse",
        title="Fix the bug: a loss that is too large",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _mse,
        cases=_mse_cases,
        hints=(
            "What is the shape of prediction - target when prediction is (N, 1) and target "
            "is (N,)?",
            "It is (N, N): every prediction meets every target. Make the two shapes equal "
            "before subtracting.",
            "Remove the size-1 column of prediction (naming its dim, squeeze(1), is the safe "
            "habit), then take the mean of the squared differences.",
        ),
        # no forbid: squeeze() is right for every (N, 1) and (N,) pair, and the task allows it
        solution=(
            "def mse(prediction, target):\n"
            "    return ((prediction.squeeze(1) - target) ** 2).mean()"
        ),
    ),
    Exercise(
        id="04.expand_write_error",
        title="Find the error: writing into an expanded tensor",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        hints=(
            "After expand(2, 3), how many places in memory hold the 6 elements of counts?",
            "Only 3: both rows read the same memory. PyTorch refuses in-place arithmetic such "
            "as += when several of the elements it writes share one memory location.",
            "It is the class the lesson's expand pitfall printed: the one PyTorch uses for most "
            "failures at run time (not ValueError, not TypeError).",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="04.pairwise_sq_dists",
        forbid=("loop:python", "call:cdist"),
        task_says={
            "Use broadcasting": "check:call:cdist",
            "no loops": "check:loop:python",
        },
        title="Every point against every point",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _pairwise_sq_dists,
        cases=_pairwise_sq_dists_cases,
        hints=(
            "Give a a new dimension so that it has shape (N, 1, D), and b one so that it has "
            "shape (1, M, D). What does their difference broadcast to?",
            "a[:, None, :] - b[None, :, :] has shape (N, M, D). Square it and sum over the last "
            "dimension.",
            "Subtract the two indexed views, square the (N, M, D) difference and sum over its last "
            "dimension: the result has shape (N, M).",
        ),
        solution=(
            "def pairwise_sq_dists(a, b):\n"
            "    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)"
        ),
    ),
    Exercise(
        id="04.batched_matmul_shape",
        title="Batched matmul shape",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "a",
        options={
            "a": "shape (3, 6, 4, 5)",
            "b": "shape (3, 4, 5)",
            "c": "shape (18, 4, 5)",
            "d": "an error, because the batch dimensions differ",
        },
        explanations={
            "b": "The batch dimensions are not dropped: (3, 1) and (6,) broadcast to (3, 6).",
            "c": "Batch dimensions broadcast, they are not merged: the result keeps (3, 6) as two "
            "dimensions.",
            "d": "Batch dimensions follow the broadcasting rules: (3, 1) and (6,) broadcast to "
            "(3, 6).",
        },
        hints=(
            "Split each shape into batch dimensions and the last two (the matrices).",
            "Matrices: (4, 2) @ (2, 5) gives (4, 5). Batch: (3, 1) and (6,) broadcast by the "
            "usual rules.",
            "batch (3, 6) followed by the matrix (4, 5): answer = 'a'",
        ),
        solution='answer = "a"',
    ),
    Exercise(
        id="04.gram",
        task_says={
            "It must work for a single 2-D matrix and for a batch": (
                "check:cases (a 2-D matrix and batches)"
            ),
        },
        title="Gram matrices for a batch",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _gram,
        cases=_gram_cases,
        hints=(
            "Each matrix (N, D) times its transpose (D, N) gives (N, N). Which transpose swaps "
            "only the last two dimensions?",
            "x.T reverses every dimension of a batch; x.mT (or x.transpose(-2, -1)) swaps the "
            "last two only.",
            "return x @ x.mT",
        ),
        solution="def gram(x):\n    return x @ x.mT",
    ),
    # the two quiz widgets in the lesson
    Exercise(
        id="04.quiz_linear_layer",
        title="Shape of a linear layer's output",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "(32, 10)",
            "b": "(32, 5)",
            "c": "(5, 32)",
            "d": "an error",
        },
        explanations={
            "a": "W.mT has shape (10, 5), so the 10 features are summed away.",
            "c": "The batch dimension of x (32) stays in front: (32, 10) @ (10, 5) -> (32, 5).",
            "d": "W.mT is (10, 5), so the inner sizes match (10 and 10), and b of shape (5,) "
            "broadcasts over the 32 rows.",
        },
        hints=(
            "W.mT has shape (10, 5). Work out x @ W.mT first, then add b.",
            "(32, 10) @ (10, 5) gives (32, 5); (5,) broadcasts as (1, 5).",
            '"b"',
        ),
        solution='check("04.quiz_linear_layer", "b")',
    ),
    Exercise(
        id="04.quiz_batched_shape",
        title="Shape of a batch times one matrix",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "(8, 3, 2)",
            "b": "(4, 2)",
            "c": "(8, 4, 2)",
            "d": "an error: q has no batch dimension",
        },
        explanations={
            "a": "The matrices are the last two dimensions of p, (4, 3), and (4, 3) @ (3, 2) "
            "gives (4, 2).",
            "b": "The batch dimension 8 of p is kept: the same q multiplies each of the 8 "
            "matrices.",
            "d": "A missing batch dimension counts as size 1 and broadcasts, as in any broadcast.",
        },
        hints=(
            "The last two dimensions are the matrices: (4, 3) @ (3, 2).",
            "q has no batch dimension; it is reused for each of p's 8 matrices.",
            '"c"',
        ),
        solution='check("04.quiz_batched_shape", "c")',
    ),
    # Check yourself
    Exercise(
        id="04.quiz_cannot_broadcast",
        title="Which pair does not broadcast?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "(5, 4) and (4,)",
            "b": "(5, 4) and (5,)",
            "c": "(5, 1) and (1, 4)",
            "d": "(3, 1, 4) and (2, 4)",
        },
        explanations={
            "a": "Aligned from the right, 4 meets 4 and the missing dimension counts as 1: "
            "result (5, 4).",
            "c": "Each 1 stretches: result (5, 4).",
            "d": "(2, 4) becomes (1, 2, 4); 3 and 1, 1 and 2, 4 and 4 all fit: result (3, 2, 4).",
        },
        hints=(
            "Align each pair from the right and compare the last sizes first.",
            "For (5, 4) and (5,), the (5,) lines up with the 4, not with the 5.",
            '"b"',
        ),
        solution='check("04.quiz_cannot_broadcast", "b")',
    ),
    Exercise(
        id="04.quiz_keepdim_shape",
        title="Shape after sum(dim=0, keepdim=True)",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (1, 5),
        options=None,
        hints=(
            "Dimension 0 (size 6) is summed away.",
            "keepdim=True keeps it in place with size 1.",
            "(1, 5)",
        ),
        solution='check("04.quiz_keepdim_shape", (1, 5))',
    ),
    Exercise(
        id="04.quiz_matvec_shape",
        title="Shape of a batch of matrices times a vector",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (7, 2),
        options=None,
        hints=(
            "Each of the 7 matrices (2, 3) is multiplied by the vector (3,).",
            "A vector on the right acts as a column (3, 1), and that added dimension is "
            "removed from the result: (2, 3) @ (3,) gives (2,).",
            "(7, 2)",
        ),
        solution='check("04.quiz_matvec_shape", (7, 2))',
    ),
    Exercise(
        id="04.mm_batch_error",
        title="Which error: torch.mm on a batch",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        explanations={
            "ValueError": "Not a ValueError: run the cell and read the first word of the "
            "last line ('self must be a matrix' comes after the class you are looking for).",
            "IndexError": "No dimension index is out of range here: torch.mm refuses the 3-D "
            "input itself ('self must be a matrix'). Which class does PyTorch use for most "
            "shape errors?",
            "TypeError": "The arguments are tensors, the type torch.mm wants; it is their number "
            "of dimensions it refuses. Which class does PyTorch use for most shape errors?",
        },
        hints=(
            "Unlike @, torch.mm neither broadcasts nor accepts batches: it takes exactly two "
            "2-D matrices.",
            "The error comes from PyTorch's C++ shape checks; which error class did the other "
            "shape errors of this lesson raise?",
            "It is the same class as a failed broadcast: the generic error PyTorch raises from "
            "its C++ checks.",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="04.expand_write_refused",
        title="Which write into an expanded tensor is refused?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "e[0, 0] = 5.0",
            "b": "e[0] = torch.ones(3)",
            "c": "e[:, 0] = 5.0",
            "d": "e.fill_(0.0)",
        },
        explanations={
            "a": "One element is one memory location: accepted, and every row shows the change.",
            "b": "The three elements of a row sit in three different locations: accepted.",
            "d": "fill_ is accepted on an expanded tensor; it writes the shared memory.",
        },
        hints=(
            "Assignment copies the value into each element it writes (copy_), and copy_ and "
            "in-place arithmetic refuse when several of those elements share one memory "
            "location; fill_ does not check.",
            "Which of the four writes touches several elements that are stored in one place?",
            "The elements of a column of e are all the same element of the original tensor.",
        ),
        solution='check("04.expand_write_refused", "c")',
    ),
]
