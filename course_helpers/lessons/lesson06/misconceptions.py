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
            "that is the gradient of one backward() alone. backward() adds into .grad, and "
            "nothing clears it between the three calls."
        ),
    ),
    Misconception(
        exercise_id="06.quiz_three_backwards",
        label="counted the calls",
        build_answer=lambda: 3.0,
        message=(
            "you counted the backward() calls, but each call adds the gradient of 5 * w, not 1."
        ),
    ),
    Misconception(
        exercise_id="06.quiz_three_backwards",
        label="gradients multiplied",
        build_answer=lambda: 125.0,
        message=(
            "accumulated gradients are added, not multiplied: each backward() adds its "
            "gradient to what .grad already holds."
        ),
    ),
    # --- 06.two_losses_two_calls ---
    Misconception(
        exercise_id="06.two_losses_two_calls",
        label=".grad cleared between the calls",
        build_answer=lambda: _two_losses("cleared between"),
        message=(
            "Clearing .grad (zero_grad or w.grad = None) between the two calls throws away "
            "the first loss's gradient. Let the second backward() add onto the first."
        ),
    ),
    Misconception(
        exercise_id="06.two_losses_two_calls",
        label="only the first loss",
        build_answer=lambda: _two_losses("only loss_a"),
        message=(
            "w.grad holds only the gradient of loss_a: the second loss needs its own "
            "backward() call, which adds its gradient into the same .grad."
        ),
    ),
    # --- 06.fix_training_loop ---
    Misconception(
        exercise_id="06.fix_training_loop",
        label="gradients still accumulate",
        build_answer=lambda: _fit_line_unchanged,
        message=(
            "Every step still adds its gradient to the sum of all earlier ones, so the steps "
            "grow. Calling zero_grad() once before the loop does not help: .grad must be "
            "cleared in every iteration, before backward()."
        ),
    ),
    Misconception(
        exercise_id="06.fix_training_loop",
        label="zero_grad between backward and step",
        build_answer=lambda: _fit_line_zero_before_step,
        message=(
            "zero_grad() between backward() and step() erases the gradient that step() "
            "needs, so w and b never move. Clear the old gradient before computing the new one."
        ),
    ),
    Misconception(
        exercise_id="06.fix_training_loop",
        label="only w cleared",
        build_answer=lambda: _fit_line_only_w_cleared,
        message=(
            "Clearing w's gradient by hand leaves b's gradient accumulating. The optimizer's "
            "zero_grad() clears every parameter it updates."
        ),
    ),
    # --- 06.accumulated_grad ---
    Misconception(
        exercise_id="06.accumulated_grad",
        label="micro-batch means not scaled",
        build_answer=lambda: _accumulated_unscaled,
        message=(
            "Adding up the micro-batches' mean losses gives one full-size gradient per "
            "micro-batch. Each micro-batch's mean must be weighted by its share of the batch."
        ),
    ),
    Misconception(
        exercise_id="06.accumulated_grad",
        label="divided by the number of micro-batches",
        build_answer=lambda: _accumulated_divided_by_chunks,
        message=(
            "Dividing by the number of micro-batches is right only when all of them have the "
            "same size. When N is not a multiple of micro, the last one is smaller and must "
            "weigh less: weight each by its number of samples out of N."
        ),
    ),
    Misconception(
        exercise_id="06.accumulated_grad",
        label="summed squared errors",
        build_answer=lambda: _accumulated_sum,
        message=(
            "Summing the squared errors accumulates the gradient of the total, N times the "
            "gradient of the mean. The task asks for the mean over the whole batch."
        ),
    ),
    # --- 06.chunk_weights ---
    Misconception(
        exercise_id="06.chunk_weights",
        label="equal weights",
        build_answer=lambda: torch.full((3,), 1 / 3),
        message=(
            "Equal weights give the short last micro-batch as much say as a full one. Each "
            "micro-batch mean should count in proportion to how many of the 10 samples it "
            "holds."
        ),
    ),
    Misconception(
        exercise_id="06.chunk_weights",
        label="sizes, not fractions",
        build_answer=lambda: torch.tensor([4.0, 4.0, 2.0]),
        message=(
            "The sizes are the right proportions, but undivided they turn the sum into a sum "
            "of per-sample losses, not a mean over the batch. Divide by the batch size."
        ),
    ),
    Misconception(
        exercise_id="06.chunk_weights",
        label="one over the chunk size",
        build_answer=lambda: torch.tensor([0.25, 0.25, 0.5]),
        message=(
            "A micro-batch's mean loss has already divided by its own size. The factor "
            "re-weights that mean by the chunk's share of the whole batch, so bigger chunks "
            "get bigger factors."
        ),
    ),
]


MISCONCEPTIONS = [
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="only the last backward counts",
        build_answer=lambda: 8.0,
        message=(
            "that is the gradient of the last backward alone. backward() adds into .grad; "
            "nothing in the loop clears it, so every iteration's gradient is still in there."
        ),
    ),
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="derivative of w**2 taken as w",
        build_answer=lambda: 6.0,
        message=(
            "you added up the iterations, but check the derivative itself: d(w**2)/dw is 2 * w, "
            "so each loss k * w**2 contributes 2 * k * w."
        ),
    ),
    Misconception(
        exercise_id="06.predict_loop_grad",
        label="gradients averaged over the calls",
        build_answer=lambda: 4.0,
        message=(
            "backward() adds each call's gradient into .grad; it never averages them. "
            "Averaging happens only if your loss divides by the number of terms."
        ),
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
            "w.grad holds twice the gradient: every backward() adds into .grad, so running "
            "the summed loss's backward and the two separate ones (or a backward cell twice) "
            "counts each loss twice. Start from a fresh w and run each backward once."
        ),
    ),
    Misconception(
        exercise_id="06.two_losses_two_calls",
        label="answered with w.grad",
        build_answer=lambda: _two_losses("none").grad,
        message=(
            "The check reads the gradient from the tensor itself: answer with w, the leaf "
            "whose .grad the two backward() calls filled, not with w.grad."
        ),
    ),
    Misconception(
        exercise_id="06.read_cleared_grad",
        label="no error: zero_grad leaves zeros",
        build_answer=lambda: None,
        message=(
            "zero_grad() does not fill .grad with zeros by default: since PyTorch 2.0 its "
            "set_to_none=True sets every .grad to None, and None has no tensor methods."
        ),
    ),
]
