"""Checked exercises for lesson 06: gradient accumulation."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Exercise

LESSON = "06_gradient_accumulation"


def _two_losses():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, -1.0])
    ((w**2).sum() + (w * x).sum()).backward()
    return w


def _fit_line(x, y, steps=50, lr=0.1):
    w = torch.zeros((), requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((w * x + b - y) ** 2).mean()
        loss.backward()
        opt.step()
    return torch.tensor([w.item(), b.item()])


def _fit_line_cases(g):
    cases = []
    for n in (20, 7, 1):  # the last one is a single point
        x = torch.randn(n, generator=g)
        y = 2 * x - 0.5 + 0.1 * torch.randn(n, generator=g)
        cases.append((x, y))
    return cases


def _full_batch_grad(w, x, y, micro):
    # the gradient of mean((x @ w - y) ** 2) over the whole batch, in closed form
    return 2 / len(x) * x.T @ (x @ w - y)


def _accumulation_cases(g):
    def case(n, d, micro):
        return (
            torch.randn(d, generator=g),
            torch.randn(n, d, generator=g),
            torch.randn(n, generator=g),
            micro,
        )

    # uneven chunks, one sample per chunk, one single chunk, a batch of one sample
    return [case(10, 3, 4), case(6, 2, 1), case(5, 3, 5), case(1, 3, 1)]


EXERCISES = [
    # --- "Check yourself" questions of the lesson notebook ---
    Exercise(
        id="06.quiz_three_backwards",
        title="Three backward() calls",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: 15.0,
        options=None,
        hints=(
            "What is the gradient of 5 * w after one backward()?",
            "Each backward() adds 5 to w.grad; nothing clears it in between.",
            "3 calls x 5 = 15.0",
        ),
        solution='check("06.quiz_three_backwards", 15.0)',
    ),
    Exercise(
        id="06.quiz_set_to_none",
        title="What zero_grad() leaves behind",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "a tensor of zeros", "b": "None", "c": "unchanged"},
        explanations={
            "a": "That is zero_grad(set_to_none=False). The default is set_to_none=True.",
            "c": "zero_grad() does clear the gradients; the question is how.",
        },
        hints=(
            "Look at the default value of the set_to_none argument.",
            "With set_to_none=True the gradient tensor is dropped rather than filled with zeros.",
            "p.grad is None: answer 'b'.",
        ),
        solution='check("06.quiz_set_to_none", "b")',
    ),
    Exercise(
        id="06.quiz_micro_scale",
        title="Scaling micro-batch losses",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "1", "b": "1/6", "c": "6", "d": "1 / (the batch size)"},
        explanations={
            "a": "Without scaling you get the sum of 6 means: 6 times the large-batch gradient.",
            "c": "That makes it worse: the sum of 6 means is already 6 times too large.",
            "d": "Each micro-batch loss is already a mean over its samples; "
            "only the number of micro-batches is left to divide by.",
        },
        hints=(
            "Add up the 6 micro-batch means: how does that compare with the mean over the batch?",
            "The sum of 6 equal-sized means is 6 times the overall mean.",
            "Divide each micro-batch loss by 6: answer 'b'.",
        ),
        solution='check("06.quiz_micro_scale", "b")',
    ),
    # --- exercises of the solution notebook ---
    Exercise(
        id="06.two_losses_two_calls",
        require=("many:backward",),
        task_says={
            "without adding the losses": "check:many:backward",
            "once per loss": "check:many:backward",
        },
        title="Two losses, two backward() calls",
        lesson=LESSON,
        kind="autograd",
        build_reference=_two_losses,
        attributes=("grad", "is_leaf", "requires_grad"),
        hints=(
            "You do not need to add the losses yourself: .grad adds up across backward() calls.",
            "Call loss_a.backward(), then loss_b.backward(), without clearing w.grad in between.",
            "Build the first loss from w alone and run its backward; then build the "
            "second from w and x and run its backward too, without zeroing in "
            "between; answer with w.",
        ),
        solution=(
            "loss_a = (w**2).sum()\nloss_a.backward()\nloss_b = (w * x).sum()\n"
            "loss_b.backward()\nanswer = w"
        ),
    ),
    Exercise(
        id="06.predict_loop_grad",
        task_says={
            "without running the code": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Predict an accumulated gradient",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: 12.0,
        options=None,
        hints=(
            "What is the gradient of k * w**2 with respect to w, at w = 2?",
            "It is 2 * k * w = 4 * k, for k = 0, 1, 2, and the three gradients add up.",
            "0 + 4 + 8 = 12.0",
        ),
        solution="answer = 12.0",
    ),
    Exercise(
        id="06.momentum_zero_grad",
        title="Momentum and a zero gradient",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "b stays where it is",
            "b": "b moves, because momentum acts on its zero gradient",
            "c": "an error is raised because b has no gradient",
        },
        explanations={
            "a": "That is what happens with set_to_none=True: b.grad is None and SGD skips b.",
            "c": "b.grad is a tensor of zeros here (set_to_none=False), so there is no error.",
        },
        hints=(
            "After zero_grad(set_to_none=False), is b.grad None or a tensor?",
            "SGD updates every parameter whose .grad is not None; with momentum the update "
            "also contains the velocity from the previous step.",
            "The velocity from the first step moves b again: answer 'b'.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="06.fix_training_loop",
        task_says={
            "keep the same loss, optimizer and number of steps": (
                "check:value (another loss, optimizer or number of steps gives other numbers)"
            ),
            "matches the reference exactly": "check:value (the weights are compared)",
        },
        title="Fix a training loop",
        lesson=LESSON,
        kind="function",
        check_step_order=True,
        build_reference=lambda: _fit_line,
        cases=_fit_line_cases,
        hints=(
            "Print w.grad inside the loop: does it only contain this step's gradient?",
            "Gradients accumulate across steps; clear them once per step, before backward().",
            "Add opt.zero_grad() as the first line of the loop body.",
        ),
        solution=(
            "def fit_line(x, y, steps=50, lr=0.1):\n"
            "    w = torch.zeros((), requires_grad=True)\n"
            "    b = torch.zeros((), requires_grad=True)\n"
            "    opt = torch.optim.SGD([w, b], lr=lr)\n"
            "    for _ in range(steps):\n"
            "        opt.zero_grad()\n"
            "        loss = ((w * x + b - y) ** 2).mean()\n"
            "        loss.backward()\n"
            "        opt.step()\n"
            "    return torch.tensor([w.item(), b.item()])"
        ),
    ),
    Exercise(
        id="06.accumulated_grad",
        min_calls={
            "backward": (
                lambda w, x, y, micro: len(x.split(micro)) if len(x) else 0,
                "one backward() per micro-batch",
            )
        },
        task_says={
            "whole": "check:value (the gradient of the whole batch's mean is compared)",
            "must get there by calling backward() once per micro-batch": "check:min_calls:backward",
            "Do not modify the w you are given": "check:inputs_unchanged",
        },
        title="Accumulate over micro-batches",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _full_batch_grad,
        cases=_accumulation_cases,
        hints=(
            "Make a leaf copy of w that requires gradients, then loop over the micro-batches "
            "zip(x.split(micro), y.split(micro)) and call backward() on each micro-batch loss.",
            "Each micro-batch mean counts for its share of the batch: "
            "multiply it by len(xb) / len(x).",
            "loss = ((xb @ w - yb) ** 2).mean() * len(xb) / len(x); loss.backward(); "
            "after the loop return w.grad",
        ),
        solution=(
            "def accumulated_grad(w, x, y, micro):\n"
            "    w = w.clone().requires_grad_(True)\n"
            "    for xb, yb in zip(x.split(micro), y.split(micro), strict=True):\n"
            "        loss = ((xb @ w - yb) ** 2).mean() * len(xb) / len(x)\n"
            "        loss.backward()\n"
            "    return w.grad"
        ),
    ),
    Exercise(
        id="06.chunk_weights",
        title="Weights for uneven micro-batches",
        lesson=LESSON,
        kind="value",
        reveal_values=False,
        any_float_dtype=True,  # factors, not a dtype: float64 is right too
        build_reference=lambda: torch.tensor([0.4, 0.4, 0.2]),
        hints=(
            "Which sizes does a batch of 10 split into with .split(4)?",
            "The chunks hold 4, 4 and 2 samples; each weight is n_k / N.",
            "answer = torch.tensor([4 / 10, 4 / 10, 2 / 10])",
        ),
        solution="answer = torch.tensor([0.4, 0.4, 0.2])",
    ),
    Exercise(
        id="06.read_cleared_grad",
        title="Reading a cleared gradient",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: AttributeError,
        explanations={
            "TypeError": "Nothing is called with a wrong type: model.weight.grad is None, and "
            "looking up .norm on None fails before any call happens.",
            "RuntimeError": "No PyTorch operation runs: model.weight.grad is plain None, and "
            "Python fails to find a .norm attribute on it.",
        },
        hints=(
            "What does zero_grad() leave in model.weight.grad by default?",
            "It leaves None, and None has no .norm() method.",
            "Python raises an AttributeError.",
        ),
        solution="answer = AttributeError",
    ),
    Exercise(
        id="06.step_per_group",
        title="Where the step goes with accumulation",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "clipping, optimizer.step() and scheduler.step() all at (A)",
            "b": "clipping, optimizer.step() and scheduler.step() all at (B)",
            "c": "clipping at (A); optimizer.step() and scheduler.step() at (B)",
        },
        explanations={
            "a": "At (A) they run once per micro-batch: the optimizer steps on partial sums and "
            "the schedule advances once per micro-batch instead of once per step.",
            "c": "Clipping at (A) clips each partial sum, not the gradient of the whole batch; "
            "the norm to limit is the one after the last backward().",
        },
        hints=(
            "How many optimizer steps should one group of micro-batches make?",
            "Everything that belongs to one step runs after the last backward() of the group.",
            "The gradient is complete only after the inner loop: clip, step and schedule there.",
        ),
        solution='check("06.step_per_group", "b")',
    ),
]
