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


MISCONCEPTIONS = [
    # --- 12.fix_inplace ---
    Misconception(
        exercise_id="12.fix_inplace",
        label="skip connection removed",
        build_answer=lambda: _input_gradient("skip removed"),
        message=(
            "Removing the skip connection makes the error go away by changing the model. "
            "Keep the same computation and only make the addition out of place, so that "
            "tanh's saved output is left intact."
        ),
    ),
    Misconception(
        exercise_id="12.fix_inplace",
        label="hidden branch detached",
        build_answer=lambda: _input_gradient("hidden detached"),
        message=(
            "Detaching tanh's output avoids the error but cuts the hidden layer out of the "
            "graph: no gradient flows back through it any more. An out-of-place addition "
            "keeps both branches."
        ),
    ),
    Misconception(
        exercise_id="12.fix_inplace",
        label="skip added inside tanh",
        build_answer=lambda: _input_gradient("skip inside tanh"),
        message=(
            "Adding the skip before the tanh is a different model: the skip connection adds "
            "to tanh's output. Keep the order and write the addition out of place."
        ),
    ),
    # --- 12.register_parameter ---
    Misconception(
        exercise_id="12.register_parameter",
        label="out_w still not a parameter",
        build_answer=lambda: ["hidden.bias", "hidden.weight", "out_b", "skip.bias", "skip.weight"],
        message=(
            "out_w is still missing. A plain tensor attribute (even with requires_grad=True) "
            "is not a parameter: named_parameters() does not list it, the optimizer never "
            "trains it and .to() does not move it. A buffer is moved by .to() but not trained "
            "either. Wrap out_w so that the module registers it as a parameter."
        ),
    ),
    # --- 12.broadcast_shape ---
    Misconception(
        exercise_id="12.broadcast_shape",
        label="shape of pred kept",
        build_answer=lambda: (256, 1),
        message=(
            "broadcasting does not just keep the larger tensor's shape. Align the shapes "
            "from the right: target's only dimension lines up with pred's size-1 dimension, "
            "and a missing dimension counts as size 1."
        ),
    ),
    Misconception(
        exercise_id="12.broadcast_shape",
        label="shape of target kept",
        build_answer=lambda: (256,),
        message=(
            "The result of broadcasting has as many dimensions as the larger of the two: "
            "target is padded with 1s on the left, not pred cut down."
        ),
    ),
    Misconception(
        exercise_id="12.broadcast_shape",
        label="dimensions added up",
        build_answer=lambda: (256, 1, 256),
        message=(
            "Broadcasting never adds up the dimensions: it pads the shorter shape with 1s on "
            "the left, so the result has as many dimensions as the longer shape."
        ),
    ),
    # --- 12.fix_targets ---
    Misconception(
        exercise_id="12.fix_targets",
        label="new dimension in front",
        build_answer=lambda: _make_data_unsqueeze_front,
        message=(
            "unsqueeze(0) puts the new dimension in front, giving one row of n targets. The "
            "predictions are one column: the new size-1 dimension goes after the samples."
        ),
    ),
    Misconception(
        exercise_id="12.fix_targets",
        label="only the noise reshaped",
        build_answer=lambda: _make_data_noise_shaped,
        message=(
            "Only the noise got shape (n, 1); the other terms are still (n,), and adding "
            "them broadcasts to an (n, n) table. Reshape the finished y instead."
        ),
    ),
    Misconception(
        exercise_id="12.fix_targets",
        label="transpose of a 1-D tensor",
        build_answer=lambda: _make_data_transposed,
        message=(
            "Transposing a 1-D tensor changes nothing: it has only one dimension to swap. "
            "A column needs a second dimension of size 1 added."
        ),
    ),
    # --- 12.keep_penalty_graph ---
    Misconception(
        exercise_id="12.keep_penalty_graph",
        label=".item() in the penalty",
        build_answer=lambda: _penalty_as_float,
        message=(
            "The penalty is a Python float: .item() took each value out of PyTorch, so "
            "autograd cannot follow it back to the parameters and the penalty adds nothing "
            "to the gradients. Keep every step a tensor operation."
        ),
    ),
    Misconception(
        exercise_id="12.keep_penalty_graph",
        label="a new tensor from the numbers",
        build_answer=lambda: _penalty_detached,
        message=(
            "Wrapping the numbers in a new tensor (or calling .detach()) gives the right value "
            "without a history: the tensor is not connected to the parameters, so they get "
            "no gradient from it. Build the sum from the parameters themselves."
        ),
    ),
    Misconception(
        exercise_id="12.keep_penalty_graph",
        label="norms instead of squares",
        build_answer=lambda: _penalty_norms,
        message=(
            "p.norm() is the square root of the sum of squares. The penalty adds up the "
            "squares themselves."
        ),
    ),
    # --- 12.zero_grad ---
    Misconception(
        exercise_id="12.zero_grad",
        label="gradients still accumulate",
        build_answer=lambda: _run_steps_never_zeroed,
        message=(
            "Nothing clears the gradients, so every step follows the sum of all earlier "
            "gradients. Compare the loop with the canonical order of a training step."
        ),
    ),
    Misconception(
        exercise_id="12.zero_grad",
        label="zero_grad between backward and step",
        build_answer=lambda: _run_steps_zero_before_step,
        message=(
            "zero_grad() between backward() and step() erases the gradient that step() "
            "needs, so the parameters never move and the loss stays where it was. Clear the "
            "old gradients before computing new ones."
        ),
    ),
    # --- 12.evaluate_no_graph ---
    Misconception(
        exercise_id="12.evaluate_no_graph",
        label="graph still built",
        build_answer=lambda: _evaluate_with_graph,
        message=(
            "The forward pass is still recorded. model.eval() changes layers such as dropout, "
            "not autograd: switch recording off for the whole computation."
        ),
    ),
    Misconception(
        exercise_id="12.evaluate_no_graph",
        label=".item() returns a float",
        build_answer=lambda: _evaluate_as_float,
        message=(
            ".item() turns the loss into a Python float; the task asks for a tensor (train "
            "stacks the results into a history). Keep the tensor and build it without a graph."
        ),
    ),
    # --- 12.first_nonfinite ---
    Misconception(
        exercise_id="12.first_nonfinite",
        label="nan only",
        build_answer=lambda: _first_nan_only,
        message=(
            "Looking for nan alone misses a run that overflows: inf and -inf are not finite "
            "either. torch.isfinite catches all three."
        ),
    ),
    Misconception(
        exercise_id="12.first_nonfinite",
        label="inf only",
        build_answer=lambda: _first_inf_only,
        message=(
            "Looking for inf alone misses a run that turns nan. torch.isfinite is False for "
            "inf, -inf and nan alike."
        ),
    ),
    Misconception(
        exercise_id="12.first_nonfinite",
        label="last instead of first",
        build_answer=lambda: _last_nonfinite,
        message=(
            "This finds the last non-finite loss. Once a run turns nan it usually stays nan, "
            "so the step where things went wrong is the first one."
        ),
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="12.first_error",
        label="no error: only silent bugs",
        build_answer=lambda: None,
        message=(
            "Some of this script's bugs are silent, but not the first one: backward() stops "
            "with an error because a tensor autograd saved was changed in place. Run the "
            "script cell and read the first word of the error's last line."
        ),
    ),
]


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


MISCONCEPTIONS += [
    Misconception(
        exercise_id="12.normalize_device",
        label="statistics left on the CPU",
        build_answer=lambda: _normalize_probe(_normalize_unchanged),
        message=(
            "FEATURE_MEAN and FEATURE_STD were made on the CPU and stay there: a tensor on "
            "another device cannot be combined with them. Move them to x's device inside "
            "normalize, at the moment they are used, so it works wherever x lives."
        ),
    ),
    Misconception(
        exercise_id="12.normalize_device",
        label="the batch's own statistics",
        build_answer=lambda: _normalize_probe(_normalize_batch_statistics),
        message=(
            "x.mean() and x.std() do run on x's device, but they are this batch's statistics, "
            "not the raw measurements' ones: the training and the validation data would be "
            "shifted differently. Keep FEATURE_MEAN and FEATURE_STD and only move them."
        ),
    ),
    Misconception(
        exercise_id="12.normalize_device",
        label="normalized in place",
        build_answer=lambda: _normalize_probe(_normalize_in_place),
        message=(
            "sub_ and div_ write into the caller's x, so the raw data is normalized for good, "
            "and normalizing it a second time shifts it again. Return a new tensor made with "
            "- and / instead."
        ),
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
            "Turning out_w into an nn.Linear registers it, but it changes the model: a second "
            "output bias appears and the weight has the transposed shape. Keep out_w a tensor "
            "of the same shape and register that tensor itself as a parameter."
        ),
    ),
    Misconception(
        exercise_id="12.register_parameter",
        label="out_b made plain as well",
        build_answer=lambda: ["hidden.bias", "hidden.weight", "skip.bias", "skip.weight"],
        message=(
            "Now out_b is missing too: a plain tensor attribute is invisible to "
            "named_parameters(), so neither output tensor would be trained. Registering works "
            "the other way round: give out_w the same wrapper out_b already has."
        ),
    ),
]


def _evaluate_no_parentheses(model, x, y):
    with torch.no_grad:
        return ((model(x) - y) ** 2).mean()


MISCONCEPTIONS += [
    Misconception(
        exercise_id="12.evaluate_no_graph",
        label="with torch.no_grad (no parentheses)",
        build_answer=lambda: _evaluate_no_parentheses,
        message=(
            "`with torch.no_grad:` hands the with statement the class itself, and Python "
            "refuses: the with statement needs an instance, the object you get by calling it."
        ),
    ),
]


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


MISCONCEPTIONS += [
    Misconception(
        exercise_id="12.zero_grad",
        label="losses kept with their graphs",
        build_answer=lambda: _run_steps_losses_with_graphs,
        message=(
            "The steps are right now, but the list holds the loss tensors themselves, and "
            "each one keeps its step's whole graph alive. Keep only the value of each loss, "
            "detached from the graph, as the original code did."
        ),
    ),
]


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


MISCONCEPTIONS += [
    Misconception(
        exercise_id="12.train",
        label="validation inputs left raw",
        build_answer=lambda: _train_with("validation inputs left raw"),
        message=(
            "The validation inputs skip normalize(): the model learned on normalized features "
            "and is then scored on features of another scale. Every input the model sees, "
            "training or validation, goes through the same normalize()."
        ),
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
    ),
    Misconception(
        exercise_id="12.train",
        label="SGD instead of Adam",
        build_answer=lambda: _train_with("SGD instead of Adam"),
        message=(
            "The optimizer is not the script's: it trains with Adam(lr=0.02), and another "
            "optimizer changes every number after the first step. The bugs are in the other "
            "components; train() itself keeps its data, model, optimizer and evaluation."
        ),
    ),
]
