"""Checked exercises for lesson 08: in-place operations and the version counter."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Exercise

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
        task_says={
            "without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
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
            "TypeError": "Python accepts the call; it is torch that refuses to store mul_'s "
            "float result in an int64 tensor.",
            "ValueError": "Not a ValueError: torch reports this from its C++ core, with the "
            "class it uses for most of its errors. Run the cell and read the last line.",
        },
        hints=(
            "counts * 0.5 would be a float tensor. Can an in-place op change the dtype of counts?",
            "An in-place arithmetic op such as mul_ must write its result into the existing "
            "int64 memory; torch refuses to store its float result in an integer tensor (a "
            "change of the dtype's kind).",
            "RuntimeError: result type Float can't be cast to the desired output type Long.",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="08.safe_inplace",
        task_says={
            "one": "advice: the wording of the question, not an instruction",
        },
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
        task_says={
            "without touching the input": "check:inputs_unchanged",
            "leaves x unchanged": "check:inputs_unchanged",
        },
        title="Scale and clip without touching the input",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _scale_and_clip,
        cases=_scale_and_clip_cases,
        hints=(
            "x *= 2 and x.clamp_(...) change the caller's tensor. Which versions make new tensors?",
            "x * 2 makes a new tensor; .clamp(max=1.0) (no underscore) does too.",
            "Scale by 2 with an ordinary multiplication, then cap the result at 1.0 "
            "with the clamp method that has no trailing underscore; return that new "
            "tensor.",
        ),
        solution="def scale_and_clip(x):\n    return (x * 2).clamp(max=1.0)",
    ),
    Exercise(
        id="08.sgd_step",
        task_says={
            "and is still the same leaf that requires grad": "check:attributes:is_leaf",
            "Update it in place": "check:attributes:version",
        },
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
            "Inside a `with torch.no_grad():` block, subtract 0.1 times w's gradient "
            "from w in place (the -= operator); answer with w.",
        ),
        solution="with torch.no_grad():\n    w -= 0.1 * w.grad\nanswer = w",
    ),
    Exercise(
        id="08.relu_fix",
        require=("call:backward|grad",),
        task_says={
            "without breaking backward": "check:call:backward|grad",
        },
        title="Zero the negatives without breaking backward",
        lesson=LESSON,
        kind="autograd",
        forbid=("attr:data",),
        build_reference=_relu_fix_a,
        attributes=("grad",),
        hints=(
            "tanh's backward saved its output h. Which line changes h afterwards?",
            "h[h < 0] = 0 writes into the saved h. Make a new tensor instead: clamp (no "
            "underscore), torch.relu or torch.where all do.",
            "Keep tanh's output untouched: make a new tensor from it whose negatives "
            "are 0 (clamp with a minimum, no underscore), square and sum that, and "
            "call backward; answer with a.",
        ),
        solution=(
            "h = torch.tanh(a)\nh = h.clamp(min=0.0)\nloss = (h**2).sum()\nloss.backward()\n"
            "answer = a"
        ),
    ),
    Exercise(
        id="08.anomaly_culprit",
        task_says={
            "exactly": "advice: the wording of the question, not an instruction",
            "must go": "advice: the wording of the question, not an instruction",
        },
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
            "The error says 'output 0 of Mul' ('MulBackward0' on torch 2.11): for a tensor saved "
            "as an input, that is its grad_fn now, i.e. the last in-place operation on it. The "
            "anomaly report points at h4 = h3 * h1, which saved h1 as an input. Which line "
            "changes h1 later?",
            "Look for the in-place multiplication of a tensor that h4 = h3 * h1 saved.",
        ),
        solution='answer = "c"',
    ),
    Exercise(
        id="08.silent_cast",
        title="Fractions into an integer tensor",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "a RuntimeError",
            "b": "tensor([ 3, -2,  8])",
            "c": "tensor([ 2, -1,  7])",
            "d": "tensor([ 2, -2,  7])",
        },
        explanations={
            "a": "Only in-place arithmetic such as add_ or += refuses a float result. Indexed "
            "assignment and copy_ convert the values to the tensor's dtype without a word.",
            "b": "The conversion does not round to the nearest integer: it drops the fractional "
            "part.",
            "d": "The conversion does not round down (floor): for -1.5 it cuts towards zero.",
        },
        hints=(
            "Which in-place operations refused a float in the lesson's optional part, and which "
            "did not?",
            "Indexed assignment and copy_ keep the int64 dtype and convert each value; the "
            "lesson's optional part printed what 0.7, 1.9 and -2.7 became.",
            "The conversion drops the fractional part, towards zero: work out 2.9, -1.5 and 7.99 "
            "that way and pick the matching option.",
        ),
        solution='answer = "c"',
    ),
    Exercise(
        id="08.version_getitem",
        task_says={
            "without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Count the writes",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: 3,
        options=None,
        hints=(
            "Count writes into t's memory, not lines of code.",
            "t[0] += 1 reads the view t[0], adds to it in place, then assigns it back into t[0].",
            "t[0] += 1 counts as two writes and t.add_(1) as one more; add them up.",
        ),
        solution="answer = 3",
    ),
    Exercise(
        id="08.copyslices_grad",
        task_says={
            "Work out by hand": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="A gradient through an in-place write",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: 12.0,
        options=None,
        hints=(
            "The write h[1] = b * b is recorded by autograd (CopySlices), so the gradient reaches "
            "b through it.",
            "Only h[1] depends on b, and the loss weighs it by 2: loss = 1 + 2 * b**2 + 3.",
            "Differentiate 2 * b**2 with respect to b and put in b = 3.",
        ),
        solution="answer = 12.0  # d(2 b^2)/db = 4b = 12",
    ),
    Exercise(
        id="08.step_between",
        title="Two losses and an optimizer step",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "a",
        options={
            "a": "call loss_b.backward() before optimizer.step()",
            "b": "put optimizer.step() inside torch.no_grad()",
            "c": "call loss_b.backward(retain_graph=True)",
            "d": "call optimizer.zero_grad() before loss_b.backward()",
        },
        explanations={
            "b": "optimizer.step() already updates the weights without recording; the problem is "
            "that it changes, in place, a weight the graph saved for the second backward().",
            "c": "retain_graph keeps the saved tensors alive, but a weight saved by the graph has "
            "still been changed in place by the step: the version check fails all the same.",
            "d": "zero_grad() clears .grad; it does not undo the in-place change of the saved "
            "weight, so the version check still fails (and loss_a's gradient would be lost).",
        },
        hints=(
            "What does optimizer.step() do to the weights, and which of them did the graph save?",
            "The step changes the second layer's weight in place after the forward pass saved it: "
            "its version no longer matches.",
            "Every backward() of this forward pass must run while the saved weights are as they "
            "were: reorder the calls so that the update comes last.",
        ),
        solution='answer = "a"',
    ),
    Exercise(
        id="08.multi_view",
        title="Which view refuses?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "h[:2].mul_(2)",
            "b": "h.chunk(2)[0].mul_(2)",
            "c": "h.narrow(0, 0, 2).mul_(2)",
        },
        explanations={
            "a": "h[:2] is a single view of h: an in-place change through it is recorded like any "
            "other (nothing saved h here).",
            "c": "narrow returns one view, like slicing; changing it in place is allowed and "
            "recorded.",
        },
        hints=(
            "All three are views of h. What is special about the function that made each one?",
            "One of the functions returns several views at once; the lesson showed that such "
            "views refuse in-place changes.",
            "split, chunk and unbind return several views; slicing and narrow return one.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="08.silent_downcast",
        task_says={
            "without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="A wider result written in place",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: -1294967296,
        options=None,
        hints=(
            "Out of place, int32 + int64 gives int64. In place, the result must go into total's "
            "own int32 memory: does torch refuse a wider dtype of the same kind?",
            "It is not refused: the int64 result is cast down silently into int32, which keeps "
            "it modulo 2**32 (int32 holds -2147483648 to 2147483647).",
            "3000000000 does not fit in int32: subtract 2**32 = 4294967296 from it.",
        ),
        solution="answer = -1294967296",
    ),
]
