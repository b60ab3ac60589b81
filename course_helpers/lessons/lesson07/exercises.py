"""Checked exercises for lesson 07: no_grad, inference_mode, detach, freezing, stop-gradient."""

from __future__ import annotations

import sys

import torch

from course_helpers.lessons.model import Exercise

LESSON = "07_detach_and_no_grad"


def _predict(weight, inputs):
    with torch.no_grad():
        return inputs @ weight


def _predict_cases(g):
    def weight(n):
        return torch.randn(n, 1, generator=g).requires_grad_()

    return [
        (weight(3), torch.randn(5, 3, generator=g)),
        (weight(4), torch.randn(2, 4, generator=g)),
        (weight(3), torch.randn(1, 3, generator=g)),  # a single example
        (weight(3), torch.randn(0, 3, generator=g)),  # an empty batch
    ]


def _stop_gradient_w():
    w = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor(3.0)
    prediction = w * x
    target = (2 * w + 1).detach()
    loss = (prediction - target) ** 2
    loss.backward()
    return w


def _missing_parentheses_error():
    """The exception ``with torch.no_grad:`` raises on this Python.

    Python 3.11 and newer raise TypeError; Python 3.10 raised AttributeError: __enter__.
    """
    try:
        with torch.no_grad:  # the bug the exercise shows: a class, not an instance
            pass
    except Exception as error:
        return type(error)
    raise AssertionError("`with torch.no_grad:` unexpectedly ran")


def _missing_parentheses_notes():
    """Feedback for wrong answers to 07.no_grad_parentheses on this Python version."""
    notes = {"RuntimeError": "Autograd never gets involved: Python fails at the with statement."}
    if sys.version_info >= (3, 11):
        notes["AttributeError"] = (
            "torch.no_grad exists. Python 3.10 did report this mistake as AttributeError: "
            "__enter__, but your Python (3.11 or newer) raises a different error: run the code."
        )
    else:
        notes["TypeError"] = (
            "Python 3.11 and newer raise TypeError here, but your Python is older and reports "
            "the mistake differently: run the code."
        )
    return notes


def _seeded_model(seed, n_in, n_hidden):
    """A Linear-Tanh-Linear model initialised as after ``torch.manual_seed(seed)``.

    References are built in a forked RNG state (exercises.model.fresh_rng), so seeding here
    leaves the learner's RNG alone.
    """
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(n_in, n_hidden), torch.nn.Tanh(), torch.nn.Linear(n_hidden, 1)
    )


def _train(model, inputs, targets, steps=10):
    """The solution notebook's train(): SGD on every parameter of the model."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()


def _frozen_first_layer():
    """07.freeze_first: the second layer's weight after training with model[0] frozen."""
    from course_helpers.environment.notebook import cpu_generator

    model = _seeded_model(6, 3, 4)
    g = cpu_generator(6)
    inputs = torch.randn(8, 3, generator=g)
    targets = torch.randn(8, 1, generator=g)
    model[0].requires_grad_(False)
    _train(model, inputs, targets)
    return model[2].weight.detach().clone().requires_grad_()


def _eval_setup():
    """Model and batches of 07.eval_loop_fix (the solution notebook builds the same)."""
    from course_helpers.environment.notebook import cpu_generator

    model = _seeded_model(7, 4, 8)
    g = cpu_generator(7)
    batches = [(torch.randn(10, 4, generator=g), torch.randn(10, 1, generator=g)) for _ in range(3)]
    return model, batches


def _eval_mean_loss_and_last_loss():
    """(mean_loss, loss): the mean as a float and the last batch's loss, built under no_grad.

    The last loss shows whether a graph was built: under no_grad it has requires_grad=False.
    """
    model, batches = _eval_setup()
    total = 0.0
    with torch.no_grad():
        for xb, yb in batches:
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            total += loss.item()
    return total / len(batches), loss


EXERCISES = [
    # ----------------------------------------------------------------- lesson quizzes
    Exercise(
        id="07.quiz_no_grad_result",
        title="What no_grad returns",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "a tensor with requires_grad=True and grad_fn=MulBackward0",
            "b": "a leaf that does not require grad",
            "c": "an inference tensor",
        },
        explanations={
            "b": "Nothing is recorded inside no_grad: no grad_fn, so y is a leaf constant.",
            "a": "That is what you get with grad mode on; inside no_grad nothing is recorded.",
            "c": "Only torch.inference_mode() makes inference tensors; no_grad results are "
            "ordinary tensors.",
        },
        hints=(
            "Inside `with torch.no_grad():` is the multiplication recorded?",
            "Without recording there is no grad_fn; a tensor without grad_fn is a leaf.",
            "y has requires_grad=False and grad_fn=None: option b.",
        ),
        solution='check("07.quiz_no_grad_result", "b")',
    ),
    Exercise(
        id="07.quiz_detach_shares",
        title="detach() shares storage",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "a",
        options={
            "a": "a is doubled too",
            "b": "nothing, b is a copy",
            "c": "mul_ raises an error because a requires grad",
        },
        explanations={
            "a": "detach() returns a new tensor object over the same storage, so the in-place "
            "change shows up in a.",
            "b": "detach() does not copy the data; detach().clone() would.",
            "c": "b does not require grad, so in-place changes to it are allowed (autograd may "
            "complain later, at backward, if it saved a).",
        },
        hints=(
            "Does detach() copy the numbers, or only drop the history?",
            "In the lesson, b.data_ptr() == a.data_ptr() printed True.",
            "They share storage: option a.",
        ),
        solution='check("07.quiz_detach_shares", "a")',
    ),
    Exercise(
        id="07.quiz_eval_leak",
        title="The leaking evaluation loop",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "total += loss.item() without no_grad",
            "b": "total += loss inside no_grad",
            "c": "total += loss without no_grad",
        },
        explanations={
            "c": "total becomes a tensor whose grad_fn chain reaches every batch's graph.",
            "a": "loss.item() is a Python float: each graph is freed when loss is rebound.",
            "b": "Inside no_grad no graph is built at all, so there is nothing to keep alive.",
        },
        hints=(
            "For a graph to stay alive, something must keep referring to it.",
            "Which loop makes total a tensor that has a grad_fn?",
            "Without no_grad, total += loss chains every batch's graph: option c.",
        ),
        solution='check("07.quiz_eval_leak", "c")',
    ),
    # ----------------------------------------------------------------- exercises
    Exercise(
        id="07.predict_no_grad",
        task_says={
            "without a graph": "check:must_build_no_graph",
            "without recording a graph": "check:must_build_no_graph",
            "The result must not require grad": (
                "check:value (requires_grad of the output is compared)"
            ),
        },
        title="Predictions without a graph",
        lesson=LESSON,
        kind="function",
        must_build_no_graph=True,
        forbid=("attr:data",),
        context="no_graph",
        build_reference=lambda: _predict,
        cases=_predict_cases,
        hints=(
            "The numbers are just inputs @ weight; the point is what autograd records.",
            "Compute the product inside `with torch.no_grad():` so nothing is recorded.",
            "Open a `with torch.no_grad():` block inside the function and compute and"
            " return the matrix product of the inputs and the weight there.",
        ),
        solution=(
            "def predict(weight, inputs):\n"
            "    with torch.no_grad():\n"
            "        return inputs @ weight"
        ),
    ),
    Exercise(
        id="07.no_grad_parentheses",
        title="The missing parentheses",
        lesson=LESSON,
        kind="error",
        build_reference=_missing_parentheses_error,
        explanations=_missing_parentheses_notes(),
        hints=(
            "Look at what follows `with`: is it an object or a class?",
            "torch.no_grad is a class; the with statement needs an instance with __enter__ "
            "and __exit__. Python itself complains, not torch.",
            "Python 3.11 and newer raise TypeError: 'type' object does not support the context "
            "manager protocol (Python 3.10 raised AttributeError: __enter__).",
        ),
        solution="answer = TypeError  # Python 3.10 raised AttributeError instead",
    ),
    Exercise(
        id="07.inference_reuse",
        title="Which line fails?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "f = torch.tanh(...) inside inference_mode",
            "b": "doubled = f * 2",
            "c": "loss = (f * w).sum()",
            "d": "loss.backward()",
        },
        explanations={
            "a": "Creating f inside the block is fine: the restrictions on an inference "
            "tensor apply when it is used outside inference mode.",
            "b": "f * 2 involves no tensor that requires grad, so nothing needs saving: allowed.",
            "d": "The code never gets there: the error comes in the forward pass, when autograd "
            "tries to save f for backward.",
        },
        hints=(
            "An inference tensor may be used outside the block as long as autograd does not "
            "need to remember it.",
            "Autograd saves the other factor of a product when one factor requires grad.",
            "f * w saves f for backward: the line loss = (f * w).sum() raises.",
        ),
        solution='answer = "c"',
    ),
    Exercise(
        id="07.detach_copy",
        task_says={
            "no history": "advice: a property of the option asked for, not an instruction",
            "without changing x": "advice: a property of the option asked for, not an instruction",
        },
        title="An independent copy without history",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "x.detach()",
            "b": "x.clone()",
            "c": "x.detach().clone()",
            "d": "x.data",
        },
        explanations={
            "a": "detach() shares storage with x: changing it changes x.",
            "b": "clone() copies the data but is recorded: the copy has grad_fn=CloneBackward0 "
            "and still requires grad.",
            "d": ".data shares storage with x and hides changes from autograd: never use it.",
        },
        hints=(
            "You need two things: no history, and separate memory.",
            "detach() drops the history but shares memory; clone() copies memory but keeps "
            "the history.",
            "Combine them: x.detach().clone().",
        ),
        solution='answer = "c"',
    ),
    Exercise(
        id="07.stop_gradient",
        require=("call:backward|grad",),
        task_says={
            "A target that must not move": "check:attributes:grad",
            "fixed": "check:attributes:grad",
            "Work out dloss/dw by hand first": (
                "advice: a prediction to make before running the cell; the check reads w.grad from "
                "autograd"
            ),
        },
        title="A target that must not move",
        lesson=LESSON,
        kind="autograd",
        build_reference=_stop_gradient_w,
        attributes=("requires_grad", "is_leaf", "grad"),
        hints=(
            "The target 2·w + 1 must act as a constant: which method cuts it out of the graph?",
            "target = (2 * w + 1).detach(); then loss = (prediction - target) ** 2 and "
            "loss.backward(). By hand: dloss/dw = 2·(1.5 − 2)·3 = −3.",
            "Build the prediction from w and x as before; build the target from w "
            "too, but cut it off from the graph with one method call before it enters"
            " the squared error; then backward and answer with w.",
        ),
        solution=(
            "prediction = w * x\ntarget = (2 * w + 1).detach()\n"
            "loss = (prediction - target) ** 2\nloss.backward()\nanswer = w"
        ),
    ),
    Exercise(
        id="07.freeze_first",
        task_says={
            "training leaves it unchanged": (
                "check:value (the second layer learns other values when the first moves)"
            ),
            "second": "check:value (the second layer's weight is compared)",
        },
        title="Freeze the first layer",
        lesson=LESSON,
        kind="value",
        build_reference=_frozen_first_layer,
        hints=(
            "A frozen parameter is one that does not require grad. Freeze only the first layer, "
            "and do it before training, then train and pass model[2].weight.",
            "One call on the module model[0] switches requires_grad off for its weight and its "
            "bias; call train(model, inputs, targets) afterwards.",
            "Turn off requires_grad on every parameter of the first layer (one call "
            "on model[0]), run the given train function, and answer with the last "
            "layer's weight Parameter itself.",
        ),
        solution=(
            "model[0].requires_grad_(False)\ntrain(model, inputs, targets)\n"
            "answer = model[2].weight"
        ),
    ),
    Exercise(
        id="07.eval_loop_fix",
        task_says={
            "Keep the name loss": "check:value (the last batch's loss is read)",
            "must not track gradients": "check:value (its requires_grad is compared)",
        },
        title="Fix the evaluation loop",
        lesson=LESSON,
        kind="value",
        must_build_no_graph=True,
        forbid=("call:detach", "attr:data"),
        require=("with:no_grad|inference_mode",),  # the lesson teaches both for metrics
        context="no_graph",
        build_reference=_eval_mean_loss_and_last_loss,
        hints=(
            "Two fixes: build no graph at all, and accumulate a number rather than a tensor.",
            "Wrap the loop in `with torch.no_grad():` (or `torch.inference_mode()`); inside "
            "it, name each batch's loss `loss` and add loss.item() to total.",
            "Start a float total at 0.0; put the whole loop inside one no_grad block;"
            " for each batch name its MSE loss `loss` and add its Python number to "
            "total; afterwards divide by the number of batches and answer with "
            "(mean_loss, loss).",
        ),
        solution=(
            "total = 0.0\nwith torch.no_grad():\n    for xb, yb in batches:\n"
            "        loss = nn.functional.mse_loss(model(xb), yb)\n"
            "        total += loss.item()\n"
            "mean_loss = total / len(batches)\nanswer = (mean_loss, loss)"
        ),
    ),
    Exercise(
        id="07.frozen_momentum",
        task_says={
            "exactly": "advice: the wording of an option, not an instruction",
        },
        title="A frozen layer that still moves",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "it stays exactly where it was",
            "b": "it keeps moving: its .grad is zeros and momentum still updates it",
            "c": "optimizer.step() raises an error",
            "d": "it is reset to its initial values",
        },
        explanations={
            "a": "That holds when its .grad is None. Here zero_grad(set_to_none=False) left a "
            "tensor of zeros, and the optimizer updates every parameter whose .grad is a tensor.",
            "c": "An optimizer accepts parameters that do not require grad; it only skips those "
            "whose .grad is None.",
            "d": "Nothing in requires_grad_(False) or in the optimizer touches the weight's "
            "history; it only changes what happens from now on.",
        },
        hints=(
            "After freezing, backward() no longer writes into the weight's .grad. What does "
            "zero_grad(set_to_none=False) leave there?",
            "A tensor of zeros, not None: the optimizer does not skip the weight. What does "
            "momentum do with a zero gradient?",
            "The momentum buffer still holds the velocity of the last 100 steps, and each step "
            "applies it again while it decays.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="07.frozen_batchnorm",
        title="Frozen batch norm",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "nothing more",
            "b": "model[:2].eval() after every model.train()",
            "c": "the forward pass under torch.no_grad()",
            "d": "optimizer.zero_grad() before every forward pass",
        },
        explanations={
            "a": "running_mean is a buffer, not a parameter: requires_grad does not govern it. "
            "Batch norm updates it on every forward pass in training mode.",
            "c": "Batch norm updates its running statistics in training mode whether or not "
            "autograd records, and a forward pass under no_grad could not train the rest.",
            "d": "zero_grad() clears gradients; the running statistics are not gradients.",
        },
        hints=(
            "Is running_mean a parameter? What decides whether batch norm updates it?",
            "Batch norm updates its running statistics in training mode. Which call switches "
            "one submodule to evaluation mode?",
            "Put the frozen block in evaluation mode, and again after every call that puts the "
            "whole model back into training mode.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="07.created_in_no_grad",
        title="Created inside no_grad",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "a",
        options={
            "a": "w is a leaf that requires grad, v does not require grad",
            "b": "neither requires grad",
            "c": "both require grad and v has a grad_fn",
            "d": "the first line raises an error",
        },
        explanations={
            "b": "no_grad stops the recording of operations; a factory call with "
            "requires_grad=True still makes a tensor that requires grad.",
            "c": "w * 2 is an operation, and under no_grad operations are not recorded: v has "
            "no grad_fn and does not require grad.",
            "d": "Creating a tensor that requires grad is allowed anywhere; the lesson's "
            "optional part did it inside no_grad.",
        },
        hints=(
            "Which of the two lines is an operation on a tensor, and which only creates one?",
            "no_grad switches off the recording of operations. Does it change what "
            "torch.zeros(..., requires_grad=True) returns?",
            "The factory call behaves as anywhere else; the multiplication is not recorded.",
        ),
        solution='answer = "a"',
    ),
    Exercise(
        id="07.frozen_middle",
        title="A frozen layer in the middle",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "only net[4]'s: backward stops at the frozen layer",
            "b": "net[0]'s and net[4]'s: backward goes through the frozen layer",
            "c": "all three layers', with zeros for net[2]",
            "d": "none: a frozen layer cuts the graph",
        },
        explanations={
            "a": "The frozen layer's input comes from net[0], which requires grad, so the frozen "
            "layer is recorded and backward passes through it (it needs the frozen weight to "
            "do so).",
            "c": "Frozen parameters get no gradient at all: their .grad stays None, not zeros.",
            "d": "Freezing switches off gradients for the layer's own parameters only; what "
            "flows into the layer still requires grad, so the graph goes on.",
        },
        hints=(
            "The lesson's optional part froze the last layer of a model: was its output still "
            "recorded?",
            "A layer is left out of the graph only when nothing that enters it requires grad. "
            "Does the input of net[2] require grad?",
            "net[2]'s input comes from net[0]; the frozen parameters themselves keep .grad None.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="07.frozen_prefix_missed",
        title="A frozen backbone with one weight missed",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "(1) saves fewer bytes",
            "b": "(2) saves fewer bytes",
            "c": "both save the same, because the backbone is frozen",
        },
        explanations={
            "a": "no_grad never records more than grad mode does: under no_grad the backbone "
            "saves nothing at all.",
            "c": "That holds for a complete freeze. The forgotten weight requires grad, so in "
            "(1) autograd records the backbone again from that layer on and saves its "
            "activations.",
        },
        hints=(
            "Does every parameter of the backbone have requires_grad=False?",
            "From the layer of the forgotten weight on, the backbone's results require grad in "
            "(1). What does no_grad do to them in (2)?",
            "Under no_grad nothing is recorded whatever the parameters say; the third row of the "
            "bytes table in the lesson's optional part measured both.",
        ),
        solution='answer = "b"',
    ),
]
