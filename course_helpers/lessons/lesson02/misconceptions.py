"""Typical wrong answers to lesson 02's exercises (dtype and device)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _megabytes_mebibytes(t):
    return t.numel() * t.element_size() / 2**20


def _megabytes_elements_only(t):
    return t.numel() / 1e6


def _megabytes_float32_bytes(t):
    return t.numel() * 4 / 1e6


def _mean_in_float64(counts):
    return counts.double().mean()


def _mean_as_python_float(counts):
    return counts.float().mean().item()


def _mean_over_dim0(counts):
    return counts.float().mean(dim=0)


def _match_device_only(values, reference):
    return values.to(reference.device)


def _match_dtype_only(values, reference):
    return values.to(reference.dtype)


def _match_float32_hard_coded(values, reference):
    return values.float()


def _mean_of_integers(counts):
    return counts.mean()


MISCONCEPTIONS = [
    Misconception(
        exercise_id="02.predict_promotion",
        label="the tensor's dtype wins",
        build_answer=lambda: torch.int32,
        message=(
            "the tensor's dtype does not simply win. A Python float changes the *kind* of the "
            "result (integer → floating point), because 2.5 cannot be stored in an integer."
        ),
        hint="Can an integer dtype of any width hold 2.5?",
    ),
    Misconception(
        exercise_id="02.predict_promotion",
        label="a Python float is float64",
        build_answer=lambda: torch.float64,
        message=(
            "Python's float is 64-bit, but a Python number only decides the kind of the result, "
            "not its precision. Which floating-point dtype does PyTorch use when nothing else says "
            "which one?"
        ),
        hint="Does a Python number decide the precision of the result, or only its kind?",
    ),
    Misconception(
        exercise_id="02.predict_promotion",
        label="integers default to int64",
        build_answer=lambda: torch.int64,
        message=(
            "int64 is PyTorch's default for integers, but no integer dtype of any width can hold "
            "2.5: a Python float turns the result into a floating-point dtype."
        ),
        hint="Which kind of dtype can hold 2.5 at all?",
    ),
    # --- 02.megabytes ---
    Misconception(
        exercise_id="02.megabytes",
        label="mebibytes (2**20)",
        build_answer=lambda: _megabytes_mebibytes,
        message=(
            "Your numbers are 1,000,000 / 1,048,576 of the expected ones: megabytes counted as "
            "mebibytes (MiB, 2**20 bytes). The task defines 1 MB as 1,000,000 bytes."
        ),
        hint="How many bytes does the task say one MB holds?",
    ),
    Misconception(
        exercise_id="02.megabytes",
        label="elements counted, not bytes",
        build_answer=lambda: _megabytes_elements_only,
        message=(
            "Your numbers count elements, not bytes: each element takes several bytes, and how "
            "many depends on the tensor's dtype."
        ),
        hint=(
            "How many bytes does one element of a float64 tensor take, and one of a float32 tensor?"
        ),
        cause="numel() counts elements; multiply by element_size(), the bytes one element takes.",
        evidence=("call:numel",),
    ),
    Misconception(
        exercise_id="02.megabytes",
        label="4 bytes hard-coded",
        build_answer=lambda: _megabytes_float32_bytes,
        message=(
            "Your numbers are right for float32 tensors only: they count 4 bytes per element for "
            "every dtype (a float64 element takes 8, a uint8 one 1). Ask the tensor how many bytes "
            "one of its elements takes."
        ),
        hint="Does every dtype take the same number of bytes per element?",
    ),
    # --- 02.mean_of_counts ---
    Misconception(
        exercise_id="02.mean_of_counts",
        label="converted to float64",
        build_answer=lambda: _mean_in_float64,
        message=(
            "Your mean is float64: any floating-point dtype makes the mean work, but the task asks "
            "for a float32 result."
        ),
        hint="Which floating-point dtype does the task ask the mean to have?",
        cause=".double() gives float64; the float32 shortcut is .float().",
        evidence=("call:double",),
    ),
    Misconception(
        exercise_id="02.mean_of_counts",
        label=".item() returns a Python float",
        build_answer=lambda: _mean_as_python_float,
        message=(
            "Your function returns the mean as a number outside torch (a Python number or a "
            "NumPy value), not as a tensor: the task asks for a scalar tensor (0-d, float32). "
            "Leave the mean a tensor."
        ),
        hint="Is the value your function returns still a tensor?",
        cause=(
            ".item() turns the mean into a plain Python number: leave the result of the mean as it "
            "is."
        ),
        evidence=("call:item",),
    ),
    Misconception(
        exercise_id="02.mean_of_counts",
        label="mean over dim 0 only",
        build_answer=lambda: _mean_over_dim0,
        message=(
            "For a 2-D input your function returns one mean per column, not one number: the mean "
            "of all counts averages over every dimension at once."
        ),
        hint="How many numbers should the mean of a whole 2-D tensor of counts be?",
        cause=(
            "A mean over dim 0 averages only down the first dimension. The mean of all counts "
            "needs no dim at all."
        ),
        evidence=("call:mean",),
    ),
    # --- 02.dtype_string_error ---
    Misconception(
        exercise_id="02.dtype_string_error",
        label="a bad value",
        build_answer=lambda: ValueError,
        message=(
            "'float32' is not a bad value of the right type: dtype= needs a torch.dtype object and "
            "gets a str, a different type altogether. Python has its own error class for an "
            "argument of the wrong type."
        ),
        hint="Is the problem the value of the argument, or its type?",
    ),
    Misconception(
        exercise_id="02.dtype_string_error",
        label="no such attribute",
        build_answer=lambda: AttributeError,
        message=(
            "No attribute is looked up on the string: torch.zeros checks what kind of object its "
            "dtype= argument is, and rejects a str."
        ),
        hint="Does anything in this line look up an attribute on the string?",
    ),
    # --- 02.match_like ---
    Misconception(
        exercise_id="02.match_like",
        label="device only",
        build_answer=lambda: _match_device_only,
        message=(
            "Your result has reference's device but keeps values' own dtype. The task asks for "
            "both: the dtype and the device of reference."
        ),
        hint="Besides the device, what else of reference must the result take on?",
    ),
    Misconception(
        exercise_id="02.match_like",
        label="dtype only",
        build_answer=lambda: _match_dtype_only,
        message=(
            "Your result has reference's dtype, but it stays on values' own device. On a GPU "
            "machine the reference can live on the GPU: take its device as well."
        ),
        hint="Besides the dtype, what else of reference must the result take on?",
    ),
    Misconception(
        exercise_id="02.match_like",
        label="float32 hard-coded",
        build_answer=lambda: _match_float32_hard_coded,
        message=(
            "Your result is float32 on values' own device, whatever reference is. Read the dtype "
            "and the device from reference instead of naming them."
        ),
        hint="Where should the dtype and the device of the result come from?",
        cause=".float() always gives float32 on the tensor's own device.",
        evidence=("call:float",),
    ),
    # --- 02.int_labels ---
    Misconception(
        exercise_id="02.int_labels",
        label=".int() is int32",
        build_answer=lambda: torch.tensor([2.0, 0.0, 1.0, 1.0]).int(),
        message=(
            "Your labels are int32. Class indices for cross entropy are 64-bit integers (int64)."
        ),
        hint="Which integer dtype, of which width, does the loss want for class indices?",
        cause=(
            ".int() converts to int32 (the shortcut names follow C's int, which is 32-bit); the "
            "int64 shortcut is .long()."
        ),
        evidence=("call:int",),
    ),
    Misconception(
        exercise_id="02.int_labels",
        label="labels left as floats",
        build_answer=lambda: torch.tensor([2.0, 0.0, 1.0, 1.0]),
        message=(
            "The values are right but they are still floats. Cross entropy reads a float target of "
            "the same shape as the logits as class probabilities, and refuses a float target of "
            "any other shape: class indices must be an integer tensor."
        ),
        hint="Which kind of dtype do class indices need?",
    ),
    # --- 02.uint8_wrap ---
    Misconception(
        exercise_id="02.uint8_wrap",
        label="the true difference",
        build_answer=lambda: -10,
        message=(
            "that is the difference of the numbers, but a uint8 tensor cannot hold a negative "
            "value and the result stays uint8: it wraps around instead."
        ),
        hint=(
            "Can a uint8 tensor hold a negative number, and what happens to one that falls below 0?"
        ),
    ),
]

# wrong functions that raise, or that change their input in place
MISCONCEPTIONS += [
    Misconception(
        exercise_id="02.mean_of_counts",
        label="mean() of an integer tensor",
        build_answer=lambda: _mean_of_integers,
        message=(
            "Your function stops with an error: a mean of an integer tensor is refused, since an "
            "average of whole numbers is usually a fraction and PyTorch will not guess which "
            "floating-point dtype you want. Convert the counts to a floating-point dtype before "
            "you average them."
        ),
        hint="Which dtype must the counts have before they can be averaged?",
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="02.int_labels",
        label="one-hot rows instead of indices",
        build_answer=lambda: torch.nn.functional.one_hot(torch.tensor([2, 0, 1, 1]), 3),
        message=(
            "Your labels are one-hot rows, one column per class. Cross entropy takes the class "
            "indices themselves, one number per sample, and does the one-hot bookkeeping "
            "internally: only the dtype of raw_labels needs to change, not its shape."
        ),
        hint="How many numbers per sample does a class index take?",
    ),
    Misconception(
        exercise_id="02.uint8_wrap",
        label="stops at zero",
        build_answer=lambda: 0,
        message=(
            "integer tensors do not saturate (stop at the smallest value) the way some image "
            "libraries do: a uint8 result that falls below 0 wraps around to the top of the range."
        ),
        hint="What happens to a uint8 result that falls below 0: does it stop, or go round?",
    ),
    Misconception(
        exercise_id="02.uint8_wrap",
        label="the sign is dropped",
        build_answer=lambda: 10,
        message=(
            "an unsigned dtype does not take the absolute value: the subtraction is done in "
            "uint8's arithmetic modulo 256, so a negative result wraps around to a large number."
        ),
        hint="In arithmetic modulo 256, which number stands for -1?",
    ),
    Misconception(
        exercise_id="02.uint8_wrap",
        label="wrapped by 255",
        build_answer=lambda: 245,
        message=(
            "one off: wrapping adds 256 (the number of values uint8 holds), not 255, the largest "
            "value. Check with a small case: -1 must become the largest uint8 value."
        ),
        hint="How many different values does uint8 hold: 255 or 256?",
    ),
]
