"""Typical wrong answers to lesson 11's exercises (training loops)."""

from __future__ import annotations

import torch

from course_helpers.lessons.lesson11.exercises import lr_schedule_run as _lrs
from course_helpers.lessons.lesson11.exercises import probe as _probe
from course_helpers.lessons.model import Misconception


def _gd_step_keeps_graph(w, x, y, lr):
    w = w.detach().clone().requires_grad_(True)
    ((x @ w - y) ** 2).mean().backward()
    return w - lr * w.grad


def _gd_step_summed_loss(w, x, y, lr):
    w = w.detach().clone().requires_grad_(True)
    ((x @ w - y) ** 2).sum().backward()
    with torch.no_grad():
        return w - lr * w.grad


def _gd_step_ascent(w, x, y, lr):
    w = w.detach().clone().requires_grad_(True)
    ((x @ w - y) ** 2).mean().backward()
    with torch.no_grad():
        return w + lr * w.grad


def _small_data():
    from course_helpers.environment.notebook import cpu_generator

    g = cpu_generator(11)
    x = torch.randn(16, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.05 * torch.randn(16, 1, generator=g)
    return x, y


def _three_steps(zero_after: tuple[int, ...]):
    x, y = _small_data()
    w = torch.zeros(3, 1, requires_grad=True)
    for step in range(3):
        ((x @ w - y) ** 2).mean().backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        if step in zero_after:
            w.grad.zero_()
    return w


def _module_loop(mistake: str):
    x, y = _small_data()
    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(30):
        if mistake == "only the weight cleared":
            model.weight.grad = None  # the bias's gradients still pile up
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if mistake == "zero before step":
            optimizer.zero_grad()
        optimizer.step()
    return model.weight.detach().clone()


def _evaluate_left_in_eval(model, x, y):
    model.eval()
    with torch.no_grad():
        return torch.nn.functional.mse_loss(model(x), y)


def _evaluate_always_back_to_train(model, x, y):
    model.eval()
    with torch.no_grad():
        loss = torch.nn.functional.mse_loss(model(x), y)
    model.train()
    return loss


def _evaluate_with_graph(model, x, y):
    was_training = model.training
    model.eval()
    loss = torch.nn.functional.mse_loss(model(x), y)
    model.train(was_training)
    return loss


def _batches(how: str):
    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.arange(10))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        torch.randn(5)
        if how == "global seed":
            torch.manual_seed(3)
        loader = DataLoader(data, batch_size=4, shuffle=how != "not shuffled")
        return [batch.tolist() for (batch,) in loader]


MISCONCEPTIONS = [
    # --- 11.gd_step ---
    Misconception(
        exercise_id="11.gd_step",
        label="update recorded in the graph",
        build_answer=lambda: _gd_step_keeps_graph,
        message=(
            "Your new weights record a graph (they require grad): the update itself was recorded "
            "by autograd, because w requires grad. Compute the new weights with recording switched "
            "off."
        ),
        hint="Should autograd record the update of the weights?",
    ),
    Misconception(
        exercise_id="11.gd_step",
        label="summed loss",
        build_answer=lambda: _gd_step_summed_loss,
        message=(
            "Your step is as many times larger as there are points: the gradient is that of the "
            "summed squared error. The loss of the task is the mean squared error."
        ),
        hint="Is the task's loss a sum or a mean of the squared errors?",
    ),
    Misconception(
        exercise_id="11.gd_step",
        label="step up the gradient",
        build_answer=lambda: _gd_step_ascent,
        message=(
            "Your weights moved uphill, toward a larger loss: the gradient was added. Gradient "
            "descent steps against the gradient."
        ),
        hint="To lower the loss, do you step along the gradient or against it?",
    ),
    # --- 11.leaf_after_steps ---
    Misconception(
        exercise_id="11.leaf_after_steps",
        label="zeroed after every step",
        build_answer=lambda: _three_steps((0, 1, 2)),
        message=(
            "w's value is right, but its gradient was cleared after the third update too. The task "
            "keeps the third step's gradient in w's gradient: clear it only after the first two."
        ),
        hint="After which updates does the task clear the gradient?",
    ),
    Misconception(
        exercise_id="11.leaf_after_steps",
        label="never zeroed",
        build_answer=lambda: _three_steps(()),
        message=(
            "Your w is that of a run in which the gradient was never cleared: each backward pass "
            "adds its gradient to the earlier ones, so the second and third updates use a running "
            "sum instead of their own gradient."
        ),
        hint="What does w's gradient hold at the second update?",
    ),
    # --- 11.fix_forgotten_zero ---
    Misconception(
        exercise_id="11.fix_forgotten_zero",
        label="gradients still accumulate",
        build_answer=lambda: _module_loop("unchanged"),
        message=(
            "This is the loop's old result: nothing clears the gradients, so each step follows the "
            "sum of all earlier gradients. Clear them once per iteration, before the backward "
            "pass."
        ),
        hint="What do the gradients hold at the start of the second iteration?",
    ),
    Misconception(
        exercise_id="11.fix_forgotten_zero",
        label="zero_grad between backward and step",
        build_answer=lambda: _module_loop("zero before step"),
        message=(
            "The weights never moved: every update found no gradient to follow. Clear the old "
            "gradients before computing new ones, not between computing them and using them."
        ),
        hint="When the update runs, what must the gradients hold?",
    ),
    # --- 11.evaluate ---
    Misconception(
        exercise_id="11.evaluate",
        label="mode not restored",
        build_answer=lambda: _probe(_evaluate_left_in_eval),
        message=(
            "Your function leaves the model in evaluation mode after it returns, so the caller's "
            "training loop would go on without dropout. Remember the mode the model arrived in and "
            "put it back."
        ),
        hint=(
            "Which mode is the model in after your function returns, and which mode did it arrive "
            "in?"
        ),
        cause="model.eval() stays in force after your function returns.",
        evidence=("call:eval",),
    ),
    Misconception(
        exercise_id="11.evaluate",
        label="always back to train mode",
        build_answer=lambda: _probe(_evaluate_always_back_to_train),
        message=(
            "A model that arrived in evaluation mode leaves your function in training mode. "
            "Restore the mode it came in, whichever it was."
        ),
        hint="What should happen to a model that arrived in evaluation mode?",
        cause="model.train() at the end is right for a model that arrived in training mode only.",
        evidence=("call:train",),
    ),
    Misconception(
        exercise_id="11.evaluate",
        label="graph built",
        build_answer=lambda: _probe(_evaluate_with_graph),
        message=(
            "Your loss records a graph (it requires grad): the forward pass was recorded. "
            "Evaluation also needs recording switched off."
        ),
        hint="What switches autograd's recording off during evaluation?",
        cause=(
            "model.eval() only changes layers such as dropout; it does not stop autograd from "
            "recording."
        ),
        evidence=("call:eval",),
    ),
    # --- 11.loader_batches ---
    Misconception(
        exercise_id="11.loader_batches",
        label="last short batch dropped",
        build_answer=lambda: (3, 32),
        message="a DataLoader keeps the last, shorter batch: it drops it only with drop_last=True.",
        hint="What happens to the samples left over after the full batches?",
    ),
    Misconception(
        exercise_id="11.loader_batches",
        label="last batch full",
        build_answer=lambda: (4, 32),
        message=(
            "the last batch can only hold the samples that are left after the full batches; the "
            "DataLoader does not pad it or reuse samples."
        ),
        hint="How many samples are left for the last batch?",
    ),
    Misconception(
        exercise_id="11.loader_batches",
        label="samples spread evenly",
        build_answer=lambda: (4, 25),
        message=(
            "the DataLoader does not spread the samples evenly over the batches: every batch but "
            "the last has exactly batch_size samples, and the last gets the rest."
        ),
        hint="How many samples does every batch but the last hold?",
    ),
    # --- 11.seeded_loader ---
    Misconception(
        exercise_id="11.seeded_loader",
        label="global generator",
        build_answer=lambda: _batches("global generator"),
        message=(
            "Your order is the one the global random generator gives here, so it depends on "
            "everything that used that generator before. The loader needs a source of randomness "
            "of its own."
        ),
        hint="Where does the loader's shuffling get its randomness from?",
    ),
    Misconception(
        exercise_id="11.seeded_loader",
        label="global seed 3",
        build_answer=lambda: _batches("global seed"),
        message=(
            "Your order is the one a global seed of 3 gives: the global generator, which any code "
            "between the seed and the loop can move on. The order must come from randomness that "
            "belongs to the loader alone."
        ),
        hint="Which randomness can no other code move on between seeding and the loop?",
        cause="torch.manual_seed(3) seeds the global generator.",
        evidence=("call:manual_seed",),
    ),
    Misconception(
        exercise_id="11.seeded_loader",
        label="not shuffled",
        build_answer=lambda: _batches("not shuffled"),
        message=(
            "These batches are in the dataset's order: they were not shuffled, and a generator "
            "alone does not change that."
        ),
        hint="What tells the loader to shuffle at all?",
        cause="A DataLoader shuffles only with shuffle=True.",
        evidence=("call:DataLoader",),
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="11.update_error",
        label="no error: -= is a plain update",
        build_answer=lambda: None,
        message=(
            "w -= ... is an in-place change of w, and w is a leaf that requires grad: outside "
            "torch.no_grad() autograd would have to record the update itself, and it refuses to do "
            "that to a leaf. Run the snippet and read the last line."
        ),
        hint="Can autograd record an in-place change of a leaf that requires grad?",
    ),
]


def _three_steps_ascent():
    x, y = _small_data()
    w = torch.zeros(3, 1, requires_grad=True)
    for step in range(3):
        ((x @ w - y) ** 2).mean().backward()
        with torch.no_grad():
            w += 0.1 * w.grad
        if step < 2:
            w.grad.zero_()
    return w


MISCONCEPTIONS += [
    Misconception(
        exercise_id="11.leaf_after_steps",
        label="stepped uphill (+=)",
        build_answer=_three_steps_ascent,
        message=(
            "w moved along the gradient, the direction in which the loss grows fastest. Gradient "
            "descent subtracts the gradient, so each step lowers the loss."
        ),
        hint="To lower the loss, do you step along the gradient or against it?",
        cause="w += ... moves w along the gradient.",
        evidence=("op:iadd",),
    ),
    Misconception(
        exercise_id="11.fix_forgotten_zero",
        label="only the weight's gradient cleared",
        build_answer=lambda: _module_loop("only the weight cleared"),
        message=(
            "Your weights are those of a run in which only the weight's gradient was cleared: the "
            "bias's gradients pile up, and the growing bias steps pull the weight off course too. "
            "Clear every parameter's gradient at once, through the optimizer, at the start of each "
            "step."
        ),
        hint="Which parameters' gradients are cleared at every step: all of them?",
    ),
]

MISCONCEPTIONS += [
    Misconception(
        exercise_id="11.lr_schedule",
        label="scheduler stepped before the optimizer",
        build_answer=lambda: _lrs("before each epoch"),
        message=(
            "Your learning rates change one epoch early, as they do when the scheduler steps "
            "before the epoch's optimizer steps: the first rate was used for one epoch only, and "
            "every later one came an epoch too soon. Step the scheduler after them."
        ),
        hint="Within an epoch, which comes first: the optimizer's steps or the scheduler's?",
    ),
    Misconception(
        exercise_id="11.lr_schedule",
        label="epoch schedule stepped every batch",
        build_answer=lambda: _lrs("after each batch"),
        message=(
            "Your learning rate fell twice as often as the task asks, as it does when an epoch "
            "schedule steps after every batch: it counted batches, not epochs. An epoch schedule "
            "steps once per epoch."
        ),
        hint="How often should an epoch schedule step?",
    ),
    Misconception(
        exercise_id="11.lr_schedule",
        label="scheduler never stepped",
        build_answer=lambda: _lrs("never"),
        message=(
            "The learning rate never changed: creating a scheduler does nothing until it is "
            "stepped."
        ),
        hint="What makes a scheduler change the learning rate?",
    ),
]
