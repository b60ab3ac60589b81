"""Checked exercises for lesson 02: dtypes (defaults, promotion, memory, precision) and devices."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Exercise

LESSON = "02_dtype_and_device"


def _megabytes(t):
    return t.numel() * t.element_size() / 1e6


def _megabytes_cases(g):
    return [
        (torch.randn(100, 50, generator=g),),
        (torch.randn(10, 10, generator=g).double(),),
        (torch.randint(0, 100, (3, 7), generator=g, dtype=torch.int8),),
        (torch.randn(4, 6, generator=g).half(),),
        (torch.zeros(0, 4),),
        # a view: its storage holds 40 floats, the view only 10 of them
        (torch.randn(40, generator=g)[::4],),
        (torch.randn(6, 8, generator=g)[:2, 1:],),
    ]


def _mean_of_counts(counts):
    return counts.float().mean()


def _mean_of_counts_cases(g):
    return [
        (torch.randint(0, 10, (6,), generator=g),),
        (torch.randint(-5, 5, (2, 3), generator=g),),
        (torch.tensor([7]),),
        (torch.zeros(0, dtype=torch.int64),),
    ]


def _match(values, reference):
    return values.to(reference)


def _match_cases(g):
    return [
        (torch.randint(0, 10, (4,), generator=g), torch.randn(3, generator=g)),
        (torch.randn(2, 3, generator=g).double(), torch.randn(5, generator=g).half()),
        (torch.randn(3, generator=g), torch.randint(0, 5, (2,), generator=g)),
        (torch.zeros(0), torch.zeros(2, dtype=torch.float64)),
        # A reference on the "meta" device (shapes and dtypes, no data) stands in for a GPU
        # tensor, so an answer that ignores the device fails on CPU-only machines too.
        (torch.randn(3, generator=g), torch.zeros(2, device="meta")),
    ]


EXERCISES = [
    # --- quick questions in the lesson notebook ---
    Exercise(
        id="02.quiz_promotion",
        title="int64 tensor plus a Python float",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "int64", "b": "float32", "c": "float64"},
        explanations={
            "a": "0.5 cannot be stored in an integer, so the result must be a float type.",
            "c": "A Python float makes the result a float, and the float dtype PyTorch picks "
            "is its default, float32 (Python's own float is 64-bit, but that is not used).",
        },
        hints=(
            "Can an int64 tensor hold 0.5?",
            "Look at torch.result_type(ints, 2.5) in the type promotion section.",
            "The result is PyTorch's default float dtype: 'b'.",
        ),
        solution='check("02.quiz_promotion", "b")',
    ),
    Exercise(
        id="02.quiz_float16_bytes",
        title="Memory of a 1000×1000 float16 tensor",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "1 MB", "b": "2 MB", "c": "4 MB"},
        explanations={
            "a": "1 MB would be 1 byte per element (int8 or bool); float16 uses 2.",
            "c": "4 MB is float32 (4 bytes per element); float16 uses half of that.",
        },
        hints=(
            "Memory = numel() × element_size().",
            "numel() is 1,000,000; how many bytes per float16 element?",
            "1,000,000 × 2 bytes = 2 MB: 'b'.",
        ),
        solution='check("02.quiz_float16_bytes", "b")',
    ),
    Exercise(
        id="02.quiz_label_dtype",
        title="Class labels for cross_entropy",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "torch.tensor([0., 2., 1., 0.])",
            "b": "torch.tensor([0, 2, 1, 0])",
            "c": "torch.tensor([0, 2, 1, 0]).half()",
        },
        explanations={
            "a": "float32 class indices are rejected. torch 2.13 and 2.14 say RuntimeError: "
            "expected target dtype to be Long or Byte, but got Float (on the CPU; CUDA should "
            "say the same, read in PyTorch's source, not run). torch 2.11 says expected scalar "
            "type Long but found Float on the CPU and raises NotImplementedError "
            "(\"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Float') "
            "on CUDA.",
            "c": ".half() makes float16 labels, which are rejected like float32 ones.",
        },
        hints=(
            "A target of shape (N,) holds class indices. On the CPU and on CUDA, "
            "cross_entropy takes them as int64 (torch.long), the usual dtype, or as uint8 "
            "(torch.uint8), which holds only 0 to 255. What dtype does each option make?",
            "Which option gives int64, the dtype torch.tensor picks for Python ints?",
            "Only one option is made from Python ints and left unconverted; that one is int64.",
        ),
        solution='check("02.quiz_label_dtype", "b")',
    ),
    # --- exercises in solutions/02_dtype_and_device.ipynb ---
    Exercise(
        id="02.predict_promotion",
        task_says={
            "Without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Predict a promoted dtype",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: torch.float32,
        options=None,
        hints=(
            "A Python float changes the kind of the result (integer → float), not its precision.",
            "When a Python float turns integers into floats, which float dtype does PyTorch pick?",
            "PyTorch's default float dtype: torch.float32.",
        ),
        solution="answer = torch.float32",
    ),
    Exercise(
        id="02.megabytes",
        task_says={
            "It must work for any dtype and for empty tensors": (
                "check:cases (float32, float64, int8, float16, an empty tensor, views)"
            ),
        },
        title="Megabytes of a tensor's data",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _megabytes,
        cases=_megabytes_cases,
        hints=(
            "Count the elements, then multiply by the bytes each one takes.",
            "t.numel() counts elements; t.element_size() gives bytes per element; "
            "1 MB is 1e6 bytes.",
            "Multiply the element count by the bytes per element and divide by 1e6; do not "
            "ask the storage (a view's storage may hold more elements than the view).",
        ),
        solution="def megabytes(t):\n    return t.numel() * t.element_size() / 1e6",
    ),
    Exercise(
        id="02.float16_underflow",
        task_says={
            "Without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="A tiny number in float16",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "1e-08", "b": "0.0", "c": "inf", "d": "nan"},
        explanations={
            "a": "float16 cannot represent a number that small; it rounds to the nearest "
            "value it has.",
            "c": "inf is what a too-large value becomes (overflow); a too-small one underflows.",
            "d": "Converting a finite number never gives nan.",
        },
        hints=(
            "Is 1e-8 too big or too small for float16?",
            "The lesson's optional part found float16's smallest positive number with "
            "torch.nextafter: about 6e-08. A value less than half of it has no float16 neighbour "
            "closer than 0.",
            "It underflows to 0.0: 'b'.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="02.mean_of_counts",
        title="Fix: the mean of integer counts",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _mean_of_counts,
        cases=_mean_of_counts_cases,
        hints=(
            "Read the error: mean() wants a floating point input.",
            "Convert the counts to float32 before taking the mean.",
            "Cast the counts with the short method for float32, then take the mean of the result.",
        ),
        solution="def mean_of_counts(counts):\n    return counts.float().mean()",
    ),
    Exercise(
        id="02.dtype_string_error",
        title="Which error: a dtype given as a string",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: TypeError,
        explanations={
            "RuntimeError": 'RuntimeError is what x.to("float16") raised in the lesson, because '
            ".to reads a string as a device name. The dtype= argument of torch.zeros accepts "
            "only a torch.dtype.",
        },
        hints=(
            "The dtype= argument wants a torch.dtype object; here it gets a str.",
            "Python raises a particular error class when an argument has the wrong type.",
            "It is a TypeError.",
        ),
        solution="answer = TypeError",
    ),
    Exercise(
        id="02.match_like",
        forbid=("named:device|dtype",),
        task_says={
            "the dtype and the device of reference": (
                "check:cases (references of other dtypes, one on the meta device)"
            ),
            "keep the shape of values": "check:value (the output's shape is compared)",
            "Do not name any device or dtype in your code": "check:named:device|dtype",
        },
        title="Match another tensor's dtype and device",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _match,
        cases=_match_cases,
        hints=(
            "Use .to(...) with both the dtype and the device of `reference`.",
            "values.to(device=reference.device, dtype=reference.dtype) works; "
            "so does a one-argument form of .to.",
            "Tensor.to also accepts another tensor: it then takes that tensor's dtype and device "
            "in one call. Return the converted values.",
        ),
        solution="def match_like(values, reference):\n    return values.to(reference)",
    ),
    Exercise(
        id="02.int_labels",
        title="Fix: labels ready for cross_entropy",
        lesson=LESSON,
        kind="value",
        build_reference=lambda: torch.tensor([2, 0, 1, 1]),
        hints=(
            "The labels are class indices, so cross_entropy wants them as int64.",
            "A float tensor becomes int64 with .to(torch.int64) or its shortcut.",
            ".long() is the shortcut for .to(torch.int64); apply it to raw_labels.",
        ),
        solution="labels = raw_labels.long()",
    ),
    Exercise(
        id="02.uint8_wrap",
        task_says={
            "Without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Predict a uint8 difference",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: 246,
        options=None,
        reveal_values=False,
        hints=(
            "uint8 holds only the integers from 0 to 255, and PyTorch neither widens the dtype "
            "of a uint8 - uint8 result nor warns when it does not fit.",
            "The true difference, -10, is below 0: the result wraps around, like a counter "
            "that goes below 0 and starts again from 255.",
            "Wrapping means adding 256 (the number of values uint8 has) until the number is "
            "in range; answer with that Python int.",
        ),
        solution="answer = 246",
    ),
]
