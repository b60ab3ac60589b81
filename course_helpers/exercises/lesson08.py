"""Checked exercises for lesson 08: in-place operations and the version counter."""

from __future__ import annotations

import torch

from course_helpers.exercises.model import Exercise

LESSON = "08_inplace_operations"


def _scale_and_clip(x):
    return (x * 2).clamp(max=1.0)


def _scale_and_clip_cases(g):
    return [
        (torch.randn(4, 3, generator=g),),
        (torch.rand(5, generator=g),),
        (torch.randn(1, generator=g),),  # a single value
        (torch.randn(0, 2, generator=g),),  # no values at all
    ]


def _sgd_step_w():
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    x = torch.tensor([2.0, 1.0])
    y = torch.tensor([3.0, 0.0])
    loss = ((w * x - y) ** 2).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    return w


def _relu_fix_a():
    a = torch.tensor([-0.5, 0.2, 1.5], requires_grad=True)
    h = torch.tanh(a)
    h = h.clamp(min=0.0)
    loss = (h**2).sum()
    loss.backward()
    return a


EXERCISES = [
    # ----------------------------------------------------------------- lesson quizzes
    Exercise(
        id="08.quiz_version",
        title="A view's version",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: 2,
        options=None,
        hints=(
            "Which in-place changes count for view: only those made through view?",
            "A view shares its base's memory and its version counter.",
            "view.add_(1) and base.mul_(2) both bump the shared counter: 2.",
        ),
        solution='check("08.quiz_version", 2)',
    ),
    Exercise(
        id="08.quiz_safe_op",
        title="What exp saves",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "h.add_(1)", "b": "y.add_(1)", "c": "neither"},
        explanations={
            "b": "The derivative of exp is exp itself, so its backward saved the output y.",
            "a": "exp's backward does not need h: its derivative is the output y, which it saved.",
            "c": "exp's backward saved its output y, so changing y in place is detected.",
        },
        hints=(
            "Ask what the backward of exp needs to compute its derivative.",
            "d/dh exp(h) = exp(h), which is y: the backward saves the output, not the input.",
            "Changing y breaks it: option b.",
        ),
        solution='check("08.quiz_safe_op", "b")',
    ),
    Exercise(
        id="08.quiz_plus_equals",
        title="+= inside a function",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "[1.]", "b": "[2.]", "c": "the call raises an error"},
        explanations={
            "b": "t += 1 changes the tensor the caller passed in: data and result are the same "
            "tensor.",
            "a": "For a tensor, t += 1 is in place: it changes the caller's tensor, unlike "
            "t = t + 1.",
            "c": "data does not require grad, so nothing stops the in-place change.",
        },
        hints=(
            "Inside bump, t is another name for the caller's tensor.",
            "t += 1 is in place for tensors.",
            "data becomes [2.]: option b.",
        ),
        solution='check("08.quiz_plus_equals", "b")',
    ),
    # ----------------------------------------------------------------- exercises
    Exercise(
        id="08.version_predict",
        title="Count the versions",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: 2,
        options=None,
        hints=(
            "Only in-place changes of t itself (or of a view of t) count.",
            "u = t * 2 is a new tensor: what happens to u does not touch t's counter.",
            "t.add_(1) and t[1:] = 0 change t: two changes.",
        ),
        solution="answer = 2",
    ),
    Exercise(
        id="08.inplace_dtype",
        title="In place keeps the dtype",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        explanations={
            "TypeError": "Python accepts the call; it is torch that refuses to store a float "
            "result in an int64 tensor.",
            "ValueError": "torch reports this kind of problem as a RuntimeError.",
        },
        hints=(
            "counts * 0.5 would be a float tensor. Can an in-place op change the dtype of counts?",
            "An in-place op must write its result into the existing int64 memory; torch refuses "
            "to cast the float result down.",
            "RuntimeError: result type Float can't be cast to the desired output type Long.",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="08.safe_inplace",
        title="Which changes are safe?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "only (1)",
            "b": "(1) and (3)",
            "c": "only (3)",
            "d": "all three",
        },
        explanations={
            "a": "z = y + h saves nothing, so changing z is safe too.",
            "c": "Nothing saved h: sin saved its input a, exp saved its output y, and + saves "
            "nothing. Changing h is safe.",
            "d": "exp saved its output y (the derivative of exp is exp), so changing y breaks "
            "backward.",
        },
        hints=(
            "For each line, write down what its backward saves: sin → its input, exp → its "
            "output, + → nothing.",
            "So the saved tensors are a (by sin) and y (by exp). Which of h, y, z is among them?",
            "Only y was saved: changing h or z is safe, option b.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="08.out_of_place",
        title="Scale and clip without touching the input",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _scale_and_clip,
        cases=_scale_and_clip_cases,
        hints=(
            "x *= 2 and x.clamp_(...) change the caller's tensor. Which versions make new tensors?",
            "x * 2 makes a new tensor; .clamp(max=1.0) (no underscore) does too.",
            "return (x * 2).clamp(max=1.0)",
        ),
        solution="def scale_and_clip(x):\n    return (x * 2).clamp(max=1.0)",
    ),
    Exercise(
        id="08.sgd_step",
        title="A working SGD step",
        lesson=LESSON,
        kind="autograd",
        build_reference=_sgd_step_w,
        # "version": the update must be in place on w itself (_version 0 -> 1); a rebuilt leaf
        # (w = (w - ...).detach().requires_grad_()) or a write through w.data stays at 0
        attributes=("requires_grad", "is_leaf", "version", "value"),
        hints=(
            "The in-place update of a leaf must not be recorded by autograd.",
            "Put the update inside `with torch.no_grad():`; keep it in place (w -= ...) so that "
            "w stays the same tensor: its _version goes from 0 to 1 (a new tensor, or a write "
            "through w.data, leaves it at 0).",
            "with torch.no_grad():\n    w -= 0.1 * w.grad",
        ),
        solution="with torch.no_grad():\n    w -= 0.1 * w.grad\nanswer = w",
    ),
    Exercise(
        id="08.relu_fix",
        title="Zero the negatives without breaking backward",
        lesson=LESSON,
        kind="autograd",
        build_reference=_relu_fix_a,
        attributes=("grad",),
        hints=(
            "tanh's backward saved its output h. Which line changes h afterwards?",
            "h[h < 0] = 0 writes into the saved h. Make a new tensor instead: clamp (no "
            "underscore), torch.relu or torch.where all do.",
            "h = torch.tanh(a)\nh = h.clamp(min=0.0)\nloss = (h**2).sum()\nloss.backward()",
        ),
        solution=(
            "h = torch.tanh(a)\nh = h.clamp(min=0.0)\nloss = (h**2).sum()\nloss.backward()\n"
            "answer = a"
        ),
    ),
    Exercise(
        id="08.anomaly_culprit",
        title="Find the culprit",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "h2.add_(1)",
            "b": "h3_copy.zero_()",
            "c": "h1.mul_(0.5)",
            "d": "h5.sub_(1)",
        },
        explanations={
            "a": "h2 is changed before exp uses it, and h1 * 3 saved neither h1 nor h2 (only "
            "the constant 3): safe.",
            "b": "h3_copy is a clone: changing it leaves h3 (saved by exp and by h3 * h1) alone.",
            "d": "h4 + 1 saves nothing, and nothing else uses h5: safe.",
        },
        hints=(
            "Run forward(x).backward() inside `with torch.autograd.set_detect_anomaly(True):` "
            "and read which forward line is reported.",
            "The report points at h4 = h3 * h1: that multiplication saved h1 (and tanh saved it "
            "too). Which line changes h1 later?",
            "h1.mul_(0.5) changes a saved tensor: option c.",
        ),
        solution='answer = "c"',
    ),
]
