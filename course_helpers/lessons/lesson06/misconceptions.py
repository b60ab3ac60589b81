"""Typical wrong answers to lesson 06's exercises (gradient accumulation)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _fit_line(x, y, steps=50, lr=0.1, *, mistake):
    w = torch.zeros((), requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr)
    for _ in range(steps):
        loss = ((w * x + b - y) ** 2).mean()
        loss.backward()
        if mistake == "zero between backward and step":
            opt.zero_grad()
        if mistake == "only w cleared":
            w.grad = None
        opt.step()
    return torch.tensor([w.item(), b.item()])


def _fit_line_unchanged(x, y, steps=50, lr=0.1):
    return _fit_line(x, y, steps, lr, mistake="none")


def _fit_line_zero_before_step(x, y, steps=50, lr=0.1):
    return _fit_line(x, y, steps, lr, mistake="zero between backward and step")


def _fit_line_only_w_cleared(x, y, steps=50, lr=0.1):
    return _fit_line(x, y, steps, lr, mistake="only w cleared")


def _accumulate(w, x, y, micro, *, scale):
    w = w.clone().requires_grad_(True)
    chunks = list(zip(x.split(micro), y.split(micro), strict=True))
    for xb, yb in chunks:
        if scale == "none":
            loss = ((xb @ w - yb) ** 2).mean()
        elif scale == "per chunk":
            loss = ((xb @ w - yb) ** 2).mean() / len(chunks)
        else:
            loss = ((xb @ w - yb) ** 2).sum()
        loss.backward()
    return w.grad


def _accumulated_unscaled(w, x, y, micro):
    return _accumulate(w, x, y, micro, scale="none")


def _accumulated_divided_by_chunks(w, x, y, micro):
    return _accumulate(w, x, y, micro, scale="per chunk")


def _accumulated_sum(w, x, y, micro):
    return _accumulate(w, x, y, micro, scale="sum")


def _two_losses(mistake):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, -1.0])
    (w**2).sum().backward()
    if mistake == "cleared between":
        w.grad = None
    if mistake != "only loss_a":
        (w * x).sum().backward()
    return w


_MORE = [
    # --- 06.quiz_three_backwards ---
    Misconception(
        exercise_id="06.quiz_three_backwards",
        label="only the last backward counts",
        build_answer=lambda: 5.0,
        message=(
            "that is the gradient of one backward() alone. backward() adds into .grad, and nothing "
            "clears it between the three calls."
        ),
        hint="Does a second backward() replace .grad, or add to it?",
    ),
    Misconception(
        exercise_id="06.quiz_three_backwards",
        label="counted the calls",
        build_answer=lambda: 3.0,
        message=(
            "3.0 is the number of backward() calls, but each call adds the gradient of 5 * w, not "
            "1."
        ),
        hint="How much does one backward() of 5 * w add to w.grad?",
    ),
    Misconception(
        exercise_id="06.quiz_three_backwards",
        label="gradients multiplied",
        build_answer=lambda: 125.0,
        message=(
            "accumulated gradients are added, not multiplied: each backward() adds its gradient to "
            "what .grad already holds."
        ),
        hint="When .grad already holds a value, does the next backward() add to it or multiply it?",
    ),
    # --- 06.two_losses_two_calls ---
    Misconception(
        exercise_id="06.two_losses_two_calls",
        label=".grad cleared between the calls",
        build_answer=lambda: _two_losses("cleared between"),
        message=(
            "w's gradient is the second loss's alone: the first loss's gradient was thrown away "
            "before the second one was added. Let the second backward pass add onto the first."
        ),
        hint="What must w's gradient still hold when the second backward pass adds to it?",
    ),
    Misconception(
        exercise_id="06.two_losses_two_calls",
        label="only the first loss",
        build_answer=lambda: _two_losses("only loss_a"),
        message=(
            "w's gradient holds only the gradient of loss_a: the second loss needs its own "
            "backward pass, which adds its gradient into the same gradient of w."
        ),
        hint="Which loss's gradient is missing from w?",
    ),
    # --- 06.fix_training_loop ---
    Misconception(
        exercise_id="06.fix_training_loop",
        label="gradients still accumulate",
        build_answer=lambda: _fit_line_unchanged,
        message=(
            "Your w and b are the loop's old, wrong result: every step still follows the sum of "
            "all earlier gradients, so the steps grow. The gradients must be cleared in every "
            "iteration, before the new ones are computed."
        ),
        hint="What do the gradients hold at the start of the second iteration?",
        cause=(
            "a zero_grad() call that does not run at the start of every iteration (one call "
            "before or after the loop, say) leaves the gradients adding up: .grad must be "
            "cleared in every iteration, before backward()."
        ),
        evidence=("call:zero_grad",),
    ),
    Misconception(
        exercise_id="06.fix_training_loop",
        label="zero_grad between backward and step",
        build_answer=lambda: _fit_line_zero_before_step,
        message=(
            "w and b never moved from their starting values: every update found no gradient to "
            "follow. Clear the old gradient before computing the new one, not between computing it "
            "and using it."
        ),
        hint="When the update runs, what must the gradients hold?",
    ),
    Misconception(
        exercise_id="06.fix_training_loop",
        label="only w cleared",
        build_answer=lambda: _fit_line_only_w_cleared,
        message=(
            "Your b is wrong: w's gradient is cleared every iteration, b's keeps accumulating. "
            "Every parameter the optimizer updates needs its gradient cleared."
        ),
        hint="Which parameters' gradients are cleared in every iteration: all of them?",
    ),
    # --- 06.accumulated_grad ---
    Misconception(
        exercise_id="06.accumulated_grad",
        label="micro-batch means not scaled",
        build_answer=lambda: _accumulated_unscaled,
        message=(
            "Your gradient is the sum of one full-size gradient per micro-batch: each "
            "micro-batch's mean loss counted as if it were the whole batch. Each micro-batch's "
            "mean must be weighted by its share of the batch."
        ),
        hint="How much of the batch does one micro-batch hold, and how much should its mean count?",
    ),
    Misconception(
        exercise_id="06.accumulated_grad",
        label="divided by the number of micro-batches",
        build_answer=lambda: _accumulated_divided_by_chunks,
        message=(
            "Your gradient weighs every micro-batch equally: right only when all of them have the "
            "same size. When N is not a multiple of micro, the last one is smaller and must weigh "
            "less: weight each by its number of samples out of N."
        ),
        hint="When the last micro-batch is smaller, should its mean count as much as a full one?",
    ),
    Misconception(
        exercise_id="06.accumulated_grad",
        label="summed squared errors",
        build_answer=lambda: _accumulated_sum,
        message=(
            "Your gradient is N times the expected one: the gradient of the total squared error, "
            "not of its mean. The task asks for the mean over the whole batch."
        ),
        hint="Is the batch's loss a total or a mean?",
    ),
    # --- 06.chunk_weights ---
    Misconception(
        exercise_id="06.chunk_weights",
        label="equal weights",
        build_answer=lambda: torch.full((3,), 1 / 3),
        message=(
            "Equal weights give the short last micro-batch as much say as a full one. Each "
            "micro-batch mean should count in proportion to how many of the 10 samples it holds."
        ),
        hint="How many of the 10 samples does each micro-batch hold?",
    ),
    Misconception(
        exercise_id="06.chunk_weights",
        label="sizes, not fractions",
        build_answer=lambda: torch.tensor([4.0, 4.0, 2.0]),
        message=(
            "The sizes are the right proportions, but undivided they turn the sum into a sum of "
            "per-sample losses, not a mean over the batch. Divide by the batch size."
        ),
        hint="What must the weights add up to for the result to be a mean?",
    ),
    Misconception(
        exercise_id="06.chunk_weights",
        label="one over the chunk size",
        build_answer=lambda: torch.tensor([0.25, 0.25, 0.5]),
        message=(
            "A micro-batch's mean loss has already divided by its own size. The factor re-weights "
            "that mean by the chunk's share of the whole batch, so bigger chunks get bigger "
            "factors."
        ),
        hint="Should a bigger micro-batch get a bigger weight or a smaller one?",
    ),
]


MISCONCEPTIONS = [
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="only the last backward counts",
        build_answer=lambda: 8.0,
        message=(
            "that is the gradient of the last backward alone. backward() adds into .grad; nothing "
            "in the loop clears it, so every iteration's gradient is still in there."
        ),
        hint="Does anything in the loop clear w.grad between the iterations?",
    ),
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="derivative of w**2 taken as w",
        build_answer=lambda: 6.0,
        message=(
            "the iterations are added up, but check the derivative itself: d(w**2)/dw is 2 * w, so "
            "each loss k * w**2 contributes 2 * k * w."
        ),
        hint="What is the derivative of k * w**2 with respect to w?",
    ),
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="gradients averaged over the calls",
        build_answer=lambda: 4.0,
        message=(
            "backward() adds each call's gradient into .grad; it never averages them. Averaging "
            "happens only if your loss divides by the number of terms."
        ),
        hint="Does backward() average the gradients of several calls, or add them?",
    ),
    *_MORE,
]


def _two_losses_doubled():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, -1.0])
    ((w**2).sum() + (w * x).sum()).backward()  # a first try, with the losses added
    (w**2).sum().backward()  # then the two calls as well
    (w * x).sum().backward()
    return w


# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="06.two_losses_two_calls",
        label="both losses counted twice",
        build_answer=_two_losses_doubled,
        message=(
            "w's gradient is twice the expected one: each loss's gradient was added twice. Every "
            "backward pass adds into w's gradient, so a backward pass run twice (a cell run again, "
            "or the summed loss as well as the two separate ones) counts twice. Start from a fresh "
            "w and run each backward pass once."
        ),
        hint="How many times was each loss's gradient added into w's gradient?",
    ),
    Misconception(
        exercise_id="06.two_losses_two_calls",
        label="answered with w.grad",
        build_answer=lambda: _two_losses("none").grad,
        message=(
            "Your answer holds w's gradient, not w: the check reads the gradient from the tensor "
            "itself. Answer with w, the leaf whose gradient the two backward passes filled."
        ),
        hint="Which tensor does the check want: the gradient, or the leaf that holds it?",
    ),
    Misconception(
        exercise_id="06.read_cleared_grad",
        label="no error: zero_grad leaves zeros",
        build_answer=lambda: None,
        message=(
            "zero_grad() does not fill .grad with zeros by default: since PyTorch 2.0 its "
            "set_to_none=True sets every .grad to None, and None has no tensor methods."
        ),
        hint="After zero_grad() with its default arguments, what does .grad hold?",
    ),
]
