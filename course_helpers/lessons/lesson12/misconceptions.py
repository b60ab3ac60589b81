"""Typical wrong answers to lesson 12's exercises (the capstone debugging session)."""

from __future__ import annotations

import math

import torch
from torch import nn

from course_helpers.lessons.model import Misconception

_FEATURE_MEAN = torch.tensor([1.0, -2.0, 0.5, 3.0])
_FEATURE_STD = torch.tensor([2.0, 0.5, 1.0, 4.0])


class _Regressor(nn.Module):
    """The lesson's model with the in-place bug repaired in one of several wrong ways."""

    forward_mistake = "none"

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 32)
        self.skip = nn.Linear(4, 32)
        self.out_w = torch.randn(32, 1) * 0.1
        self.out_b = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        if self.forward_mistake == "skip inside tanh":
            h = torch.tanh(self.hidden(x) + self.skip(x))
        elif self.forward_mistake == "hidden detached":
            h = torch.tanh(self.hidden(x)).detach() + self.skip(x)
        else:  # "skip removed"
            h = torch.tanh(self.hidden(x))
        return h @ self.out_w + self.out_b


def _input_gradient(mistake: str):
    from course_helpers.environment.notebook import cpu_generator

    model_class = type("Regressor", (_Regressor,), {"forward_mistake": mistake})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = model_class()
    x = torch.randn(5, 4, generator=cpu_generator(3), requires_grad=True)
    model(x).sum().backward()
    return x


def _make_data(n, seed, *, mistake):
    from course_helpers.environment.notebook import cpu_generator

    gen = cpu_generator(seed)
    z = torch.randn(n, 4, generator=gen)
    x_raw = _FEATURE_MEAN + _FEATURE_STD * z
    if mistake == "noise shaped":
        y = torch.sin(z[:, 0]) + 0.5 * z[:, 1] - z[:, 3] + 0.1 * torch.randn(n, 1, generator=gen)
        return x_raw, y
    y = torch.sin(z[:, 0]) + 0.5 * z[:, 1] - z[:, 3] + 0.1 * torch.randn(n, generator=gen)
    return x_raw, (y.unsqueeze(0) if mistake == "unsqueeze(0)" else y.t())


def _make_data_unsqueeze_front(n, seed):
    return _make_data(n, seed, mistake="unsqueeze(0)")


def _make_data_noise_shaped(n, seed):
    return _make_data(n, seed, mistake="noise shaped")


def _make_data_transposed(n, seed):
    return _make_data(n, seed, mistake="t()")


def _penalty_as_float(model):
    return sum(p.pow(2).sum().item() for p in model.parameters())


def _penalty_detached(model):
    return torch.tensor(sum(p.pow(2).sum().item() for p in model.parameters()))


def _penalty_norms(model):
    return sum(p.norm() for p in model.parameters())


def _l2_penalty(model):
    return sum(p.pow(2).sum() for p in model.parameters())


def _run_steps(model, optimizer, x, y, steps, *, mistake):
    losses = []
    for _ in range(steps):
        pred = model(x)
        loss = ((pred - y) ** 2).mean() + 1e-3 * _l2_penalty(model)
        loss.backward()
        if mistake == "zero before step":
            optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


def _run_steps_never_zeroed(model, optimizer, x, y, steps):
    return _run_steps(model, optimizer, x, y, steps, mistake="never zeroed")


def _run_steps_zero_before_step(model, optimizer, x, y, steps):
    return _run_steps(model, optimizer, x, y, steps, mistake="zero before step")


def _evaluate_with_graph(model, x, y):
    return ((model(x) - y) ** 2).mean()


def _evaluate_as_float(model, x, y):
    with torch.no_grad():
        return ((model(x) - y) ** 2).mean().item()


def _first_nan_only(losses):
    return next((i for i, v in enumerate(losses) if math.isnan(v)), -1)


def _first_inf_only(losses):
    return next((i for i, v in enumerate(losses) if math.isinf(v)), -1)


def _last_nonfinite(losses):
    bad = (~torch.isfinite(torch.tensor(losses, dtype=torch.float64))).nonzero()
    return int(bad[-1, 0]) if len(bad) else -1


def _normalize_probe(normalize):
    """The notebook's normalize_probe around a wrong normalize."""

    def normalize_probe(x):
        try:
            on_meta = normalize(x.to("meta"))
        except Exception as error:
            raise RuntimeError(f"normalize fails for x on another device (meta): {error}") from None
        return normalize(x), str(on_meta.device)

    return normalize_probe


def _normalize_unchanged(x):
    from course_helpers.lessons.lesson12.exercises import _FEATURE_MEAN, _FEATURE_STD

    return (x - _FEATURE_MEAN) / _FEATURE_STD


def _normalize_batch_statistics(x):
    return (x - x.mean(dim=0)) / x.std(dim=0)


def _normalize_in_place(x):
    from course_helpers.lessons.lesson12.exercises import _FEATURE_MEAN, _FEATURE_STD

    return x.sub_(_FEATURE_MEAN.to(x.device)).div_(_FEATURE_STD.to(x.device))


def _evaluate_no_parentheses(model, x, y):
    with torch.no_grad:
        return ((model(x) - y) ** 2).mean()


def _run_steps_losses_with_graphs(model, optimizer, x, y, steps):
    from course_helpers.lessons.lesson12.exercises import _loss_fn

    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = _loss_fn(model, model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)  # each loss keeps its whole graph alive
    return torch.stack(losses)


# --- 12.train: the repaired script with one of its unbroken parts changed after all


def _train_with(mistake: str):
    """The script's train() (course_helpers.lessons.lesson12.exercises), changed by ``mistake``."""
    from course_helpers.lessons.lesson12 import exercises as script

    def train(steps, device):
        x, y = script._make_data(256, seed=0)
        x_val, y_val = script._make_data(128, seed=1)
        x, y = script._normalize(x.to(device)), y.to(device)
        x_val, y_val = x_val.to(device), y_val.to(device)
        if mistake != "validation inputs left raw":
            x_val = script._normalize(x_val)
        torch.manual_seed(0)
        model = script._Regressor().to(device)
        if mistake == "SGD instead of Adam":
            optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
        else:
            optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
        if mistake == "evaluated once, at the end":
            script._run_steps(model, optimizer, x, y, steps)
            return torch.stack([script._evaluate(model, x_val, y_val)])
        history = []
        for start in range(0, steps, 50):
            script._run_steps(model, optimizer, x, y, min(50, steps - start))
            history.append(script._evaluate(model, x_val, y_val))
        return torch.stack(history)

    return train


MISCONCEPTIONS = [
    # --- 12.fix_inplace ---
    Misconception(
        exercise_id="12.fix_inplace",
        label="skip connection removed",
        build_answer=lambda: _input_gradient("skip removed"),
        message=(
            "x's gradient is that of a model without the skip connection: the error went away by "
            "changing the model. Keep the same computation and only make the addition out of "
            "place, so that tanh's saved output is left intact."
        ),
        hint="Does your model still add the skip connection to tanh's output?",
    ),
    Misconception(
        exercise_id="12.fix_inplace",
        label="hidden branch detached",
        build_answer=lambda: _input_gradient("hidden detached"),
        message=(
            "x's gradient comes through the skip connection alone: the hidden layer is cut out of "
            "the graph, and no gradient flows back through it any more. An out-of-place addition "
            "keeps both branches."
        ),
        hint="Does the gradient still flow back through the hidden layer?",
        cause=(
            "Detaching tanh's output avoids the error but cuts the hidden layer out of the graph."
        ),
        evidence=("call:detach",),
    ),
    Misconception(
        exercise_id="12.fix_inplace",
        label="skip added inside tanh",
        build_answer=lambda: _input_gradient("skip inside tanh"),
        message=(
            "x's gradient is that of a different model, one that adds the skip before the tanh: "
            "the skip connection adds to tanh's output. Keep the order and write the addition out "
            "of place."
        ),
        hint="Is the skip added to tanh's output, or to its input?",
    ),
    # --- 12.register_parameter ---
    Misconception(
        exercise_id="12.register_parameter",
        label="out_w still not a parameter",
        build_answer=lambda: ["hidden.bias", "hidden.weight", "out_b", "skip.bias", "skip.weight"],
        message=(
            "out_w is still missing from the parameters an optimizer would train: the list holds "
            "the module's parameters that require grad. A plain tensor attribute (even one that "
            "requires grad) is not a parameter: the module does not list it, the optimizer never "
            "trains it and moving the module does not move it. A buffer is moved along but not "
            "trained either, and a parameter that does not require grad is frozen. Register "
            "out_w as a parameter that requires grad."
        ),
        hint=(
            "What does a tensor need for the module to list it as a parameter, and for an "
            "optimizer to train it?"
        ),
    ),
    # --- 12.broadcast_shape ---
    Misconception(
        exercise_id="12.broadcast_shape",
        label="shape of pred kept",
        build_answer=lambda: (256, 1),
        message=(
            "broadcasting does not just keep the larger tensor's shape. Align the shapes from the "
            "right: target's only dimension lines up with pred's size-1 dimension, and a missing "
            "dimension counts as size 1."
        ),
        hint="Aligned from the right, which size of pred does target's only dimension meet?",
    ),
    Misconception(
        exercise_id="12.broadcast_shape",
        label="shape of target kept",
        build_answer=lambda: (256,),
        message=(
            "The result of broadcasting has as many dimensions as the larger of the two: target is "
            "padded with 1s on the left, not pred cut down."
        ),
        hint="How many dimensions does the result of broadcasting have?",
    ),
    Misconception(
        exercise_id="12.broadcast_shape",
        label="dimensions added up",
        build_answer=lambda: (256, 1, 256),
        message=(
            "Broadcasting never adds up the dimensions: it pads the shorter shape with 1s on the "
            "left, so the result has as many dimensions as the longer shape."
        ),
        hint="Does broadcasting ever give more dimensions than the longer shape has?",
    ),
    # --- 12.fix_targets ---
    Misconception(
        exercise_id="12.fix_targets",
        label="new dimension in front",
        build_answer=lambda: _make_data_unsqueeze_front,
        message=(
            "Your targets are one row of n, shape (1, n), while the predictions are one column, "
            "(n, 1): the new size-1 dimension goes after the samples."
        ),
        hint="Where must the size-1 dimension go so that the targets form one column?",
        cause="unsqueeze(0) puts the new dimension in front.",
        evidence=("call:unsqueeze",),
    ),
    Misconception(
        exercise_id="12.fix_targets",
        label="only the noise reshaped",
        build_answer=lambda: _make_data_noise_shaped,
        message=(
            "Your targets are an (n, n) table: one term of y was a column (n, 1) and the others "
            "(n,), and adding them broadcasts to a table. Give the finished y its new dimension, "
            "not one of its terms."
        ),
        hint="Which tensor should get the new dimension: one term of y, or y itself?",
    ),
    Misconception(
        exercise_id="12.fix_targets",
        label="transpose of a 1-D tensor",
        build_answer=lambda: _make_data_transposed,
        message=(
            "Your targets are still 1-D, (n,): the step meant to make them a column changed "
            "nothing. A column needs a second dimension of size 1 added."
        ),
        hint="How many dimensions does a column of n targets have?",
        cause="Transposing a 1-D tensor changes nothing: it has only one dimension to swap.",
        evidence=("call:t|transpose",),
    ),
    # --- 12.keep_penalty_graph ---
    Misconception(
        exercise_id="12.keep_penalty_graph",
        label=".item() in the penalty",
        build_answer=lambda: _penalty_as_float,
        message=(
            "Your penalty is a number outside torch (a Python number or a NumPy value), not a "
            "tensor: autograd cannot follow it back to the parameters, so it adds nothing to the "
            "gradients. Keep every step a tensor operation."
        ),
        hint="Can autograd follow a number that is not a tensor back to the parameters?",
        cause=".item() takes each value out of PyTorch.",
        evidence=("call:item",),
    ),
    Misconception(
        exercise_id="12.keep_penalty_graph",
        label="a new tensor from the numbers",
        build_answer=lambda: _penalty_detached,
        message=(
            "Your penalty has the right value but no history (it does not require grad): it is not "
            "connected to the parameters, so they get no gradient from it. Build the sum from the "
            "parameters themselves."
        ),
        hint="Is your penalty still connected to the parameters in the graph?",
        cause=(
            "Wrapping the numbers in a new tensor (or calling .detach()) gives the right value "
            "without a history."
        ),
        evidence=("call:tensor|detach",),
    ),
    Misconception(
        exercise_id="12.keep_penalty_graph",
        label="norms instead of squares",
        build_answer=lambda: _penalty_norms,
        message=(
            "Your penalty adds up square roots: each parameter's norm, the square root of its sum "
            "of squares. The penalty adds up the squares themselves."
        ),
        hint="Does the penalty add up the squares, or their square roots?",
        cause="p.norm() is the square root of the sum of squares.",
        evidence=("call:norm",),
    ),
    # --- 12.zero_grad ---
    Misconception(
        exercise_id="12.zero_grad",
        label="gradients still accumulate",
        build_answer=lambda: _run_steps_never_zeroed,
        message=(
            "Your losses are those of a run in which nothing clears the gradients, so every step "
            "follows the sum of all earlier gradients. Compare the loop with the canonical order "
            "of a training step."
        ),
        hint="What do the gradients hold at the start of the second step?",
    ),
    Misconception(
        exercise_id="12.zero_grad",
        label="zero_grad between backward and step",
        build_answer=lambda: _run_steps_zero_before_step,
        message=(
            "Your losses are those of a run in which every update found no gradient to follow, so "
            "the parameters never move and the loss stays where it was. Clear the old gradients "
            "before computing new ones."
        ),
        hint="When the update runs, what must the gradients hold?",
    ),
    # --- 12.evaluate_no_graph ---
    Misconception(
        exercise_id="12.evaluate_no_graph",
        label="graph still built",
        build_answer=lambda: _evaluate_with_graph,
        message=(
            "Your loss records a graph (it requires grad): the forward pass is still recorded. "
            "Switch recording off for the whole computation."
        ),
        hint="What switches autograd's recording off for the whole evaluation?",
    ),
    Misconception(
        exercise_id="12.evaluate_no_graph",
        label=".item() returns a float",
        build_answer=lambda: _evaluate_as_float,
        message=(
            "Your function returns a number outside torch (a Python number or a NumPy value); "
            "the task asks for a tensor (train stacks the results into a history). Keep the "
            "tensor and build it without a graph."
        ),
        hint="Is the value your function returns still a tensor?",
        cause=".item() turns the loss into a Python float.",
        evidence=("call:item",),
    ),
    # --- 12.first_nonfinite ---
    Misconception(
        exercise_id="12.first_nonfinite",
        label="nan only",
        build_answer=lambda: _first_nan_only,
        message=(
            "Your function misses a run whose loss overflows: inf and -inf are not finite either. "
            "Look for the first loss that is not finite, whatever kind it is."
        ),
        hint="Which three kinds of value are not finite?",
    ),
    Misconception(
        exercise_id="12.first_nonfinite",
        label="inf only",
        build_answer=lambda: _first_inf_only,
        message=(
            "Your function misses a run whose loss turns nan: a nan is not finite either. Look for "
            "the first loss that is not finite, whatever kind it is."
        ),
        hint="Which three kinds of value are not finite?",
    ),
    Misconception(
        exercise_id="12.first_nonfinite",
        label="last instead of first",
        build_answer=lambda: _last_nonfinite,
        message=(
            "Your function finds the last non-finite loss. Once a run turns nan it usually stays "
            "nan, so the step where things went wrong is the first one."
        ),
        hint="Which non-finite loss marks the step where things went wrong?",
    ),
    # more typical wrong answers (issue 12: at least three per exercise)
    Misconception(
        exercise_id="12.first_error",
        label="no error: only silent bugs",
        build_answer=lambda: None,
        message=(
            "Some of this script's bugs are silent, but not the first one: backward() stops with "
            "an error because a tensor autograd saved was changed in place. Run the script cell "
            "and read the first word of the error's last line."
        ),
        hint="Run the script cell: what is the first word of the error's last line?",
    ),
    Misconception(
        exercise_id="12.normalize_device",
        label="statistics left on the CPU",
        build_answer=lambda: _normalize_probe(_normalize_unchanged),
        message=(
            "Your function stops with an error for x on another device: the statistics stay on the "
            "CPU, and a tensor on another device cannot be combined with them. Move them to x's "
            "device inside normalize, at the moment they are used, so it works wherever x lives."
        ),
        hint="On which device do the statistics live, and on which does x?",
    ),
    Misconception(
        exercise_id="12.normalize_device",
        label="the batch's own statistics",
        build_answer=lambda: _normalize_probe(_normalize_batch_statistics),
        message=(
            "Your values are normalized with this batch's own statistics, not the raw "
            "measurements' ones: the training and the validation data would be shifted "
            "differently. Keep FEATURE_MEAN and FEATURE_STD and only move them."
        ),
        hint="Whose statistics must every batch be normalized with?",
        cause="x.mean() and x.std() do run on x's device, but they are this batch's statistics.",
        evidence=("call:std",),
    ),
    Misconception(
        exercise_id="12.normalize_device",
        label="normalized in place",
        build_answer=lambda: _normalize_probe(_normalize_in_place),
        message=(
            "Your function overwrote the caller's x: the raw data is normalized for good, and "
            "normalizing it a second time shifts it again. Return a new tensor instead."
        ),
        hint="Does your function leave the tensor it was given as it was?",
        cause="sub_ and div_ write into the caller's x: use - and / to make a new tensor.",
        evidence=("call:sub_|div_",),
    ),
    Misconception(
        exercise_id="12.register_parameter",
        label="replaced by an nn.Linear",
        build_answer=lambda: [
            "hidden.bias",
            "hidden.weight",
            "out_b",
            "out_w.bias",
            "out_w.weight",
            "skip.bias",
            "skip.weight",
        ],
        message=(
            "Your parameter names show out_w as a layer with a weight and a bias of its own: that "
            "registers it, but it changes the model (a second output bias appears, and the weight "
            "has the transposed shape). Keep out_w a tensor of the same shape and register that "
            "tensor itself as a parameter."
        ),
        hint="How do you register one tensor, of the same shape, as a parameter?",
    ),
    Misconception(
        exercise_id="12.register_parameter",
        label="out_b made plain as well",
        build_answer=lambda: ["hidden.bias", "hidden.weight", "skip.bias", "skip.weight"],
        message=(
            "Now out_b is missing too: a plain tensor attribute is invisible to the module's "
            "parameters, so neither output tensor would be trained. Registering works the other "
            "way round: give out_w the same wrapper out_b already had."
        ),
        hint="How was out_b registered in the original code?",
    ),
    Misconception(
        exercise_id="12.evaluate_no_graph",
        label="with torch.no_grad (no parentheses)",
        build_answer=lambda: _evaluate_no_parentheses,
        message=(
            "Your function stops with a TypeError: the with statement was handed something that is "
            "not a context manager. It needs an instance, the object you get by calling, not the "
            "class itself."
        ),
        hint="Does the with statement get the class, or an instance made by calling it?",
        cause=(
            "`with torch.no_grad:` hands the with statement the class itself: call it, `with "
            "torch.no_grad():`."
        ),
        evidence=("with:no_grad",),
    ),
    Misconception(
        exercise_id="12.zero_grad",
        label="losses kept with their graphs",
        build_answer=lambda: _run_steps_losses_with_graphs,
        message=(
            "The steps are right now, but your losses still record graphs (they require grad): "
            "each one keeps its step's whole graph alive. Keep only the value of each loss, cut "
            "off from the graph, as the original code did."
        ),
        hint="What does each loss in your history still hold on to?",
    ),
    Misconception(
        exercise_id="12.train",
        label="validation inputs left raw",
        build_answer=lambda: _train_with("validation inputs left raw"),
        message=(
            "Your validation losses are far too large: the validation inputs reach the model "
            "without normalization, though it learned on normalized features. Every input the "
            "model sees, training or validation, is normalized the same way."
        ),
        hint="Are the validation inputs normalized like the training inputs?",
    ),
    Misconception(
        exercise_id="12.train",
        label="evaluated once, at the end",
        build_answer=lambda: _train_with("evaluated once, at the end"),
        message=(
            "The history holds one evaluation, after all the steps: the script evaluates after "
            "every block of 50 steps (and after a last, shorter block), so a run of 200 steps "
            "records four."
        ),
        hint="How often does the script evaluate during a run of 200 steps?",
    ),
    Misconception(
        exercise_id="12.train",
        label="SGD instead of Adam",
        build_answer=lambda: _train_with("SGD instead of Adam"),
        message=(
            "Your losses are those of a run with an optimizer other than the script's: the "
            "optimizer changes every number after the first step. The bugs are in the other "
            "components; the training function keeps its data, model, optimizer and evaluation as "
            "the script has them."
        ),
        hint="Which optimizer, with which learning rate, does the script train with?",
        cause="The script trains with Adam(lr=0.02).",
        evidence=("call:SGD",),
    ),
]
