"""Checked exercises for lesson 12: the capstone, debugging a training script.

The reference below is the *repaired* script of the lesson; the solution notebook defines
the same components (fixed by the learner) and each exercise compares one of them.
"""

from __future__ import annotations

import torch
from torch import nn

from course_helpers.environment.notebook import cpu_generator
from course_helpers.lessons.model import Exercise

LESSON = "12_capstone_debugging"

_FEATURE_MEAN = torch.tensor([1.0, -2.0, 0.5, 3.0])
_FEATURE_STD = torch.tensor([2.0, 0.5, 1.0, 4.0])


# --------------------------------------------------------------------------- the repaired script


def _make_data(n, seed):
    gen = cpu_generator(seed)
    z = torch.randn(n, 4, generator=gen)
    x_raw = _FEATURE_MEAN + _FEATURE_STD * z
    y = torch.sin(z[:, 0]) + 0.5 * z[:, 1] - z[:, 3] + 0.1 * torch.randn(n, generator=gen)
    return x_raw, y.unsqueeze(1)


def _normalize(x):
    return (x - _FEATURE_MEAN.to(x.device)) / _FEATURE_STD.to(x.device)


class _Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 32)
        self.skip = nn.Linear(4, 32)
        self.out_w = nn.Parameter(torch.randn(32, 1) * 0.1)
        self.out_b = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        h = torch.tanh(self.hidden(x))
        h = h + self.skip(x)
        return h @ self.out_w + self.out_b


def _l2_penalty(model):
    return sum(p.pow(2).sum() for p in model.parameters())


def _loss_fn(model, pred, target):
    return ((pred - target) ** 2).mean() + 1e-3 * _l2_penalty(model)


def _evaluate(model, x, y):
    with torch.no_grad():
        return ((model(x) - y) ** 2).mean()


def _run_steps(model, optimizer, x, y, steps):
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = _loss_fn(model, model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


def _train(steps, device):
    x, y = _make_data(256, seed=0)
    x_val, y_val = _make_data(128, seed=1)
    x, y = _normalize(x.to(device)), y.to(device)
    x_val, y_val = _normalize(x_val.to(device)), y_val.to(device)
    torch.manual_seed(0)
    model = _Regressor().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    history = []
    for start in range(0, steps, 50):
        _run_steps(model, optimizer, x, y, min(50, steps - start))
        history.append(_evaluate(model, x_val, y_val))
    return torch.stack(history)


# --------------------------------------------------------------------------- probes and cases


def _input_gradient():
    """The probe of exercise 12.fix_inplace, run on the repaired model."""
    torch.manual_seed(0)
    model = _Regressor()
    x = torch.randn(5, 4, generator=cpu_generator(3), requires_grad=True)
    model(x).sum().backward()
    return x


def _trainable_names():
    return sorted(name for name, _ in _Regressor().named_parameters())


def _normalize_probe(x):
    on_meta = _normalize(x.to("meta"))
    return _normalize(x), str(on_meta.device)


def _seeded(module, g):
    """``module`` with every parameter drawn from the CPU generator ``g`` (not the global RNG,
    so the kernel and the grader build identical cases)."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=g))
    return module


def _seeded_model(g):
    """A repaired Regressor whose weights come from ``g``."""
    return _seeded(_Regressor(), g)


def _penalty_cases(g):
    return [
        (_seeded_model(g),),
        (_seeded(nn.Linear(3, 2), g),),
        # edge case: a model with a single weight
        (_seeded(nn.Linear(1, 1, bias=False), g),),
    ]


def _batch(g, n):
    x = torch.randn(n, 4, generator=g)
    y = torch.randn(n, 1, generator=g)
    return x, y


def _run_steps_cases(g):
    cases = []
    for n, steps, optim in ((16, 5, "sgd"), (8, 4, "adam"), (1, 3, "sgd")):  # n=1: edge case
        model = _seeded_model(g)
        if optim == "sgd":
            optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        else:
            optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        x, y = _batch(g, n)
        cases.append((model, optimizer, x, y, steps))
    return cases


def _evaluate_cases(g):
    return [
        (_seeded_model(g), *_batch(g, 12)),
        (_seeded_model(g), *_batch(g, 1)),  # edge case: one sample
    ]


def _train_cases(g):
    from course_helpers.environment.device import get_device

    # 200 steps as in the script, and a run shorter than one evaluation period (edge case)
    return [(200, get_device()), (30, get_device())]


def _first_nonfinite(losses):
    bad = (~torch.isfinite(torch.tensor(losses, dtype=torch.float64))).nonzero()
    return int(bad[0, 0]) if len(bad) else -1


def _nonfinite_cases(g):
    inf, nan = float("inf"), float("nan")
    rising = [round(v, 4) for v in (torch.rand(12, generator=g) * 10).tolist()]
    with_inf = rising[:7] + [inf] + rising[8:]
    with_nan = rising[:3] + [nan] * 9
    return [
        (with_inf,),
        (with_nan,),
        (rising,),  # all finite
        ([1.0, -inf, nan],),  # -inf counts too
        ([nan],),  # a single loss, not finite at once
        ([],),  # no steps at all
        ([1.0, 1e300, inf],),  # huge but finite: float32 would make it inf
    ]


EXERCISES = [
    # --- quick questions in the lesson notebook ---
    Exercise(
        id="12.quiz_first_check",
        title="The cheapest first check",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "train for ten times as many steps",
            "b": "switch from SGD to Adam",
            "c": "print the shapes of the prediction, the target and their difference",
        },
        explanations={
            "a": "Longer training helps a loop that works; a bug makes it plateau in the same "
            "place, only later.",
            "b": "Changing the optimizer hides the symptom at best; look for the cause first.",
        },
        hints=(
            "Which check takes one line and no training at all?",
            "A silent broadcast in the loss is the classic plateau; how would you see it?",
            "Shapes first: 'c'.",
        ),
        solution='check("12.quiz_first_check", "c")',
    ),
    Exercise(
        id="12.quiz_meta_probe",
        title="Why probe on the meta device",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "meta tensors compute faster, so the probe checks the speed of a step",
            "b": "a tensor that the code creates on the CPU meets a meta tensor and raises, "
            "revealing code that would fail on a GPU",
            "c": "meta tensors check that the values of the result are right",
        },
        explanations={
            "a": "The probe is not about speed: it is about which device each tensor is on.",
            "c": "Meta tensors have shapes and dtypes but no values at all.",
        },
        hints=(
            "What does a meta tensor have, and what does it lack?",
            "Meta tensors carry shapes, dtypes and a device, but no data. What happens when "
            "one meets a CPU tensor in an elementwise operation?",
            "The device clash raises, as it would with a GPU: 'b'.",
        ),
        solution='check("12.quiz_meta_probe", "b")',
    ),
    Exercise(
        id="12.quiz_item_in_loss",
        title="A loss term computed with .item()",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "a",
        options={
            "a": "nothing: it is a constant, so its gradient is zero",
            "b": "the same gradient as without .item()",
            "c": "an error at backward()",
        },
        explanations={
            "b": ".item() returns a Python float: autograd cannot see where it came from.",
            "c": "Adding a Python float to a tensor is allowed; nothing fails, which is what "
            "makes the bug silent.",
        },
        hints=(
            "What type does .item() return, and does it remember how it was computed?",
            "A Python float added to the loss shifts its value but has no graph behind it.",
            "It contributes nothing to the gradients: 'a'.",
        ),
        solution='check("12.quiz_item_in_loss", "a")',
    ),
    # --- exercises in solutions/12_capstone_debugging.ipynb ---
    Exercise(
        id="12.first_error",
        title="The error that stops the script",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        explanations={
            "ValueError": "Nothing is wrong with a value; autograd finds that a tensor it "
            "saved was changed.",
            "TypeError": "The types are fine; the problem appears only during backward().",
        },
        hints=(
            "Run the script cell and read the last line of the error.",
            "It happens inside loss.backward(): autograd complains about a variable "
            "modified by an inplace operation.",
            "RuntimeError.",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="12.fix_inplace",
        task_says={
            "leave everything else as it is for now": (
                "advice: later exercises repair the rest; this check runs one forward and backward "
                "pass"
            ),
        },
        title="Repair the in-place skip connection",
        lesson=LESSON,
        kind="autograd",
        build_reference=_input_gradient,
        attributes=("requires_grad", "is_leaf", "grad"),
        rtol=1e-4,
        atol=1e-5,
        hints=(
            "The error names the culprit: output 0 of Tanh (TanhBackward0 on torch 2.11) was "
            "modified by an inplace operation.",
            "tanh saves its output for backward(); `h += ...` then overwrites that output.",
            "Write h = h + self.skip(x) instead of h += self.skip(x).",
        ),
        solution=(
            "class Regressor(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.hidden = nn.Linear(4, 32)\n"
            "        self.skip = nn.Linear(4, 32)\n"
            "        self.out_w = nn.Parameter(torch.randn(32, 1) * 0.1)\n"
            "        self.out_b = nn.Parameter(torch.zeros(1))\n\n"
            "    def forward(self, x):\n"
            "        h = torch.tanh(self.hidden(x))\n"
            "        h = h + self.skip(x)\n"
            "        return h @ self.out_w + self.out_b"
        ),
    ),
    Exercise(
        id="12.register_parameter",
        title="Every weight is a parameter",
        lesson=LESSON,
        kind="value",
        build_reference=_trainable_names,
        hints=(
            "List model.named_parameters(): is every weight of the model there?",
            "out_w is a plain tensor attribute: the module does not register it, so the "
            "optimizer never sees it (and .to(device) does not move it).",
            "Keep the same initial values in __init__, but wrap them in nn.Parameter(...) so the "
            "module registers out_w.",
        ),
        solution="self.out_w = nn.Parameter(torch.randn(32, 1) * 0.1)",
    ),
    Exercise(
        id="12.broadcast_shape",
        title="The shape inside the broken loss",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (256, 256),
        options=None,
        reveal_values=False,
        hints=(
            "The predictions have shape (256, 1) and the targets (256,). Line them up from "
            "the right, as broadcasting does.",
            "(256, 1) against (1, 256) after the missing dim is added on the left: each size-1 "
            "dim stretches.",
            "Each size-1 dim stretches to the size of the other operand's dim: the result pairs "
            "every prediction with every target. Write that as a shape tuple.",
        ),
        solution="answer = (256, 256)",
    ),
    Exercise(
        id="12.fix_targets",
        title="Targets shaped like the predictions",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _make_data,
        cases=lambda g: [(8, 0), (5, 7), (1, 3)],  # n=1: edge case
        hints=(
            "The model predicts shape (n, 1); what shape does make_data give the targets?",
            "y is built from columns z[:, k], which have shape (n,). Give it the shape of "
            "the predictions.",
            "Keep make_data as it is, except that the targets it returns get a new dim of size "
            "1 at position 1 (one method call), so they have shape (n, 1) like the predictions.",
        ),
        solution=(
            "def make_data(n, seed):\n"
            "    gen = cpu_generator(seed)\n"
            "    z = torch.randn(n, 4, generator=gen)\n"
            "    x_raw = FEATURE_MEAN + FEATURE_STD * z\n"
            "    y = torch.sin(z[:, 0]) + 0.5 * z[:, 1] - z[:, 3] + 0.1 * torch.randn(n, "
            "generator=gen)\n"
            "    return x_raw, y.unsqueeze(1)"
        ),
    ),
    Exercise(
        id="12.keep_penalty_graph",
        title="A penalty that reaches the gradients",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _l2_penalty,
        cases=_penalty_cases,
        rtol=1e-5,
        atol=1e-6,
        context="keep_graph",
        reach_parameters=True,
        hints=(
            "Does the penalty term have a grad_fn? Print type(l2_penalty(model)).",
            ".item() turns each term into a Python float: autograd cannot follow it, so the "
            "penalty contributes nothing to the gradients.",
            "Keep each parameter's sum of squares as a tensor (drop the .item()) and add those "
            "tensors up over model.parameters(), so the result is a 0-dim tensor with a grad_fn "
            "that autograd can follow back to every parameter.",
        ),
        solution=(
            "def l2_penalty(model):\n    return sum(p.pow(2).sum() for p in model.parameters())"
        ),
    ),
    Exercise(
        id="12.zero_grad",
        title="Clear the gradients every step",
        lesson=LESSON,
        kind="function",
        check_step_order=True,
        build_reference=lambda: _run_steps,
        cases=_run_steps_cases,
        rtol=1e-4,
        atol=1e-5,
        hints=(
            "Compare run_steps with the canonical step order of lesson 11.",
            "backward() adds into .grad; nothing in the loop clears it, so every step uses "
            "the sum of all gradients so far.",
            "Each step must begin from empty gradients: one call on the optimizer, placed before "
            "the forward pass and backward(), and nothing else in the loop changes.",
        ),
        solution=(
            "def run_steps(model, optimizer, x, y, steps):\n"
            "    losses = []\n"
            "    for _ in range(steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model, model(x), y)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        losses.append(loss.detach())\n"
            "    return torch.stack(losses)"
        ),
    ),
    Exercise(
        id="12.evaluate_no_graph",
        task_says={
            "without a graph": "check:must_build_no_graph",
        },
        title="Evaluation without a graph",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _evaluate,
        cases=_evaluate_cases,
        must_build_no_graph=True,
        context="no_graph",
        hints=(
            "Check val_loss.requires_grad after evaluate(...): should evaluation build a graph?",
            "Every evaluation records a graph (and the history keeps them all alive). Which "
            "context manager stops the recording?",
            "Compute the same mean squared error of model(x) against y, but inside a "
            "torch.no_grad() block in the function, so that no operation is recorded (a "
            "detached result would still have built the graph first).",
        ),
        solution=(
            "def evaluate(model, x, y):\n"
            "    with torch.no_grad():\n"
            "        return ((model(x) - y) ** 2).mean()"
        ),
    ),
    Exercise(
        id="12.normalize_device",
        title="Statistics on the data's device",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _normalize_probe,
        cases=lambda g: [
            (3.0 * torch.randn(8, 4, generator=g),),
            (torch.randn(1, 4, generator=g),),
        ],
        hints=(
            "Where do FEATURE_MEAN and FEATURE_STD live, and where does x live on a GPU machine?",
            "The statistics are created on the CPU. Move them to x's device inside normalize.",
            "Keep the formula (x minus the mean, divided by the std), but move both statistics "
            "with .to(...) to the device of x (x.device) at the moment normalize uses them.",
        ),
        solution=(
            "def normalize(x):\n"
            "    return (x - FEATURE_MEAN.to(x.device)) / FEATURE_STD.to(x.device)"
        ),
    ),
    Exercise(
        id="12.train",
        title="The repaired script reaches the target",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _train,
        cases=_train_cases,
        rtol=1e-3,
        atol=1e-4,
        hints=(
            "train() only calls the other components: fix them first, one exercise at a time.",
            "If every other exercise passes, compare train() with the script: the data, the "
            "model, the optimizer (Adam, lr=0.02) and the evaluation every 50 steps must stay "
            "as they are.",
            "Run the script's train() again after redefining make_data, normalize, Regressor, "
            "l2_penalty, run_steps and evaluate with their fixes.",
        ),
        solution=(
            "def train(steps, device):\n"
            "    x, y = make_data(256, seed=0)\n"
            "    x_val, y_val = make_data(128, seed=1)\n"
            "    x, y = normalize(x.to(device)), y.to(device)\n"
            "    x_val, y_val = normalize(x_val.to(device)), y_val.to(device)\n"
            "    torch.manual_seed(0)\n"
            "    model = Regressor().to(device)\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)\n"
            "    history = []\n"
            "    for start in range(0, steps, 50):\n"
            "        run_steps(model, optimizer, x, y, min(50, steps - start))\n"
            "        history.append(evaluate(model, x_val, y_val))\n"
            "    return torch.stack(history)"
        ),
    ),
    Exercise(
        id="12.first_nonfinite",
        task_says={
            "Do not modify losses": "check:inputs_unchanged",
            "Use torch.isfinite on a float64 tensor": "check:call:isfinite",
            "on a float64 tensor": "check:cases (a huge finite loss, 1e300: float32 makes it inf)",
        },
        title="The first non-finite loss",
        lesson=LESSON,
        kind="function",
        require=("call:isfinite",),  # the task names torch.isfinite
        build_reference=lambda: _first_nonfinite,
        cases=_nonfinite_cases,
        hints=(
            "torch.isfinite(t) is True where a value is an ordinary number: not inf, -inf or "
            "nan. Make a tensor of the losses first.",
            "Negate it to mark the bad steps, then find the position of the first True; when "
            "there is none (all finite, or an empty tensor), return -1.",
            "bad = (~torch.isfinite(torch.tensor(losses, dtype=torch.float64))).nonzero(); "
            "return the first row's index as an int, or -1 when bad is empty.",
        ),
        solution=(
            "def first_nonfinite(losses):\n"
            "    bad = (~torch.isfinite(torch.tensor(losses, dtype=torch.float64))).nonzero()\n"
            "    return int(bad[0, 0]) if len(bad) else -1"
        ),
    ),
    Exercise(
        id="12.overfit_one_batch",
        title="Overfitting one batch fails",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "the model needs more data and more steps",
            "b": "something is wrong in the model, the loss or the update: check the shapes "
            "that meet in the loss first",
            "c": "the model is overfitting and needs regularisation",
        },
        explanations={
            "a": "More data makes the task harder, not easier: a working model learns 8 samples "
            "almost by heart in a few hundred steps. If it cannot, the problem is not the "
            "amount of data.",
            "c": "Overfitting would drive the loss on those 8 samples towards zero; here it "
            "stays high, which is the opposite.",
        },
        hints=(
            "What should a working model do with only 8 samples and 300 steps?",
            "It should learn them almost by heart: the loss goes to nearly zero. A loss stuck "
            "at the variance of the targets is a known signature from this lesson.",
            "Think of the broadcast loss of Step 2: its floor is the variance of the targets.",
        ),
        solution='answer = "b"',
    ),
]
