"""Checked exercises for lesson 01: tensors (creation, indexing, arithmetic, NumPy bridge)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Exercise

LESSON = "01_tensors"


def _every_other_column(x):
    return x[:, ::2]


def _every_other_column_cases(g):
    return [
        (torch.randn(3, 5, generator=g),),
        (torch.randint(0, 10, (4, 6), generator=g),),
        (torch.randn(2, 1, generator=g),),
        (torch.randn(0, 4, generator=g),),
    ]


def _celsius_to_fahrenheit(celsius):
    return celsius * 9 / 5 + 32


def _celsius_cases(g):
    return [
        (torch.randn(5, generator=g) * 20,),
        (torch.randn(2, 3, generator=g) * 20,),
        (torch.tensor([-40.0, 0.0, 100.0]),),
        (torch.zeros(0),),
    ]


EXERCISES = [
    # --- quick questions in the lesson notebook ---
    Exercise(
        id="01.quiz_numel",
        title="How many elements in a 4×5 tensor",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "9", "b": "20", "c": "2"},
        explanations={
            "a": "9 is 4 + 5; numel() multiplies the sizes instead of adding them.",
            "c": "2 is ndim, the number of dimensions; numel() counts elements.",
        },
        hints=(
            "numel() counts every element: picture 4 rows of 5 numbers.",
            "Multiply the sizes in the shape.",
            "4 × 5 = 20: the answer is 'b'.",
        ),
        solution='check("01.quiz_numel", "b")',
    ),
    Exercise(
        id="01.quiz_from_numpy",
        title="torch.from_numpy shares memory",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "tensor(1., dtype=torch.float64)",
            "b": "tensor(-1., dtype=torch.float64)",
            "c": "an error",
        },
        explanations={
            "a": "That would be true for torch.tensor(arr), which copies; "
            "torch.from_numpy uses the array's own memory.",
            "c": "Changing a NumPy array that a tensor shares is allowed; "
            "the tensor simply sees the new value.",
        },
        hints=(
            "Does torch.from_numpy copy the numbers, or use the array's memory?",
            "Look at the `shared` tensor in the NumPy bridge section.",
            "from_numpy shares memory, so t[1] shows the new value -1: 'b'.",
        ),
        solution='check("01.quiz_from_numpy", "b")',
    ),
    Exercise(
        id="01.quiz_item",
        title="Where .item() belongs",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "in the formula for the loss, so the loss is a plain number",
            "b": "only where the value is printed or recorded",
            "c": "before backward(), so that backward runs faster",
        },
        explanations={
            "a": "A Python number has left PyTorch: autograd cannot follow it, "
            "so no gradient would flow.",
            "c": ".item() does not speed anything up; on a GPU it even makes the "
            "program wait for the result.",
        },
        hints=(
            "What can autograd still see after .item() has turned a tensor into a float?",
            ".item() gives a plain Python float with no history.",
            "Use it for logging only: 'b'.",
        ),
        solution='check("01.quiz_item", "b")',
    ),
    # --- exercises in solutions/01_tensors.ipynb ---
    Exercise(
        id="01.arange_grid",
        task_says={
            "without typing the numbers": "check:call:arange",
        },
        title="A 3×4 grid of 0..11",
        lesson=LESSON,
        kind="value",
        build_reference=lambda: torch.arange(12).reshape(3, 4),
        hints=(
            "Which function makes the numbers 0, 1, ..., 11?",
            "torch.arange(12) gives 12 numbers in a row; now give them 3 rows of 4.",
            "Make the 12 numbers with torch.arange, then call .reshape on the result with the "
            "number of rows and of columns.",
        ),
        require=("call:arange",),
        solution="answer = torch.arange(12).reshape(3, 4)",
    ),
    Exercise(
        id="01.linspace_points",
        title="Five evenly spaced points from -1 to 1",
        lesson=LESSON,
        kind="value",
        build_reference=lambda: torch.linspace(-1, 1, 5),
        hints=(
            "You know how many points you want and both ends must be included.",
            "torch.linspace(start, end, steps) includes both ends; arange would miss the end.",
            "torch.linspace(-1, 1, 5)",
        ),
        solution="points = torch.linspace(-1, 1, 5)",
    ),
    Exercise(
        id="01.every_other_column",
        task_says={
            "Keep every other column": "check:value (the columns returned are compared)",
            "it must also work for a single column and for a tensor with no rows": (
                "check:cases (a 2×1 and a 0×4 input)"
            ),
        },
        title="Keep every other column",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _every_other_column,
        cases=_every_other_column_cases,
        hints=(
            "Keep all rows; in the column dimension, take a step of 2.",
            "A slice start:stop:step works in each dimension; `:` alone means all rows.",
            "Index with two slices separated by a comma: all of dim 0, then dim 1 from the start "
            "to the end in steps of 2.",
        ),
        solution="def every_other_column(x):\n    return x[:, ::2]",
    ),
    Exercise(
        id="01.celsius_to_fahrenheit",
        forbid=("loop:python",),
        task_says={
            "using F = C × 9/5 + 32": "check:value (the numbers of that formula are compared)",
            "No Python loop": "check:loop:python",
            "one line of tensor arithmetic does it": (
                "advice: a remark on the size of the answer; any vectorised form passes"
            ),
        },
        title="Celsius to Fahrenheit, element-wise",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _celsius_to_fahrenheit,
        cases=_celsius_cases,
        hints=(
            "The formula is F = C × 9/5 + 32, applied to every element.",
            "Arithmetic with a Python number applies it to every element; no loop is needed.",
            "Multiply the whole tensor by 9/5, add 32, and return the result: one line, no loop.",
        ),
        solution="def celsius_to_fahrenheit(celsius):\n    return celsius * 9 / 5 + 32",
    ),
    Exercise(
        id="01.from_numpy_dtype",
        task_says={
            "Without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="The dtype torch.from_numpy keeps",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "torch.float32", "b": "torch.float64", "c": "torch.int64"},
        explanations={
            "a": "float32 is PyTorch's default for new float tensors, but from_numpy keeps "
            "the array's dtype, and NumPy's default float is float64.",
            "c": "The array holds floats (1.5, 2.5), so its dtype is a float type.",
        },
        hints=(
            "Does from_numpy convert the numbers, or use the array as it is?",
            "What is NumPy's default float dtype? Try np.array([1.5]).dtype.",
            "NumPy's default float is float64 and from_numpy keeps it: 'b'.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="01.numpy_grad_error",
        title="Which error: .numpy() on a tensor that requires grad",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        explanations={
            "TypeError": "TypeError is what .numpy() raises for a tensor that is not on the CPU; "
            "this tensor is on the CPU, but it requires grad.",
        },
        hints=(
            "The lesson's first pitfall shows exactly this call.",
            "It is not a TypeError (that one is for a tensor on the wrong device).",
            "It is a RuntimeError.",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="01.snapshot_copy",
        title="A snapshot that does not change",
        lesson=LESSON,
        kind="value",
        build_reference=lambda: torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),
        hints=(
            "The snapshot changes because it shares the array's memory.",
            "torch.from_numpy shares memory; which way of making a tensor from an array copies?",
            "torch.tensor(array) copies the numbers into new memory; "
            "torch.from_numpy(array) does not.",
        ),
        solution="snapshot = torch.tensor(data)",
    ),
    Exercise(
        id="01.mask_write",
        title="Writing through a boolean mask",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "tensor([999, 1, 2, 3, 4, 5])",
            "b": "tensor([0, 1, 2, 3, 4, 5])",
            "c": "an error",
        },
        explanations={
            "a": "That assumes g[mask] is a view of g, like a slice. Indexing with a mask "
            "builds a new tensor, so the write lands in that temporary copy.",
            "c": "Writing into the temporary tensor is allowed; nothing tells you that it is "
            "thrown away afterwards.",
        },
        hints=(
            "Is g[mask] a view of g (like a slice) or a new tensor?",
            "Boolean-mask and list indexing copy; only assigning to g[mask] itself writes into g.",
            "g[mask][0] = 999 changes element 0 of a copy of the selected elements; "
            "ask what is left in g.",
        ),
        solution='check("01.mask_write", "b")',
    ),
    Exercise(
        id="01.detach_numpy_snapshot",
        title="Is .detach().cpu().numpy() a snapshot?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "[1. 1. 1.]",
            "b": "[2. 2. 2.]",
            "c": "an error",
        },
        explanations={
            "a": "That assumes .detach() or .cpu() copies. On the CPU, .cpu() returns the same "
            "tensor and .detach() shares its memory, so the array still views the weights.",
            "c": "The tensor was detached before .numpy(), so nothing is refused; the later "
            "update under no_grad is allowed too.",
        },
        hints=(
            "Which of .detach(), .cpu() and .numpy() copies the numbers on the CPU?",
            "On the CPU none of the three copies: the array shares the weights' memory.",
            "The array views the weights, so it shows the update; a snapshot needs .copy().",
        ),
        solution='check("01.detach_numpy_snapshot", "b")',
    ),
    Exercise(
        id="01.float_compare",
        title="Compare two float results",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "only x == y",
            "b": "only torch.allclose(x, y)",
            "c": "both",
            "d": "neither",
        },
        explanations={
            "a": "== is the stricter test: whenever == holds, allclose holds too.",
            "c": "0.3 - 0.1 and 0.2 are each rounded to float32, and they do not land on the "
            "same float32 number: == compares exact values.",
            "d": "allclose allows a small difference, relative to the size of the values; "
            "float32 rounding stays far inside it.",
        },
        hints=(
            "Can 0.3, 0.1 and 0.2 be stored exactly in float32?",
            "The subtraction is rounded too, so x and y may differ in the last bits. Which of "
            "the two tests tolerates that?",
            "== asks for the very same value; torch.allclose compares within a tolerance.",
        ),
        solution='check("01.float_compare", "b")',
    ),
]
