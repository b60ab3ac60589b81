"""Typical wrong answers to lesson 07's exercises (detach and no_grad)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _predict_with_graph(weight, inputs):
    torch.no_grad()  # creates the context manager but never enters it
    return inputs @ weight


def _stop_gradient(detached: str):
    w = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor(3.0)
    prediction = w * x
    target = 2 * w + 1
    if detached == "prediction":
        prediction = prediction.detach()
    loss = (prediction - target) ** 2
    loss.backward()
    return w


def _stop_gradient_detached_target():
    w = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor(3.0)
    ((w * x - (2 * w + 1).detach()) ** 2).backward()
    return w


def _seeded_model(seed, n_in, n_hidden):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(n_in, n_hidden), torch.nn.Tanh(), torch.nn.Linear(n_hidden, 1)
    )


def _second_layer_after_training(freeze: str):
    from course_helpers.environment.notebook import cpu_generator

    with torch.random.fork_rng(devices=[]):
        model = _seeded_model(6, 3, 4)
    g = cpu_generator(6)
    inputs = torch.randn(8, 3, generator=g)
    targets = torch.randn(8, 1, generator=g)
    if freeze == "nothing":
        model[0].requires_grad = False  # a plain attribute of the module: freezes nothing
    if freeze == "first weight only":
        model[0].weight.requires_grad_(False)
    if freeze == "second layer":
        model[2].requires_grad_(False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()
    return model[2].weight


def _evaluate(mistake: str):
    from course_helpers.environment.notebook import cpu_generator

    with torch.random.fork_rng(devices=[]):
        model = _seeded_model(7, 4, 8)
    model.eval()  # the lesson's loop calls it; it changes nothing here (no dropout)
    g = cpu_generator(7)
    batches = [(torch.randn(10, 4, generator=g), torch.randn(10, 1, generator=g)) for _ in range(3)]
    total = 0.0
    with torch.no_grad() if mistake == "tensor total" else torch.enable_grad():
        for xb, yb in batches:
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            total += loss if mistake in ("tensor total", "unchanged") else loss.item()
    if mistake == "divided by the batch size":
        return total / len(xb), loss
    return total / len(batches), loss


MISCONCEPTIONS = [
    # --- 07.predict_no_grad ---
    Misconception(
        exercise_id="07.predict_no_grad",
        label="graph recorded",
        build_answer=lambda: _predict_with_graph,
        message=(
            "Your function's result records a graph (it requires grad): the product was recorded "
            "because weight requires grad. Recording must be switched off for the code that "
            "computes it."
        ),
        hint="Which statement switches recording off for the lines indented under it?",
        cause=(
            "torch.no_grad() switches recording off only for the code indented under a `with` "
            "statement; called on its own line it only creates the context manager."
        ),
        evidence=("call:no_grad",),
    ),
    # --- 07.stop_gradient ---
    Misconception(
        exercise_id="07.stop_gradient",
        label="target not detached",
        build_answer=lambda: _stop_gradient("none"),
        message=(
            "w's gradient also includes the path through the target, because the target is "
            "computed from w: the optimizer would move the target toward the prediction. Cut the "
            "target out of the graph before the loss uses it."
        ),
        hint="Through which two paths does the loss depend on w, and which one should stay fixed?",
    ),
    Misconception(
        exercise_id="07.stop_gradient",
        label="prediction detached instead",
        build_answer=lambda: _stop_gradient("prediction"),
        message=(
            "w's gradient comes only through the target, the part that was meant to stay fixed: "
            "the prediction was cut out of the graph instead. Cut the target out and let the "
            "gradient flow through the prediction."
        ),
        hint="Which of the two, prediction or target, should the gradient flow through?",
    ),
    # --- 07.freeze_first ---
    Misconception(
        exercise_id="07.freeze_first",
        label="nothing frozen",
        build_answer=lambda: _second_layer_after_training("nothing"),
        message=(
            "The first layer trained too, so the second layer learned on moving inputs. A "
            "parameter that does not require grad gets no gradient, and the optimizer skips it: "
            "switch that off for model[0] before training."
        ),
        hint="Which layer's parameters must stop requiring grad, and before what?",
        cause=(
            "assigning `requires_grad = False` switches off a tensor's flag only when the target "
            "is a tensor: on a module (`model[0].requires_grad = False`) it just adds a plain "
            "Python attribute, and every parameter keeps requiring grad. "
            "`model[0].requires_grad_(False)`, with the underscore, switches off each of them."
        ),
        evidence=("attr:requires_grad",),
    ),
    Misconception(
        exercise_id="07.freeze_first",
        label="only the weight frozen",
        build_answer=lambda: _second_layer_after_training("first weight only"),
        message=(
            "Your values are those of a run in which model[0]'s weight was frozen and its bias "
            "kept training. Every parameter of model[0] must be frozen."
        ),
        hint="Which parameters does model[0] hold, and does each of them still require grad?",
    ),
    Misconception(
        exercise_id="07.freeze_first",
        label="the second layer frozen",
        build_answer=lambda: _second_layer_after_training("second layer"),
        message=(
            "The second layer's weight does not require grad and never moved from its initial "
            "values: the second layer was frozen. The layer to freeze is model[0]; model[2] must "
            "keep training."
        ),
        hint="Which layer does the task freeze, and which must keep training?",
    ),
    # --- 07.eval_loop_fix ---
    Misconception(
        exercise_id="07.eval_loop_fix",
        label=".item() without no_grad",
        build_answer=lambda: _evaluate("item only"),
        message=(
            "Your mean loss is a number now, but the last batch's loss still records a graph: "
            "every forward pass still builds one. Run the loop with recording switched off so that "
            "none is built."
        ),
        hint="Does taking the numbers out stop the forward passes from being recorded?",
        cause=(
            ".item() makes the total a float, so the graphs are no longer kept alive, but every "
            "forward pass still records one."
        ),
        evidence=("call:item",),
    ),
    Misconception(
        exercise_id="07.eval_loop_fix",
        label="total stays a tensor",
        build_answer=lambda: _evaluate("tensor total"),
        message=(
            "No graph is built now, but your mean loss is still a tensor. Take each batch's number "
            "out of its tensor when you add it."
        ),
        hint="What kind of value should the mean loss be: a tensor or a Python number?",
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="07.no_grad_parentheses",
        label="no error: like the decorator",
        build_answer=lambda: None,
        message=(
            "As a decorator, @torch.no_grad works with or without parentheses, but a with "
            "statement calls __enter__ on the object it is given, and here that object is the "
            "class torch.no_grad itself, not an instance: Python refuses."
        ),
        hint="What does the with statement get here: the class, or an object made by calling it?",
    ),
]


def _predict_no_parentheses(weight, inputs):
    with torch.no_grad:
        return inputs @ weight


def _predict_swapped(weight, inputs):
    with torch.no_grad():
        return weight @ inputs


MISCONCEPTIONS += [
    Misconception(
        exercise_id="07.predict_no_grad",
        label="with torch.no_grad (no parentheses)",
        build_answer=lambda: _predict_no_parentheses,
        message=(
            "Your function stops with a TypeError: the with statement was handed something that is "
            "not a context manager. It needs an object you get by calling, not the class itself."
        ),
        hint="Does the with statement get the class, or an instance made by calling it?",
        cause=(
            "`with torch.no_grad:` hands the with statement the class, not an instance of it, and "
            "Python refuses. Call it: `with torch.no_grad():`."
        ),
        evidence=("with:no_grad",),
    ),
    Misconception(
        exercise_id="07.predict_no_grad",
        label="weight @ inputs",
        build_answer=lambda: _predict_swapped,
        message=(
            "Your function stops with an error: the matrix product's operands are in the wrong "
            "order. Each row of inputs is one example with one number per feature, and weight "
            "holds one number per feature: put the operand whose last size matches weight's first "
            "size on the left."
        ),
        hint="Which operand's last size matches the other's first size?",
    ),
]

MISCONCEPTIONS += [
    Misconception(
        exercise_id="07.eval_loop_fix",
        label="model.eval() only",
        build_answer=lambda: _evaluate("unchanged"),
        message=(
            "Your mean loss is still a tensor, and every forward pass still builds a graph that "
            "the tensor total keeps alive. Recording must be switched off for the loop, and each "
            "batch's number taken out of its tensor."
        ),
        hint="What switches autograd's recording off for the loop?",
        cause=(
            "model.eval() switches layers such as dropout to evaluation behaviour; it does not "
            "stop autograd from recording."
        ),
        evidence=("call:eval",),
    ),
    Misconception(
        exercise_id="07.eval_loop_fix",
        label="divided by the batch size",
        build_answer=lambda: _evaluate("divided by the batch size"),
        message=(
            "Your mean loss is the total over the batch count times too small: each batch's loss "
            "is already a mean over its samples, so the total is a sum of one number per batch. "
            "Average it over the number of batches, not over the samples in one batch."
        ),
        hint="The total adds one number per batch: what do you divide it by to get their mean?",
    ),
]

MISCONCEPTIONS += [
    Misconception(
        exercise_id="07.stop_gradient",
        label="answered with w.grad",
        build_answer=lambda: _stop_gradient_detached_target().grad,
        message=(
            "Your answer holds w's gradient, not w: the check reads the gradient from w itself "
            "(and checks that w is still a leaf that requires grad). Answer with w."
        ),
        hint="Which tensor does the check want: the gradient, or the leaf that holds it?",
    ),
]
