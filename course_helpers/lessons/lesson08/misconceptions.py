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
            "a view shares more than its base's memory: it shares the version counter too, so an "
            "in-place change made through the base counts for the view as well."
        ),
        hint="Does a view have a version counter of its own, or share its base's?",
    ),
    Misconception(
        exercise_id="08.quiz_version",
        label="slicing counted as a change",
        build_answer=lambda: 3,
        message=(
            "taking a slice reads memory, it writes nothing: only in-place writes raise the "
            "version counter."
        ),
        hint="Which lines write into memory, and which only read it?",
    ),
    # --- 08.version_predict ---
    Misconception(
        exercise_id="08.version_predict",
        label="u's change counted for t",
        build_answer=lambda: 3,
        message=(
            "u is a new tensor with its own memory and its own counter (multiplying makes a copy, "
            "not a view), so u.add_ does not touch t's counter."
        ),
        hint="Does u share t's memory, or have its own?",
    ),
    Misconception(
        exercise_id="08.version_predict",
        label="slice assignment not counted",
        build_answer=lambda: 1,
        message=(
            "assigning into a slice, t[1:] = 0, writes into t's memory in place, so it raises t's "
            "version just like a method ending in _ does."
        ),
        hint="Does assigning into a slice of t write into t's memory?",
    ),
    Misconception(
        exercise_id="08.version_predict",
        label="every line counted",
        build_answer=lambda: 4,
        message=(
            "only in-place writes into t's memory count. Building a new tensor from t reads t and "
            "leaves its counter alone, and changes to that new tensor are its own."
        ),
        hint="Which of the lines write into t's own memory?",
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
        hint="Into how many steps does Python split t[0] += 1, and how many of them write?",
    ),
    Misconception(
        exercise_id="08.version_getitem",
        label="only methods ending in _ count",
        build_answer=lambda: 1,
        message=(
            "indexing writes count too: an augmented assignment on an element adds in place and "
            "then writes the element back, and every write raises the shared counter."
        ),
        hint="Is an augmented assignment on an element a write into t's memory?",
    ),
    # --- 08.copyslices_grad ---
    Misconception(
        exercise_id="08.copyslices_grad",
        label="the weight of h[1] forgotten",
        build_answer=lambda: 6.0,
        message=(
            "that is the derivative of b * b alone. The loss multiplies h[1] by its weight in the "
            "weight vector before summing, and the chain rule keeps that factor."
        ),
        hint="Which factor multiplies h[1] in the loss?",
    ),
    Misconception(
        exercise_id="08.copyslices_grad",
        label="the in-place write blocks the gradient",
        build_answer=lambda: 0.0,
        message=(
            "writing into h is recorded by autograd (as CopySlices), so h requires grad after it "
            "and the gradient reaches b through the written element."
        ),
        hint="Does autograd record a write into h, and does the gradient then reach b?",
    ),
    Misconception(
        exercise_id="08.copyslices_grad",
        label="the loss value",
        build_answer=lambda: 22.0,
        message=(
            "that is the value of the loss, not its derivative. Write the loss as a function of b "
            "and differentiate it."
        ),
        hint="The question asks for the loss or for its derivative with respect to b?",
    ),
    # --- 08.out_of_place ---
    Misconception(
        exercise_id="08.out_of_place",
        label="clipped before scaling",
        build_answer=lambda: _clip_then_scale,
        message=(
            "Your values were clipped first and scaled afterwards, so they reach up to twice the "
            "limit. Keep the original order: scale first, then clip."
        ),
        hint="In the original code, which comes first: the scaling or the clipping?",
    ),
    Misconception(
        exercise_id="08.out_of_place",
        label="min instead of max",
        build_answer=lambda: _scale_and_clip_min,
        message=(
            "Your function raises small values up to the bound, where the original clips large "
            "values down to it: the bound is an upper one."
        ),
        hint="Does the original keep values below the bound or above it?",
        cause=(
            "clamp(min=...) raises small values up to the bound; the original clips large values "
            "down to it, which is clamp's max."
        ),
        evidence=("call:clamp",),
    ),
    # --- 08.sgd_step ---
    Misconception(
        exercise_id="08.sgd_step",
        label="w rebound to a new tensor",
        build_answer=lambda: _sgd_step("new tensor"),
        message=(
            "The tensor you handed in does not require grad: it is a new tensor, made while "
            "recording was off, not the parameter itself, which is unchanged. Update the existing "
            "tensor in place."
        ),
        hint="Is the tensor you hand in still the parameter you started with?",
    ),
    Misconception(
        exercise_id="08.sgd_step",
        label="new leaf, or a write through .data",
        build_answer=lambda: _sgd_step("new leaf"),
        message=(
            "The values are right, but no in-place update of w was recorded (its version counter "
            "did not move). Either they sit in a new leaf (an optimizer or model holding the "
            "original w would never see them), or they were written behind autograd's back, which "
            "hides the change from the version counter. Change the existing tensor in place, with "
            "recording switched off."
        ),
        hint="How can the update change w itself, in place, so that its version counter moves?",
    ),
    Misconception(
        exercise_id="08.sgd_step",
        label="step up the gradient",
        build_answer=lambda: _sgd_step("ascent"),
        message=(
            "w moved uphill, toward a larger loss: the gradient was added. Gradient descent steps "
            "against the gradient."
        ),
        hint="To lower the loss, do you step along the gradient or against it?",
    ),
    # --- 08.relu_fix ---
    Misconception(
        exercise_id="08.relu_fix",
        label="zeroing dropped",
        build_answer=lambda: _relu_fix("none"),
        message=(
            "backward works now, but the loss is not the same: the negative activation was not "
            "zeroed, so it still contributes a gradient. Zero it with an out-of-place operation."
        ),
        hint="What did the original line do to the negative activations?",
    ),
    Misconception(
        exercise_id="08.relu_fix",
        label="clamp(max=0)",
        build_answer=lambda: _relu_fix("clamp max"),
        message=(
            "Your activations keep the negatives and zero the positives, the opposite of the "
            "original line. The bound that removes negatives is a lower bound."
        ),
        hint="To remove the negatives, is the bound at 0 a lower or an upper bound?",
        cause=(
            "clamp's max is an upper bound: clamp(max=0) keeps the negatives and zeroes the "
            "positives. A lower bound is clamp's min."
        ),
        evidence=("call:clamp",),
    ),
]

# wrong functions that raise, or that change their input in place
MISCONCEPTIONS += [
    Misconception(
        exercise_id="08.out_of_place",
        label="mul_ and clamp_ on the input",
        build_answer=lambda: _scale_and_clip_in_place,
        message=(
            "Your result is right, but the caller's input is overwritten: your function writes "
            "into the tensor it was given. Compute new tensors instead."
        ),
        hint="Does your function leave the tensor it was given as it was?",
        cause=(
            "mul_ and clamp_ (ending in an underscore) change the tensor you were given: use mul "
            "and clamp, which return new tensors."
        ),
        evidence=("call:mul_|clamp_",),
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="08.quiz_version",
        label="a slice is a new tensor",
        build_answer=lambda: 0,
        message=(
            "a basic slice is a view, not a copy: it starts from its base's counter and shares it "
            "afterwards, so in-place writes through either tensor count for both."
        ),
        hint="Is a basic slice a view or a copy, and what does a view share with its base?",
    ),
    Misconception(
        exercise_id="08.version_getitem",
        label="reading t[0] counted as a write",
        build_answer=lambda: 4,
        message=(
            "taking the view t[0] only reads: it makes a new view and writes nothing. Count only "
            "the in-place writes into t's memory."
        ),
        hint="Which of the steps write into t's memory, and which only read it?",
    ),
    Misconception(
        exercise_id="08.inplace_dtype",
        label="no error: the dtype changes",
        build_answer=lambda: None,
        message=(
            "In-place arithmetic such as mul_ never changes a tensor's dtype: it must write its "
            "result into the memory counts already has, as int64. The float result cannot be "
            "stored there, and PyTorch refuses it instead of cutting off the fractions. (Other "
            "in-place writes, such as assignment, fill_ and copy_, do cut them off silently: see "
            "the lesson's optional part.)"
        ),
        hint="Can an in-place operation change the dtype of the tensor it writes into?",
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
            "a's gradient is that of a loss without the tanh: the negatives of a itself were "
            "zeroed, and the tanh dropped. The fix must keep tanh and make a new tensor from its "
            "output with the negatives set to 0."
        ),
        hint="Is the tanh still part of your computation?",
        cause="torch.relu(a) zeroes the negatives of a itself and drops the tanh.",
        evidence=("call:relu",),
    ),
    # --- 08.silent_downcast ---
    Misconception(
        exercise_id="08.silent_downcast",
        label="in place widens the dtype",
        build_answer=lambda: 3000000000,
        message=(
            "an in-place operation writes into the tensor's existing memory, so total stays int32 "
            "whatever the other operand's dtype; think about what int32 can hold."
        ),
        hint=(
            "After the in-place addition, what dtype does total have, and can it hold "
            "3,000,000,000?"
        ),
    ),
    Misconception(
        exercise_id="08.silent_downcast",
        label="the cast saturates",
        build_answer=lambda: 2147483647,
        message=(
            "the cast down does not stop at the largest int32: an integer that does not fit wraps "
            "around, keeping only its value modulo 2**32."
        ),
        hint=(
            "When an integer does not fit into int32, does it stop at the largest value or wrap "
            "around?"
        ),
    ),
    Misconception(
        exercise_id="08.silent_downcast",
        label="a value that does not fit becomes zero",
        build_answer=lambda: 0,
        message=(
            "a value that does not fit is not replaced by zero. In the lesson's optional part "
            "2**40 became 0 only because it is a multiple of 2**32: the cast keeps the value "
            "modulo 2**32."
        ),
        hint="What is 3,000,000,000 modulo 2**32, read as a signed int32?",
    ),
]
