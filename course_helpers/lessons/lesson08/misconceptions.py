"""Typical wrong answers to lesson 08's exercises (in-place operations)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _clip_then_scale(x):
    return torch.clamp(x, max=1.0) * 2


def _scale_and_clip_min(x):
    return (x * 2).clamp(min=1.0)


def _sgd_step(mistake: str):
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    x = torch.tensor([2.0, 1.0])
    y = torch.tensor([3.0, 0.0])
    ((w * x - y) ** 2).sum().backward()
    with torch.no_grad():
        if mistake == "new tensor":
            w = w - 0.1 * w.grad
        elif mistake == "new leaf":
            w = (w - 0.1 * w.grad).requires_grad_()
        else:
            w += 0.1 * w.grad
    return w


def _relu_fix(mistake: str):
    a = torch.tensor([-0.5, 0.2, 1.5], requires_grad=True)
    h = torch.tanh(a)
    if mistake == "clamp max":
        h = h.clamp(max=0.0)
    loss = (h**2).sum()
    loss.backward()
    return a


def _scale_and_clip_in_place(x):
    return x.mul_(2).clamp_(max=1.0)


MISCONCEPTIONS = [
    # --- 08.quiz_version ---
    Misconception(
        exercise_id="08.quiz_version",
        label="only changes through the view",
        build_answer=lambda: 1,
        message=(
            "a view shares more than its base's memory: it shares the version counter too, so "
            "an in-place change made through the base counts for the view as well."
        ),
    ),
    Misconception(
        exercise_id="08.quiz_version",
        label="slicing counted as a change",
        build_answer=lambda: 3,
        message=(
            "taking a slice reads memory, it writes nothing: only in-place writes raise the "
            "version counter."
        ),
    ),
    # --- 08.version_predict ---
    Misconception(
        exercise_id="08.version_predict",
        label="u's change counted for t",
        build_answer=lambda: 3,
        message=(
            "u is a new tensor with its own memory and its own counter (multiplying makes a "
            "copy, not a view), so u.add_ does not touch t's counter."
        ),
    ),
    Misconception(
        exercise_id="08.version_predict",
        label="slice assignment not counted",
        build_answer=lambda: 1,
        message=(
            "assigning into a slice, t[1:] = 0, writes into t's memory in place, so it raises "
            "t's version just like a method ending in _ does."
        ),
    ),
    Misconception(
        exercise_id="08.version_predict",
        label="every line counted",
        build_answer=lambda: 4,
        message=(
            "only in-place writes into t's memory count. Building a new tensor from t reads t "
            "and leaves its counter alone, and changes to that new tensor are its own."
        ),
    ),
    # --- 08.version_getitem ---
    Misconception(
        exercise_id="08.version_getitem",
        label="t[0] += 1 as one write",
        build_answer=lambda: 2,
        message=(
            "t[0] += 1 is not one write. Python runs it as: take the view t[0], add to it in "
            "place, then assign the result back into t[0] (a setitem, which writes again)."
        ),
    ),
    Misconception(
        exercise_id="08.version_getitem",
        label="only methods ending in _ count",
        build_answer=lambda: 1,
        message=(
            "indexing writes count too: an augmented assignment on an element adds in place "
            "and then writes the element back, and every write raises the shared counter."
        ),
    ),
    # --- 08.copyslices_grad ---
    Misconception(
        exercise_id="08.copyslices_grad",
        label="the weight of h[1] forgotten",
        build_answer=lambda: 6.0,
        message=(
            "that is the derivative of b * b alone. The loss multiplies h[1] by its weight in "
            "the weight vector before summing, and the chain rule keeps that factor."
        ),
    ),
    Misconception(
        exercise_id="08.copyslices_grad",
        label="the in-place write blocks the gradient",
        build_answer=lambda: 0.0,
        message=(
            "writing into h is recorded by autograd (as CopySlices), so h requires grad after "
            "it and the gradient reaches b through the written element."
        ),
    ),
    Misconception(
        exercise_id="08.copyslices_grad",
        label="the loss value",
        build_answer=lambda: 22.0,
        message=(
            "that is the value of the loss, not its derivative. Write the loss as a function of "
            "b and differentiate it."
        ),
    ),
    # --- 08.out_of_place ---
    Misconception(
        exercise_id="08.out_of_place",
        label="clipped before scaling",
        build_answer=lambda: _clip_then_scale,
        message=(
            "The order changed: clipping first and scaling afterwards can give values up to "
            "twice the limit. Keep the original order, scale first, then clip."
        ),
    ),
    Misconception(
        exercise_id="08.out_of_place",
        label="min instead of max",
        build_answer=lambda: _scale_and_clip_min,
        message=(
            "clamp(min=...) raises small values up to the bound; the original clips large "
            "values down to it, which is clamp's max."
        ),
    ),
    # --- 08.sgd_step ---
    Misconception(
        exercise_id="08.sgd_step",
        label="w rebound to a new tensor",
        build_answer=lambda: _sgd_step("new tensor"),
        message=(
            "w = w - ... makes a new tensor and gives it the name w; the parameter itself is "
            "unchanged, and the new tensor (made under no_grad) does not require grad. Update "
            "the existing tensor in place."
        ),
    ),
    Misconception(
        exercise_id="08.sgd_step",
        label="new leaf, or a write through .data",
        build_answer=lambda: _sgd_step("new leaf"),
        message=(
            "The values are right, but no in-place update of w was recorded. Either they sit "
            "in a new leaf (an optimizer or model holding the original w would never see "
            "them), or they were written through .data, which hides the change from "
            "autograd's version counter. Change the existing tensor in place, under "
            "torch.no_grad()."
        ),
    ),
    Misconception(
        exercise_id="08.sgd_step",
        label="step up the gradient",
        build_answer=lambda: _sgd_step("ascent"),
        message=(
            "Adding the gradient moves w uphill, toward a larger loss. Gradient descent steps "
            "against the gradient."
        ),
    ),
    # --- 08.relu_fix ---
    Misconception(
        exercise_id="08.relu_fix",
        label="zeroing dropped",
        build_answer=lambda: _relu_fix("none"),
        message=(
            "backward works now, but the loss is not the same: the negative activation was "
            "not zeroed, so it still contributes a gradient. Zero it with an out-of-place "
            "operation."
        ),
    ),
    Misconception(
        exercise_id="08.relu_fix",
        label="clamp(max=0)",
        build_answer=lambda: _relu_fix("clamp max"),
        message=(
            "clamp(max=0) keeps the negatives and zeroes the positives, the opposite of the "
            "original line. The bound that removes negatives is a lower bound."
        ),
    ),
]

# wrong functions that raise, or that change their input in place
MISCONCEPTIONS += [
    Misconception(
        exercise_id="08.out_of_place",
        label="mul_ and clamp_ on the input",
        build_answer=lambda: _scale_and_clip_in_place,
        message=(
            "mul_ and clamp_ change the tensor you were given: the result is right, but the "
            "caller's input is overwritten. Use mul and clamp (no underscore), which return "
            "new tensors."
        ),
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="08.quiz_version",
        label="a slice is a new tensor",
        build_answer=lambda: 0,
        message=(
            "a basic slice is a view, not a copy: it starts from its base's counter and "
            "shares it afterwards, so in-place writes through either tensor count for both."
        ),
    ),
    Misconception(
        exercise_id="08.version_getitem",
        label="reading t[0] counted as a write",
        build_answer=lambda: 4,
        message=(
            "taking the view t[0] only reads: it makes a new view and writes nothing. Count "
            "only the in-place writes into t's memory."
        ),
    ),
    Misconception(
        exercise_id="08.inplace_dtype",
        label="no error: the dtype changes",
        build_answer=lambda: None,
        message=(
            "An in-place operation never changes a tensor's dtype: it must write its result "
            "into the memory counts already has, as int64. The float result cannot be stored "
            "there, and PyTorch refuses instead of silently rounding it."
        ),
    ),
]


def _relu_without_tanh():
    a = torch.tensor([-0.5, 0.2, 1.5], requires_grad=True)
    h = torch.relu(a)
    (h**2).sum().backward()
    return a


MISCONCEPTIONS += [
    Misconception(
        exercise_id="08.relu_fix",
        label="relu of a instead of tanh's output",
        build_answer=_relu_without_tanh,
        message=(
            "torch.relu(a) zeroes the negatives of a itself and drops the tanh. The fix must "
            "keep tanh and make a new tensor from its output with the negatives set to 0."
        ),
    ),
    # --- 08.silent_downcast ---
    Misconception(
        exercise_id="08.silent_downcast",
        label="in place widens the dtype",
        build_answer=lambda: 3000000000,
        message=(
            "an in-place operation writes into the tensor's existing memory, so total stays "
            "int32 whatever the other operand's dtype; think about what int32 can hold."
        ),
    ),
    Misconception(
        exercise_id="08.silent_downcast",
        label="the cast saturates",
        build_answer=lambda: 2147483647,
        message=(
            "the cast down does not stop at the largest int32: an integer that does not fit "
            "wraps around, keeping only its value modulo 2**32."
        ),
    ),
    Misconception(
        exercise_id="08.silent_downcast",
        label="a value that does not fit becomes zero",
        build_answer=lambda: 0,
        message=(
            "a value that does not fit is not replaced by zero. In the lesson 2**40 became 0 "
            "only because it is a multiple of 2**32: the cast keeps the value modulo 2**32."
        ),
    ),
]
