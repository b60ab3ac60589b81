"""Checked exercises for lesson 10: parameters, buffers and modules."""

from __future__ import annotations

import torch
from torch import nn

from course_helpers.environment.notebook import cpu_generator
from course_helpers.lessons.model import Exercise

LESSON = "10_parameters_and_modules"


def _scaler_data():
    g = cpu_generator(10)
    x = torch.randn(16, 3, generator=g)
    y = x * torch.tensor([2.0, -1.0, 0.5]) + torch.tensor([1.0, 0.0, -1.0])
    return x, y


class _Scaler(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(n))
        self.shift = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        return x * self.scale + self.shift


def _trained_scale():
    x, y = _scaler_data()
    model = _Scaler(3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(30):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return {name: t.clone() for name, t in model.state_dict().items()}


def _standardize_data():
    g = cpu_generator(11)
    return torch.randn(20, 4, generator=g) * 3.0 + 1.0


def _buffers_after_double():
    # the answer holds dict(model.named_buffers()) (plain attributes are not buffers, so they
    # fail) and sorted(model.state_dict()) (buffers with persistent=False are not saved, so
    # they fail too)
    data = _standardize_data()
    return {
        "buffers": {"mean": data.mean(dim=0).double(), "std": data.std(dim=0).double()},
        "state_dict keys": ["mean", "std"],
    }


def _checkpoint_data():
    g = cpu_generator(13)
    x = torch.randn(16, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-1.0], [2.0]]) + 0.5
    return x, y


def _checkpoint_run():
    torch.manual_seed(0)  # in a forked RNG state: references are built by fresh_rng
    net = nn.Linear(3, 1)
    return net, torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)


def _checkpoint_train(net, optimizer, x, y, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        optimizer.step()


def _resumed_weight():
    # resuming with both state_dicts is the same as 8 steps without a stop
    x, y = _checkpoint_data()
    net, optimizer = _checkpoint_run()
    _checkpoint_train(net, optimizer, x, y, 8)
    return net.weight.detach().clone()


def _head_data():
    g = cpu_generator(12)
    x = torch.randn(24, 2, generator=g)
    y = torch.sin(x[:, :1]) - x[:, 1:]
    return x, y


def _trained_head_weight():
    x, y = _head_data()
    torch.manual_seed(0)  # in a forked RNG state: references are built by fresh_rng
    net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    net[2] = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(20):
        optimizer.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return net[2].weight.detach().clone()


# 10.fix_optimizer_order: the cell's given lines and the task's code (fix = reorder only)
_HEAD_TASK = """\
g = cpu_generator(12)
x = torch.randn(24, 2, generator=g)
y = torch.sin(x[:, :1]) - x[:, 1:]
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
net[2] = nn.Linear(4, 1)
for _ in range(20):
    optimizer.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
answer = net[2].weight.detach().clone()
"""


def _stuck_parameters(before, module):
    return [name for name, p in module.named_parameters() if torch.equal(p.detach(), before[name])]


def _filled(module, g):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return module


def _stuck_cases(g):
    # nn.Linear draws its initial weights from the global generator (the checker builds cases
    # in a forked state, so the learner's is left alone); every value is then filled from `g`.
    def snapshot(module):
        return {name: p.detach().clone() for name, p in module.named_parameters()}

    two_layers = _filled(nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1)), g)
    before_two = snapshot(two_layers)
    with torch.no_grad():
        two_layers[2].weight.add_(0.5)  # one tensor trained
        two_layers[0].bias.mul_(2.0)  # and another

    untouched = _filled(nn.Linear(4, 3), g)
    before_untouched = snapshot(untouched)

    all_trained = _filled(nn.Linear(2, 2), g)
    before_all = snapshot(all_trained)
    with torch.no_grad():
        for p in all_trained.parameters():
            p.sub_(0.1)

    tiny_step = _filled(nn.Linear(2, 1), g)
    before_tiny = snapshot(tiny_step)
    with torch.no_grad():
        tiny_step.bias.mul_(1 + 1e-6)  # a change too small for allclose is still a change

    one_element = _filled(nn.Linear(3, 2), g)
    before_one = snapshot(one_element)
    with torch.no_grad():
        one_element.weight[1, 2] += 1.0  # only one element of the weight changed

    no_parameters = nn.Tanh()
    return [
        (before_two, two_layers),
        (before_untouched, untouched),
        (before_all, all_trained),
        (before_tiny, tiny_step),
        (before_one, one_element),
        ({}, no_parameters),  # edge case: nothing to check
    ]


EXERCISES = [
    # ---- Check yourself (lesson notebook) ----
    Exercise(
        id="10.quiz_plain_attribute",
        title="A plain tensor next to a layer",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "it is updated like the other weights",
            "b": "it receives gradients but is never updated",
            "c": "it receives no gradient at all",
        },
        explanations={
            "a": "model.parameters() does not list a plain tensor attribute, so the optimizer "
            "never sees it.",
            "c": "It has requires_grad=True and takes part in the forward pass, so backward() "
            "does fill w.grad. Only the update is missing.",
        },
        hints=(
            "Which tensors does model.parameters() list?",
            "backward() and optimizer.step() decide separately: one fills .grad for every leaf "
            "tensor that requires grad and was used, the other updates only the optimizer's "
            "tensors.",
            "Like `scale` in the lesson: gradients yes, updates no.",
        ),
        solution='check("10.quiz_plain_attribute", "b")',
    ),
    Exercise(
        id="10.quiz_buffer",
        title="Where a buffer shows up",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "in parameters() and in state_dict()",
            "b": "in state_dict() but not in parameters()",
            "c": "in neither",
        },
        explanations={
            "a": "A buffer is not trained, so it is not a parameter; it is only saved and moved "
            "with the module.",
            "c": "That is a plain tensor attribute (or a buffer registered with persistent=False). "
            "A buffer registered with the default persistent=True is saved in state_dict().",
        },
        hints=(
            "A buffer must be saved with the model, but not trained.",
            "Saving goes through state_dict(); training goes through parameters().",
            "The Standardize example printed parameters: [] and state_dict: ['mean', 'std'].",
        ),
        solution='check("10.quiz_buffer", "b")',
    ),
    Exercise(
        id="10.quiz_optimizer",
        title="An optimizer given one layer",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "it changes",
            "b": "it gets a .grad but does not change",
            "c": "it gets no .grad and does not change",
        },
        explanations={
            "a": "optimizer.step() only updates the tensors the optimizer was given: net[2]'s.",
            "c": "backward() does not know about the optimizer: it fills .grad for every leaf "
            "tensor that requires grad and was used in the forward pass, net[0].weight included.",
        },
        hints=(
            "Think of backward() and optimizer.step() separately.",
            "backward() fills .grad for all parameters used in the forward pass; step() updates "
            "only its own list.",
            "The lesson printed 'have a .grad' with all four names and 'changed' with two.",
        ),
        solution='check("10.quiz_optimizer", "b")',
    ),
    # ---- Exercises (solutions notebook) ----
    Exercise(
        id="10.empty_optimizer_error",
        title="An optimizer for a module of plain tensors",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: ValueError,
        hints=(
            "How many tensors does model.parameters() list for this module?",
            "The optimizer checks its parameter list when it is created, and complains about a "
            "bad argument value.",
        ),
        solution="answer = ValueError",
    ),
    Exercise(
        id="10.state_dict_keys",
        task_says={
            "Without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
            "sorted": "advice: the form of the answer; check compares the tuple as given",
        },
        title="Predict the state_dict keys",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: ("fc.bias", "fc.weight", "gain", "running_mean"),
        options=None,
        reveal_values=False,
        hints=(
            "state_dict() holds parameters and buffers, of the module and of its submodules.",
            "A submodule's entries are prefixed with its attribute name, e.g. 'fc.'; a plain "
            "tensor attribute is not included.",
            "Four keys: the two entries of fc, the Parameter, and the buffer; sort them and "
            "make a tuple.",
        ),
        solution='answer = tuple(sorted(["fc.weight", "fc.bias", "gain", "running_mean"]))',
    ),
    Exercise(
        id="10.fix_scaler",
        task_says={
            "keep the training exactly as it is": (
                "check:value (another training gives other numbers)"
            ),
            "by hand": (
                "check:value (the answer is the module's state_dict: a tensor the module does not "
                "own is not in it)"
            ),
        },
        title="Make the scale learn",
        lesson=LESSON,
        kind="value",
        check_step_order=True,
        build_reference=_trained_scale,
        hints=(
            "After training, scale is still all ones: is it in model.parameters()? Is it in "
            "model.state_dict()?",
            "A module registers only nn.Parameter attributes (and buffers) as its own; a plain "
            "tensor, even one with requires_grad=True, stays invisible to it. Wrap scale in "
            "nn.Parameter (which already requires grad).",
            "Make scale an nn.Parameter built from the same ones in __init__ (no "
            "requires_grad argument needed), leave the training loop as it is, and hand in "
            "the module's state_dict().",
        ),
        solution=(
            "class Scaler(nn.Module):\n"
            "    def __init__(self, n):\n"
            "        super().__init__()\n"
            "        self.scale = nn.Parameter(torch.ones(n))\n"
            "        self.shift = nn.Parameter(torch.zeros(n))\n"
            "\n"
            "    def forward(self, x):\n"
            "        return x * self.scale + self.shift\n"
            "\n"
            "\n"
            "model = Scaler(3)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for _ in range(30):\n"
            "    optimizer.zero_grad()\n"
            "    loss = ((model(x) - y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "answer = model.state_dict()"
        ),
    ),
    Exercise(
        id="10.standardize_buffers",
        task_says={
            "not": "check:value (the buffers are compared, with requires_grad)",
        },
        title="Statistics that follow .double()",
        lesson=LESSON,
        kind="value",
        build_reference=_buffers_after_double,
        hints=(
            "After .double(), model.mean is still float32: .double() only converts tensors the "
            "module has registered. Which kind of registration means 'saved and moved, not "
            "trained'?",
            "The statistics are not learned, so they are buffers, not parameters: both of them, "
            "and both must be in state_dict() so that a saved model keeps them.",
            'self.register_buffer("mean", data.mean(dim=0)) and the same for "std", with the '
            "default persistent=True (persistent=False buffers are left out of state_dict()).",
        ),
        solution=(
            "class Standardize(nn.Module):\n"
            "    def __init__(self, data):\n"
            "        super().__init__()\n"
            '        self.register_buffer("mean", data.mean(dim=0))\n'
            '        self.register_buffer("std", data.std(dim=0))\n'
            "\n"
            "    def forward(self, x):\n"
            "        return (x - self.mean) / self.std\n"
            "\n"
            "\n"
            "model = Standardize(data).double()"
        ),
    ),
    Exercise(
        id="10.stuck_parameters",
        task_says={
            "exactly": "check:cases (a tiny change and a change in a single element)",
            "Do not modify the module": "check:inputs_unchanged",
        },
        title="Which parameters did not change?",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _stuck_parameters,
        cases=_stuck_cases,
        hints=(
            "Loop over module.named_parameters() and compare each tensor with before[name].",
            "torch.equal(a, b) is True when two tensors have the same shape and exactly the same "
            "values; any change, however small, counts.",
            "Build a list of the names from module.named_parameters() whose current values are "
            "exactly equal (torch.equal) to their entry in before; compare the values without "
            "their graph (detach them first), and keep the order named_parameters() gives.",
        ),
        solution=(
            "def stuck_parameters(before, module):\n"
            "    return [\n"
            "        name\n"
            "        for name, p in module.named_parameters()\n"
            "        if torch.equal(p.detach(), before[name])\n"
            "    ]"
        ),
    ),
    Exercise(
        id="10.fix_optimizer_order",
        task_says={
            "without adding or removing any line": "check:keep_lines",
            "must be created in the same order": "check:keep_lines",
        },
        title="Train the new head",
        lesson=LESSON,
        kind="value",
        check_step_order=True,
        build_reference=_trained_head_weight,
        keep_lines=_HEAD_TASK,
        hints=(
            "Which parameters does the optimizer hold, and which layer is net[2] after the "
            "replacement?",
            "The optimizer was built before net[2] was replaced, so it holds the old head's "
            "tensors. Keep every line, but change their order.",
            "Move `optimizer = torch.optim.SGD(net.parameters(), lr=0.1)` below `net[2] = ...`.",
        ),
        solution=(
            "torch.manual_seed(0)\n"
            "net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))\n"
            "net[2] = nn.Linear(4, 1)\n"
            "optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "for _ in range(20):\n"
            "    optimizer.zero_grad()\n"
            "    loss = ((net(x) - y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "answer = net[2].weight.detach().clone()"
        ),
    ),
    Exercise(
        id="10.parameter_to",
        title="What .to() returns for a Parameter",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "the same Parameter object, converted in place",
            "b": "a new plain Tensor that is not a leaf",
            "c": "a new Parameter that is a leaf",
        },
        explanations={
            "a": "Converting in place and keeping the object is what module.to() does for the "
            "parameters it owns. Tensor.to() on a single tensor returns a new tensor when it "
            "has to convert.",
            "c": "Tensor.to() is an ordinary recorded operation: its result has a grad_fn, so it "
            "is not a leaf, and it is not wrapped in Parameter again.",
        },
        hints=(
            "Tensor.to() does not change the tensor it is called on when a conversion is needed.",
            "A new tensor computed from one that requires grad has a grad_fn. Is a tensor with a "
            "grad_fn a leaf?",
            "Print type(p).__name__ and p.is_leaf for p = nn.Parameter(torch.ones(2))"
            ".to(torch.float64).",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="10.resume_checkpoint",
        require=("call:load_state_dict",),
        task_says={"Fix the saving and the loading": "check:call:load_state_dict"},
        title="Resume training from a checkpoint",
        lesson=LESSON,
        kind="value",
        build_reference=_resumed_weight,
        hints=(
            "Compare with a run of 8 steps without a stop: what does SGD with momentum remember "
            "between steps, and where is it stored?",
            "The momentum buffers live in the optimizer, not in the model: "
            "model.state_dict() does not contain them.",
            'Save {"model": net.state_dict(), "optimizer": optimizer.state_dict()}, and after '
            "make_run() call load_state_dict on both, each with its own entry.",
        ),
        solution=(
            "net, optimizer = make_run()\n"
            "train(net, optimizer, 4)\n"
            "buffer = io.BytesIO()\n"
            'torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict()}, buffer)\n'
            "\n"
            "buffer.seek(0)\n"
            "checkpoint = torch.load(buffer)\n"
            "net, optimizer = make_run()\n"
            'net.load_state_dict(checkpoint["model"])\n'
            'optimizer.load_state_dict(checkpoint["optimizer"])\n'
            "train(net, optimizer, 4)\n"
            "answer = net.weight.detach().clone()"
        ),
    ),
    Exercise(
        id="10.strict_false_prefix",
        title="strict=False and a DDP checkpoint",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "every tensor: strict=False looks past the module. prefix",
            "b": "nothing: every name is reported as missing or unexpected",
            "c": "an error, because no name matches",
        },
        explanations={
            "a": "load_state_dict matches names exactly; strict=False only stops it from "
            "raising about the names that do not match.",
            "c": "That is what strict=True (the default) does; strict=False never raises about "
            "names, it returns them.",
        },
        hints=(
            "How does load_state_dict pair the checkpoint's tensors with the model's?",
            "'module.0.weight' and '0.weight' are different names; what does strict=False do "
            "with names that do not match?",
            "strict=False skips mismatched names and lists them in missing_keys and "
            "unexpected_keys.",
        ),
        solution='check("10.strict_false_prefix", "b")',
    ),
]
