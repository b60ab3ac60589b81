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
            "Nothing runs yet: the optimizer checks its argument the moment it is created, before "
            "any computation. What it finds wrong is the content of that argument."
        ),
        hint="When does the optimizer check its argument: when it is created, or when it steps?",
    ),
    Misconception(
        exercise_id="10.empty_optimizer_error",
        label="wrong type",
        build_answer=lambda: TypeError,
        message=(
            "The argument has an accepted type: parameters() returns a generator of tensors, which "
            "every optimizer takes. What is wrong is what it yields: nothing, because plain tensor "
            "attributes are not registered as parameters."
        ),
        hint="Is the type of the argument wrong, or is it empty?",
    ),
    Misconception(
        exercise_id="10.empty_optimizer_error",
        label="no parameters attribute",
        build_answer=lambda: AttributeError,
        message=(
            "Every nn.Module has .parameters(), so the call works; it just lists no tensors, "
            "because w and b are plain tensors rather than nn.Parameter objects."
        ),
        hint="Does the call to parameters() fail, or does it just list nothing?",
    ),
    # --- 10.state_dict_keys ---
    Misconception(
        exercise_id="10.state_dict_keys",
        label="buffers left out",
        build_answer=lambda: ("fc.bias", "fc.weight", "gain"),
        message=(
            "A state_dict holds the buffers as well as the parameters: whatever register_buffer "
            "registers (persistent, the default) is saved too."
        ),
        hint="Besides the parameters, what else does a module save in its state_dict?",
    ),
    Misconception(
        exercise_id="10.state_dict_keys",
        label="plain tensor attribute included",
        build_answer=lambda: ("fc.bias", "fc.weight", "gain", "offset", "running_mean"),
        message=(
            "A plain tensor assigned as an attribute is not registered with the module, so "
            "state_dict() does not know about it."
        ),
        hint="Does the module know about a tensor that was only assigned as an attribute?",
    ),
    Misconception(
        exercise_id="10.state_dict_keys",
        label="no submodule prefix",
        build_answer=lambda: ("bias", "gain", "running_mean", "weight"),
        message=(
            "the entries of a submodule are prefixed with the attribute name it was assigned to "
            "and a dot, so that two submodules' weights cannot collide."
        ),
        hint="How does a state_dict tell the submodule's weight from another submodule's?",
    ),
    Misconception(
        exercise_id="10.state_dict_keys",
        label="submodule left out",
        build_answer=lambda: ("gain", "running_mean"),
        message=(
            "state_dict() is recursive: it includes the parameters and buffers of every submodule, "
            "under a prefix."
        ),
        hint="Does a module's state_dict include its submodules' tensors?",
    ),
    # --- 10.fix_scaler ---
    Misconception(
        exercise_id="10.fix_scaler",
        label="scale still not trained",
        build_answer=lambda: _trained_scale("frozen parameter"),
        message=(
            "scale has not moved from its initial ones: it is in the module's state, but it "
            "received no updates. It must be a registered parameter that requires grad, handed to "
            "the optimizer with the others."
        ),
        hint="What must be true of scale for the optimizer to update it?",
        cause=(
            "An nn.Parameter with requires_grad=False gets no gradient, and a buffer is not in "
            "model.parameters()."
        ),
        evidence=("kw:requires_grad",),
    ),
    Misconception(
        exercise_id="10.fix_scaler",
        label="scale still a plain tensor",
        build_answer=lambda: _trained_scale("plain tensor"),
        message=(
            "scale is not in the module's state at all: the module does not know it as its own "
            "tensor, so it is neither among the parameters the optimizer gets nor saved with the "
            "module. Register it as a parameter."
        ),
        hint="How does a module come to know a tensor as one of its parameters?",
    ),
    Misconception(
        exercise_id="10.fix_scaler",
        label="plain tensor added to the optimizer by hand",
        build_answer=lambda: _trained_scale("added by hand"),
        message=(
            "scale is not in the module's state, yet shift's values show that scale trained along: "
            "it learns only because you handed it to the optimizer yourself. The module still does "
            "not know it, so a saved model loses it, and moving the module to another device would "
            "leave it behind. Register it as a parameter instead."
        ),
        hint="Does the module itself know scale, or only the optimizer?",
    ),
    # --- 10.standardize_buffers ---
    Misconception(
        exercise_id="10.standardize_buffers",
        label="non-persistent buffers",
        build_answer=lambda: _standardize_answer("not persistent"),
        message=(
            "The statistics are buffers, but the module's saved state holds neither: they are "
            "registered as not persistent, so a saved checkpoint would not contain them. The task "
            "asks for them to be saved with the module."
        ),
        hint="Which kind of buffer is saved with the module?",
        cause=(
            "persistent=False buffers follow .double() and .to(), but they are left out of "
            "state_dict()."
        ),
        evidence=("kw:persistent",),
    ),
    Misconception(
        exercise_id="10.standardize_buffers",
        label="frozen parameters",
        build_answer=lambda: _standardize_answer("parameters"),
        message=(
            "The statistics are saved with the module, but they are not among its buffers: they "
            "are registered as parameters, which an optimizer would be handed. Fixed statistics "
            "belong in buffers."
        ),
        hint=(
            "Which kind of registered tensor is saved and converted but never handed to an "
            "optimizer?"
        ),
    ),
    # --- 10.stuck_parameters ---
    Misconception(
        exercise_id="10.stuck_parameters",
        label="allclose instead of exact",
        build_answer=lambda: _stuck_allclose,
        message=(
            "Your list counts a parameter that moved by a tiny amount as stuck: values that are "
            "only close pass as unchanged. The task asks for values that are exactly the same."
        ),
        hint="Should a parameter that moved by a millionth count as unchanged?",
        cause="torch.allclose forgives small differences.",
        evidence=("call:allclose",),
    ),
    Misconception(
        exercise_id="10.stuck_parameters",
        label="any() instead of all()",
        build_answer=lambda: _stuck_any_equal,
        message=(
            "Your list counts a parameter as stuck when just one of its elements is unchanged, so "
            "a tensor where most elements moved still counts. Every element must be equal."
        ),
        hint="Must every element be unchanged, or is one enough?",
        cause=(
            "(p == before).any() is True when just one element is unchanged; .all() asks for every "
            "element."
        ),
        evidence=("call:any",),
    ),
    Misconception(
        exercise_id="10.stuck_parameters",
        label="the changed ones",
        build_answer=lambda: _stuck_inverted,
        message=(
            "these are the parameters that did change; the task asks for the ones whose values "
            "stayed exactly the same."
        ),
        hint=(
            "Which parameters does the task ask for: the ones that changed, or the ones that did "
            "not?"
        ),
    ),
    Misconception(
        exercise_id="10.stuck_parameters",
        label="identity instead of values",
        build_answer=lambda: _stuck_identity,
        message=(
            "Your list is empty even where parameters stayed exactly the same: the comparison "
            "never finds an unchanged one. The snapshot is a clone, a different object from the "
            "parameter: compare the values."
        ),
        hint="Is the snapshot the same object as the parameter, or a copy with the same values?",
        cause=(
            "`is` asks whether two names refer to the same object. The snapshot is a clone, so "
            "`is` is never true."
        ),
        evidence=("op:is",),
    ),
    # --- 10.fix_optimizer_order ---
    Misconception(
        exercise_id="10.fix_optimizer_order",
        label="optimizer still built first",
        build_answer=lambda: _head_weight("optimizer first"),
        message=(
            "The new head did not move from its initial weights: the optimizer does not hold the "
            "new layer's tensors, since it keeps the tensors it was given when it was built. Build "
            "the optimizer from the model as it finally is."
        ),
        hint="Which tensors does the optimizer hold, and when were they handed to it?",
    ),
    Misconception(
        exercise_id="10.fix_optimizer_order",
        label="only the head trained",
        build_answer=lambda: _head_weight("head only"),
        message=(
            "Your head's values are those of a run in which only the head trained while the first "
            "layer stayed put. Keep the optimizer over all of net's parameters and fix where it is "
            "built."
        ),
        hint="Which parameters should the optimizer update: the head's, or all of net's?",
    ),
    Misconception(
        exercise_id="10.fix_optimizer_order",
        label="layers created in another order",
        build_answer=lambda: _head_weight("head created first"),
        message=(
            "Your head's weights are those of a run in which the new layer was created before the "
            "network: creating the layers in another order changes which random numbers each one "
            "draws, so the initial weights differ. Keep the creation order and move only the line "
            "that is in the wrong place."
        ),
        hint=(
            "Which line is in the wrong place, and does moving the others change the random "
            "numbers?"
        ),
    ),
    # --- 10.resume_checkpoint ---
    Misconception(
        exercise_id="10.resume_checkpoint",
        label="optimizer state lost",
        build_answer=lambda: _resumed_weight("fresh optimizer"),
        message=(
            "The weights were restored, but the optimizer started over: your weights are those of "
            "a resumed run without the momentum the first 4 steps built up. Save the optimizer's "
            "state in the checkpoint next to the model's, and load it into the new optimizer."
        ),
        hint="Besides the weights, what state does an optimizer with momentum keep?",
    ),
    Misconception(
        exercise_id="10.resume_checkpoint",
        label="old optimizer reused",
        build_answer=lambda: _resumed_weight("old optimizer"),
        message=(
            "The freshly loaded model's weights are those of a run whose optimizer updates another "
            "model's tensors: the old optimizer holds the first model's parameters. A new model "
            "needs its own optimizer, loaded with the saved optimizer state."
        ),
        hint="Which model's tensors does the old optimizer hold?",
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="10.standardize_buffers",
        label="plain tensor attributes",
        build_answer=lambda: _standardize_answer("plain attributes"),
        message=(
            "The module knows neither statistic: they are not among its buffers and not in its "
            "saved state, so conversions skip them and saving leaves them out. Register both "
            "statistics so the module knows them as state that is not trained."
        ),
        hint="How does a module come to know a tensor that it must save but not train?",
    ),
    Misconception(
        exercise_id="10.standardize_buffers",
        label="only the mean registered",
        build_answer=lambda: _standardize_answer("only the mean"),
        message=(
            "std is not among the module's buffers: it stayed float32 and is not saved. Every "
            "tensor the module owns but does not train must be registered, std as well."
        ),
        hint="Is std registered with the module the way mean is?",
    ),
    Misconception(
        exercise_id="10.resume_checkpoint",
        label="only the optimizer loaded",
        build_answer=lambda: _resumed_weight("only the optimizer loaded"),
        message=(
            "The optimizer's momentum was restored, but the new model still has its initial "
            "weights: the first 4 steps are lost. A checkpoint to resume from holds both states, "
            "the model's and the optimizer's, and both are loaded."
        ),
        hint="Which two states must be loaded to resume training?",
    ),
]
