"""Typical wrong answers to lesson 09's exercises (graph lifetime and higher derivatives)."""

from __future__ import annotations

import torch

from course_helpers.lessons.lesson09.exercises import carry_hidden_losses, penalised_leaf
from course_helpers.lessons.model import Misconception


def _two_losses(which: str):
    from course_helpers.environment.notebook import cpu_generator

    g = cpu_generator(9)
    w = torch.randn(3, 2, generator=g).requires_grad_()
    inputs = torch.randn(5, 3, generator=g)
    h = torch.tanh(inputs @ w)
    loss_a = h.pow(2).mean()
    loss_b = (h[:, 0] - h[:, 1]).abs().mean()
    if which == "a":
        loss_a.backward()
    elif which == "b":
        loss_b.backward()
    else:
        ((loss_a + loss_b) / 2).backward()
    return w


def _first_derivative_of_tanh(x):
    x_leaf = x.detach().requires_grad_()
    (d1,) = torch.autograd.grad(torch.tanh(x_leaf).sum(), x_leaf)
    return d1


def _second_derivative_via_mean(x):
    x_leaf = x.detach().requires_grad_()
    (d1,) = torch.autograd.grad(torch.tanh(x_leaf).mean(), x_leaf, create_graph=True)
    (d2,) = torch.autograd.grad(d1.mean(), x_leaf)
    return d2


def _derivative_in_grad(order: int):
    x = torch.tensor(1.5, requires_grad=True)
    if order == 1:
        (x**4).backward()
        return x
    (d1,) = torch.autograd.grad(x**4, x, create_graph=True)
    d1.backward()
    return x


def _what_is_checked(items):
    values = [v.item() if isinstance(v, torch.Tensor) and v.numel() == 1 else v for v in items]
    graphs = sum(isinstance(v, torch.Tensor) and v.grad_fn is not None for v in items)
    return {"losses": values, "items holding a graph": graphs}


def _train_both(mistake: str):
    from course_helpers.environment.notebook import cpu_generator

    g = cpu_generator(5)
    proj = torch.randn(4, 3, generator=g).requires_grad_()
    head = torch.randn(3, 1, generator=g).requires_grad_()
    data = torch.randn(10, 4, generator=g)
    target = torch.randn(10, 1, generator=g)
    losses = []
    once = torch.tanh(data @ proj)
    for _ in range(5):
        features = once if mistake == "graph retained" else torch.tanh(data @ proj)
        loss = ((features @ head - target) ** 2).mean()
        loss.backward(retain_graph=mistake == "graph retained")
        with torch.no_grad():
            for p in (proj, head):
                p -= 0.1 * p.grad
                if mistake != "gradients not cleared":
                    p.grad = None
        losses.append(loss if mistake == "tensors kept" else loss.item())
    return _what_is_checked(losses)


MISCONCEPTIONS = [
    # --- 09.backward_twice_error ---
    Misconception(
        exercise_id="09.backward_twice_error",
        label="a bad value",
        build_answer=lambda: ValueError,
        message=(
            "No argument has a bad value. The first backward() freed the intermediate values saved "
            "in the graph, and the second walk finds them gone: torch reports that as a failure "
            "while running."
        ),
        hint="What did the first backward() do to the values the graph saved?",
    ),
    Misconception(
        exercise_id="09.backward_twice_error",
        label="wrong types",
        build_answer=lambda: TypeError,
        message=(
            "y is still a tensor and backward() needs no argument here, so no type is wrong. What "
            "is missing are the tensors the graph saved, freed by the first backward()."
        ),
        hint="Is anything of the wrong type here, or is something missing?",
    ),
    Misconception(
        exercise_id="09.backward_twice_error",
        label="grad_fn gone",
        build_answer=lambda: AttributeError,
        message=(
            "y keeps its grad_fn after backward(), so every attribute lookup still works. What the "
            "first backward() freed are the values saved inside the graph."
        ),
        hint="After backward(), what is gone: y's grad_fn, or the values saved inside the graph?",
    ),
    # --- 09.sum_losses ---
    Misconception(
        exercise_id="09.sum_losses",
        label="only loss_a",
        build_answer=lambda: _two_losses("a"),
        message=(
            "w's gradient holds the gradient of loss_a only: loss_b contributes nothing. Combine "
            "the two losses into one and walk the graph once."
        ),
        hint="Which loss's gradient is missing from w?",
    ),
    Misconception(
        exercise_id="09.sum_losses",
        label="only loss_b",
        build_answer=lambda: _two_losses("b"),
        message=(
            "w's gradient holds the gradient of loss_b only. Both losses must contribute, through "
            "a single backward pass on one combined loss."
        ),
        hint="Which loss's gradient is missing from w?",
    ),
    Misconception(
        exercise_id="09.sum_losses",
        label="losses averaged",
        build_answer=lambda: _two_losses("mean"),
        message=(
            "w's gradient is half the expected one: averaging the two losses halves each one's "
            "gradient. Two backward passes would have added the gradients, and so does one "
            "backward pass on the sum."
        ),
        hint=(
            "Two separate backward passes add the gradients: which combination of the losses does "
            "the same?"
        ),
    ),
    # --- 09.second_derivative_tanh ---
    Misconception(
        exercise_id="09.second_derivative_tanh",
        label="first derivative returned",
        build_answer=lambda: _first_derivative_of_tanh,
        message=(
            "Your values are the first derivative, 1 - tanh². For the second, keep the first "
            "derivative's graph and differentiate it again."
        ),
        hint=(
            "How many times must tanh be differentiated, and what must the first result keep for "
            "the second?"
        ),
        cause=(
            "One call to torch.autograd.grad gives the first derivative. For the second, keep that "
            "result's graph (create_graph=True) and differentiate it again."
        ),
        evidence=("call:grad",),
    ),
    Misconception(
        exercise_id="09.second_derivative_tanh",
        label="mean instead of sum",
        build_answer=lambda: _second_derivative_via_mean,
        message=(
            "Your values are scaled down, by the number of elements once per derivative (1/36 for "
            "6 elements): each derivative was taken of a mean. Summing before each derivative "
            "gives each element exactly its own derivative."
        ),
        hint="What does averaging before differentiating do to each element's derivative?",
        cause="Each .mean() divides by the number of elements, once per mean.",
        evidence=("call:mean",),
    ),
    # --- 09.grad_has_graph ---
    Misconception(
        exercise_id="09.grad_has_graph",
        label="every gradient requires grad",
        build_answer=lambda: (True, True),
        message=(
            "without create_graph, the backward pass that computes the gradient is not recorded: "
            "the result has no grad_fn, so it does not require grad, even though x does."
        ),
        hint="Is the backward pass itself recorded when create_graph is not set?",
    ),
    Misconception(
        exercise_id="09.grad_has_graph",
        label="gradients never require grad",
        build_answer=lambda: (False, False),
        message=(
            "create_graph=True records the backward pass itself as a graph, so that gradient has a "
            "grad_fn and can be differentiated again."
        ),
        hint="What does create_graph=True record?",
    ),
    Misconception(
        exercise_id="09.grad_has_graph",
        label="answers swapped",
        build_answer=lambda: (False, True),
        message=(
            "The two are the other way round: which call records the backward pass as a graph? "
            "That one gives a gradient with a history."
        ),
        hint="Which of the two calls records the backward pass as a graph?",
    ),
    # --- 09.third_derivative ---
    Misconception(
        exercise_id="09.third_derivative",
        label="backward on the first derivative",
        build_answer=lambda: _derivative_in_grad(2),
        message=(
            "x's gradient holds the second derivative (27 = 12x² at x = 1.5), not the third: the "
            "backward pass differentiates the tensor it starts from once more. Start it from the "
            "second derivative."
        ),
        hint="Starting from which derivative does one more differentiation give the third?",
    ),
    Misconception(
        exercise_id="09.third_derivative",
        label="backward on f",
        build_answer=lambda: _derivative_in_grad(1),
        message=(
            "x's gradient holds f'(x), the first derivative: the backward pass started from f "
            "itself. Take two derivatives first (keeping their graphs), then run the backward pass "
            "from the second."
        ),
        hint=(
            "How many derivatives must be taken before the backward pass, for it to give the third?"
        ),
    ),
    # --- 09.train_both ---
    Misconception(
        exercise_id="09.train_both",
        label="loss tensors stored",
        build_answer=lambda: _train_both("tensors kept"),
        message=(
            "The loss values are right, but your list holds tensors that still carry their graphs, "
            "which keeps every step's graph alive. Store the number, or a tensor cut off from the "
            "graph."
        ),
        hint="What does each item of your list still hold on to?",
    ),
    Misconception(
        exercise_id="09.train_both",
        label="retain_graph with features computed once",
        build_answer=lambda: _train_both("graph retained"),
        message=(
            "Every step trains on the same features, computed once from the first proj: proj's "
            "updates never reach the features the loss sees. Each step needs its own forward pass "
            "through the current proj."
        ),
        hint="Are the features recomputed from the current proj in every step?",
        cause=(
            "retain_graph=True lets every step run, but it keeps the first step's graph, features "
            "and all."
        ),
        evidence=("kw:retain_graph",),
    ),
]


def _second_derivative_sign_dropped(x):
    t = torch.tanh(x)
    return 2 * t * (1 - t**2)


def _second_derivative_not_summed(x):
    x_leaf = x.detach().requires_grad_()
    (d1,) = torch.autograd.grad(torch.tanh(x_leaf).sum(), x_leaf, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x_leaf)
    return d2


def _third_derivative_accumulated():
    x = torch.tensor(1.5, requires_grad=True)
    (d1,) = torch.autograd.grad(x**4, x, create_graph=True)
    d1.backward(retain_graph=True)  # an earlier try, left in x.grad
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    d2.backward()
    return x


def _third_derivative_answered_d2():
    x = torch.tensor(1.5, requires_grad=True)
    (d1,) = torch.autograd.grad(x**4, x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    d2.backward()
    return d2


# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="09.second_derivative_tanh",
        label="sign dropped in the formula by hand",
        build_answer=lambda: _second_derivative_sign_dropped,
        message=(
            "Every value has the wrong sign: 1 - tanh² decreases where tanh increases, so "
            "differentiating it brings a minus sign in front. Letting autograd differentiate twice "
            "avoids this slip altogether."
        ),
        hint="Where does 1 - tanh² decrease, and what sign does its derivative have there?",
    ),
    Misconception(
        exercise_id="09.second_derivative_tanh",
        label="second grad of a non-scalar",
        build_answer=lambda: _second_derivative_not_summed,
        message=(
            "Your function stops with an error: a gradient of a non-scalar output needs the vector "
            "to multiply it with. The first derivative is one number per element, so sum it before "
            "differentiating again; each element depends only on its own x, so the sum keeps them "
            "apart."
        ),
        hint="Is the first derivative a single number, and what does the second derivative need?",
        cause=(
            "torch.autograd.grad needs a scalar output (or grad_outputs): sum the first derivative "
            "before differentiating again."
        ),
        evidence=("call:grad",),
    ),
    Misconception(
        exercise_id="09.third_derivative",
        label="an earlier backward left in x.grad",
        build_answer=_third_derivative_accumulated,
        message=(
            "x's gradient holds more than one derivative (the third plus the second): an earlier "
            "backward pass (a try on the first derivative, or a cell run twice) had already put a "
            "value there, and backward passes add to it. Make x afresh before the final backward "
            "pass, or clear its gradient."
        ),
        hint="What did x's gradient hold before the final backward pass?",
    ),
    Misconception(
        exercise_id="09.third_derivative",
        label="answered with the second derivative",
        build_answer=_third_derivative_answered_d2,
        message=(
            "This is the second derivative tensor, a result inside the graph, not a leaf. The "
            "backward pass writes into the gradient of the leaf x: answer with x."
        ),
        hint="Which tensor is the leaf whose gradient holds the third derivative?",
    ),
]

MISCONCEPTIONS += [
    Misconception(
        exercise_id="09.train_both",
        label="gradients not cleared",
        build_answer=lambda: _train_both("gradients not cleared"),
        message=(
            "The graph is rebuilt every iteration now, but the gradients are never cleared, so "
            "each update uses the sum of all the gradients so far. Clear the gradients after every "
            "update, as the original loop did."
        ),
        hint="What do proj's and head's gradients hold at the second update?",
    ),
]

MISCONCEPTIONS += [
    Misconception(
        exercise_id="09.carry_hidden",
        label="hidden state reset every chunk",
        build_answer=lambda: carry_hidden_losses("reset"),
        message=(
            "Each chunk starts from a zero hidden state, so the model forgets the sequence so far: "
            "the first chunk is right, the later ones are not. Keep h's value and cut only its "
            "history."
        ),
        hint="Should h's value survive into the next chunk, or only its history be cut?",
    ),
    Misconception(
        exercise_id="09.carry_hidden",
        label="hidden state detached at every time step",
        build_answer=lambda: carry_hidden_losses("per step"),
        message=(
            "Your losses are those of a run where h is cut from the graph at every time step, so "
            "each backward pass reaches only one step back inside the chunk and the updates "
            "differ. Cut it once per chunk, before the chunk's first step."
        ),
        hint="How often should h's history be cut: every time step, or once per chunk?",
    ),
    Misconception(
        exercise_id="09.carry_hidden",
        label="gradients never cleared",
        build_answer=lambda: carry_hidden_losses("grads kept"),
        message=(
            "The graph problem is solved, but the gradients are never cleared, so each update adds "
            "the gradients of all earlier chunks. Clear them after every update, as the loop did."
        ),
        hint="What do the weights' gradients hold at the second chunk's update?",
    ),
]

MISCONCEPTIONS += [
    Misconception(
        exercise_id="09.gradient_penalty",
        label="loss gradient counted twice",
        build_answer=lambda: penalised_leaf("counted twice"),
        message=(
            "The loss counts twice in w's gradient, which also still carries a graph that leads "
            "back to w: the inner gradient was left in w's gradient and the final backward pass "
            "added onto it. Get the inner gradient without storing it, or clear w's gradient "
            "before the final backward pass."
        ),
        hint="What did w's gradient already hold when the final backward pass ran?",
        cause=(
            "loss.backward(create_graph=True) leaves the loss's gradient in w.grad, and the final "
            "backward() adds onto it."
        ),
        evidence=("call:backward", "kw:create_graph"),
    ),
    Misconception(
        exercise_id="09.gradient_penalty",
        label="retain_graph instead of create_graph",
        build_answer=lambda: penalised_leaf("retain_graph"),
        message=(
            "The penalty adds nothing to w's gradient: the inner gradient has no history, so the "
            "penalty is a constant. The gradient itself must be recorded as a graph."
        ),
        hint="Can a gradient that was not recorded as a graph pass a gradient back to w?",
        cause=(
            "retain_graph=True keeps the loss's graph for the second backward(), but it does not "
            "record the inner gradient: create_graph=True does."
        ),
        evidence=("kw:retain_graph",),
    ),
    Misconception(
        exercise_id="09.gradient_penalty",
        label="penalty on the weights",
        build_answer=lambda: penalised_leaf("weight decay"),
        message=(
            "Your values are those of a penalty on w itself (weight decay). The task penalises the "
            "size of the loss's gradient with respect to w."
        ),
        hint="What does the task's penalty measure: w, or the loss's gradient with respect to w?",
    ),
]
