"""Typical wrong answers to lesson 10's exercises (parameters, buffers and modules)."""

from __future__ import annotations

import torch
from torch import nn

from course_helpers.lessons.model import Misconception


def _trained_scale(mistake: str):
    from course_helpers.environment.notebook import cpu_generator

    g = cpu_generator(10)
    x = torch.randn(16, 3, generator=g)
    y = x * torch.tensor([2.0, -1.0, 0.5]) + torch.tensor([1.0, 0.0, -1.0])
    # the answer is the module's state_dict(): a plain tensor attribute is not in it
    if mistake == "frozen parameter":
        scale = nn.Parameter(torch.ones(3), requires_grad=False)
    else:  # "plain tensor" (the task's code) or "added by hand" (handed to the optimizer)
        scale = torch.ones(3, requires_grad=True)
    shift = nn.Parameter(torch.zeros(3))
    trained = [shift] + ([scale] if mistake == "added by hand" else [])
    optimizer = torch.optim.SGD(trained, lr=0.1)
    for _ in range(30):
        optimizer.zero_grad()
        loss = ((x * scale + shift - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    saved = {"shift": shift.detach().clone()}
    if isinstance(scale, nn.Parameter):
        saved = {"scale": scale.detach().clone(), **saved}
    return saved


def _standardize_answer(how: str):
    from course_helpers.environment.notebook import cpu_generator

    data = torch.randn(20, 4, generator=cpu_generator(11)) * 3.0 + 1.0

    class Standardize(nn.Module):
        def __init__(self, data):
            super().__init__()
            if how == "parameters":
                self.mean = nn.Parameter(data.mean(dim=0), requires_grad=False)
                self.std = nn.Parameter(data.std(dim=0), requires_grad=False)
            elif how == "plain attributes":
                self.mean = data.mean(dim=0)
                self.std = data.std(dim=0)
            elif how == "only the mean":
                self.register_buffer("mean", data.mean(dim=0))
                self.std = data.std(dim=0)
            else:
                self.register_buffer("mean", data.mean(dim=0), persistent=False)
                self.register_buffer("std", data.std(dim=0), persistent=False)

    model = Standardize(data).double()
    return {"buffers": dict(model.named_buffers()), "state_dict keys": sorted(model.state_dict())}


def _stuck_allclose(before, module):
    return [n for n, p in module.named_parameters() if torch.allclose(p.detach(), before[n])]


def _stuck_any_equal(before, module):
    return [n for n, p in module.named_parameters() if (p.detach() == before[n]).any()]


def _stuck_inverted(before, module):
    return [n for n, p in module.named_parameters() if not torch.equal(p.detach(), before[n])]


def _stuck_identity(before, module):
    return [n for n, p in module.named_parameters() if p is before[n]]


def _head_weight(mistake: str):
    from course_helpers.environment.notebook import cpu_generator

    g = cpu_generator(12)
    x = torch.randn(24, 2, generator=g)
    y = torch.sin(x[:, :1]) - x[:, 1:]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        if mistake == "head created first":
            head = nn.Linear(4, 1)
            net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
        else:
            net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
            head = nn.Linear(4, 1)
    if mistake == "optimizer first":
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        net[2] = head
    else:
        net[2] = head
        optimizer = torch.optim.SGD(
            head.parameters() if mistake == "head only" else net.parameters(), lr=0.1
        )
    for _ in range(20):
        optimizer.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return net[2].weight.detach().clone()


def _resumed_weight(mistake: str):
    from course_helpers.environment.notebook import cpu_generator

    g = cpu_generator(13)
    x = torch.randn(16, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-1.0], [2.0]]) + 0.5

    def make_run():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            net = nn.Linear(3, 1)
        return net, torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

    def train(net, optimizer, steps):
        for _ in range(steps):
            optimizer.zero_grad()
            ((net(x) - y) ** 2).mean().backward()
            optimizer.step()

    net, optimizer = make_run()
    train(net, optimizer, 4)
    checkpoint = {k: v.clone() for k, v in net.state_dict().items()}
    fresh, new_optimizer = make_run()
    if mistake == "only the optimizer loaded":
        new_optimizer.load_state_dict(optimizer.state_dict())
    else:
        fresh.load_state_dict(checkpoint)
    train(fresh, optimizer if mistake == "old optimizer" else new_optimizer, 4)
    return fresh.weight.detach().clone()


MISCONCEPTIONS = [
    # --- 10.empty_optimizer_error ---
    Misconception(
        exercise_id="10.empty_optimizer_error",
        label="a failure at run time",
        build_answer=lambda: RuntimeError,
        message=(
            "Nothing runs yet: the optimizer checks its argument the moment it is created, "
            "before any computation. What it finds wrong is the content of that argument."
        ),
    ),
    Misconception(
        exercise_id="10.empty_optimizer_error",
        label="wrong type",
        build_answer=lambda: TypeError,
        message=(
            "The argument has an accepted type: parameters() returns a generator of tensors, "
            "which every optimizer takes. What is wrong is what it yields: nothing, because "
            "plain tensor attributes are not registered as parameters."
        ),
    ),
    Misconception(
        exercise_id="10.empty_optimizer_error",
        label="no parameters attribute",
        build_answer=lambda: AttributeError,
        message=(
            "Every nn.Module has .parameters(), so the call works; it just lists no tensors, "
            "because w and b are plain tensors rather than nn.Parameter objects."
        ),
    ),
    # --- 10.state_dict_keys ---
    Misconception(
        exercise_id="10.state_dict_keys",
        label="buffers left out",
        build_answer=lambda: ("fc.bias", "fc.weight", "gain"),
        message=(
            "A state_dict holds the buffers as well as the parameters: whatever "
            "register_buffer registers (persistent, the default) is saved too."
        ),
    ),
    Misconception(
        exercise_id="10.state_dict_keys",
        label="plain tensor attribute included",
        build_answer=lambda: ("fc.bias", "fc.weight", "gain", "offset", "running_mean"),
        message=(
            "A plain tensor assigned as an attribute is not registered with the module, so "
            "state_dict() does not know about it."
        ),
    ),
    Misconception(
        exercise_id="10.state_dict_keys",
        label="no submodule prefix",
        build_answer=lambda: ("bias", "gain", "running_mean", "weight"),
        message=(
            "the entries of a submodule are prefixed with the attribute name it was assigned "
            "to and a dot, so that two submodules' weights cannot collide."
        ),
    ),
    Misconception(
        exercise_id="10.state_dict_keys",
        label="submodule left out",
        build_answer=lambda: ("gain", "running_mean"),
        message=(
            "state_dict() is recursive: it includes the parameters and buffers of every "
            "submodule, under a prefix."
        ),
    ),
    # --- 10.fix_scaler ---
    Misconception(
        exercise_id="10.fix_scaler",
        label="scale still not trained",
        build_answer=lambda: _trained_scale("frozen parameter"),
        message=(
            "scale has not moved. It must be a registered parameter that requires grad: a "
            "buffer is not in model.parameters(), and an nn.Parameter with "
            "requires_grad=False gets no gradient."
        ),
    ),
    Misconception(
        exercise_id="10.fix_scaler",
        label="scale still a plain tensor",
        build_answer=lambda: _trained_scale("plain tensor"),
        message=(
            "scale is still a plain tensor attribute: the module registers only nn.Parameter "
            "attributes (and buffers), so scale is neither in model.parameters(), where the "
            "optimizer looks, nor in state_dict()."
        ),
    ),
    Misconception(
        exercise_id="10.fix_scaler",
        label="plain tensor added to the optimizer by hand",
        build_answer=lambda: _trained_scale("added by hand"),
        message=(
            "scale learns now, but only because you handed it to the optimizer yourself: the "
            "module still does not know it, so it is missing from state_dict() (a saved model "
            "loses it) and from model.parameters(), and .to() would not move it. Register it "
            "as an nn.Parameter instead."
        ),
    ),
    # --- 10.standardize_buffers ---
    Misconception(
        exercise_id="10.standardize_buffers",
        label="non-persistent buffers",
        build_answer=lambda: _standardize_answer("not persistent"),
        message=(
            "persistent=False buffers follow .double() and .to(), but they are left out of "
            "state_dict(), so a saved checkpoint would not contain the statistics. The task "
            "asks for them to be saved with the module."
        ),
    ),
    Misconception(
        exercise_id="10.standardize_buffers",
        label="frozen parameters",
        build_answer=lambda: _standardize_answer("parameters"),
        message=(
            "Parameters with requires_grad=False are saved and converted, but they are still "
            "parameters: model.parameters() hands them to an optimizer, and "
            "named_buffers() does not list them. Fixed statistics belong in buffers."
        ),
    ),
    # --- 10.stuck_parameters ---
    Misconception(
        exercise_id="10.stuck_parameters",
        label="allclose instead of exact",
        build_answer=lambda: _stuck_allclose,
        message=(
            "torch.allclose forgives small differences, so a parameter that moved a tiny bit "
            "counts as stuck. The task asks for values that are exactly the same."
        ),
    ),
    Misconception(
        exercise_id="10.stuck_parameters",
        label="any() instead of all()",
        build_answer=lambda: _stuck_any_equal,
        message=(
            "(p == before).any() is True when just one element is unchanged, so a tensor "
            "where a single element moved (or most did) still counts as stuck. Every element "
            "must be equal."
        ),
    ),
    Misconception(
        exercise_id="10.stuck_parameters",
        label="the changed ones",
        build_answer=lambda: _stuck_inverted,
        message=(
            "these are the parameters that did change; the task asks for the ones whose "
            "values stayed exactly the same."
        ),
    ),
    Misconception(
        exercise_id="10.stuck_parameters",
        label="identity instead of values",
        build_answer=lambda: _stuck_identity,
        message=(
            "`is` asks whether two names refer to the same object. The snapshot is a clone, a "
            "different object, so `is` is never true: compare the values."
        ),
    ),
    # --- 10.fix_optimizer_order ---
    Misconception(
        exercise_id="10.fix_optimizer_order",
        label="optimizer still built first",
        build_answer=lambda: _head_weight("optimizer first"),
        message=(
            "The new head did not move: an optimizer keeps the parameter tensors it was given "
            "when it was built, and the new layer's tensors are not among them. Build the "
            "optimizer from the model as it finally is."
        ),
    ),
    Misconception(
        exercise_id="10.fix_optimizer_order",
        label="only the head trained",
        build_answer=lambda: _head_weight("head only"),
        message=(
            "Giving the optimizer only the head's parameters trains the head alone, while "
            "the first layer stays put, so the head learns different values. Keep the "
            "optimizer over all of net's parameters and fix where it is built."
        ),
    ),
    Misconception(
        exercise_id="10.fix_optimizer_order",
        label="layers created in another order",
        build_answer=lambda: _head_weight("head created first"),
        message=(
            "Creating the new layer before the Sequential changes which random numbers each "
            "layer draws, so the initial weights differ. Keep the creation order and move "
            "only the line that is in the wrong place."
        ),
    ),
    # --- 10.resume_checkpoint ---
    Misconception(
        exercise_id="10.resume_checkpoint",
        label="optimizer state lost",
        build_answer=lambda: _resumed_weight("fresh optimizer"),
        message=(
            "The weights were restored, but the optimizer started over: SGD with momentum "
            "keeps a momentum buffer per parameter in its own state_dict(). Save it in the "
            "checkpoint next to the model's, and load it into the new optimizer."
        ),
    ),
    Misconception(
        exercise_id="10.resume_checkpoint",
        label="old optimizer reused",
        build_answer=lambda: _resumed_weight("old optimizer"),
        message=(
            "The old optimizer holds the first model's parameter tensors: step() updates "
            "those, and the freshly loaded model never moves. A new model needs its own "
            "optimizer, loaded with the saved optimizer state."
        ),
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="10.standardize_buffers",
        label="plain tensor attributes",
        build_answer=lambda: _standardize_answer("plain attributes"),
        message=(
            "Tensors assigned as plain attributes are invisible to the module: .double() and "
            ".to() skip them and state_dict() leaves them out. Register both statistics so "
            "the module knows them as state that is not trained."
        ),
    ),
    Misconception(
        exercise_id="10.standardize_buffers",
        label="only the mean registered",
        build_answer=lambda: _standardize_answer("only the mean"),
        message=(
            "std is still a plain attribute, so it stayed float32 and is not saved. Every "
            "tensor the module owns but does not train must be registered, std as well."
        ),
    ),
    Misconception(
        exercise_id="10.resume_checkpoint",
        label="only the optimizer loaded",
        build_answer=lambda: _resumed_weight("only the optimizer loaded"),
        message=(
            "The optimizer's momentum was restored, but the new model still has its initial "
            "weights from make_run(): the first 4 steps are lost. A checkpoint to resume from "
            "holds both state_dicts, and both are loaded."
        ),
    ),
]
