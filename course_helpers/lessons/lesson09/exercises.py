"""Checked exercises for lesson 09: graph lifetime (freeing, retain_graph, create_graph)."""

from __future__ import annotations

import torch

from course_helpers.environment.notebook import cpu_generator
from course_helpers.lessons.model import Exercise

LESSON = "09_graph_lifetime"


def _two_losses_data():
    g = cpu_generator(9)
    w = torch.randn(3, 2, generator=g).requires_grad_()
    inputs = torch.randn(5, 3, generator=g)
    return w, inputs


def _summed_losses_leaf():
    w, inputs = _two_losses_data()
    h = torch.tanh(inputs @ w)
    loss_a = h.pow(2).mean()
    loss_b = (h[:, 0] - h[:, 1]).abs().mean()
    (loss_a + loss_b).backward()
    return w


def _second_derivative_of_tanh(x):
    t = torch.tanh(x)
    return -2 * t * (1 - t**2)


def _tanh_cases(g):
    return [
        (torch.randn(6, generator=g),),
        (torch.randn(2, 3, generator=g),),
        (torch.tensor([0.0]),),  # a single element (tanh'' is 0 at 0)
        (torch.zeros(0),),  # empty
    ]


def _third_derivative_leaf():
    x = torch.tensor(1.5, requires_grad=True)
    (d1,) = torch.autograd.grad(x**4, x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    d2.backward()
    return x


def _train_both_data():
    g = cpu_generator(5)
    proj = torch.randn(4, 3, generator=g).requires_grad_()
    head = torch.randn(3, 1, generator=g).requires_grad_()
    data = torch.randn(10, 4, generator=g)
    target = torch.randn(10, 1, generator=g)
    return proj, head, data, target


def _train_both_losses():
    proj, head, data, target = _train_both_data()
    losses = []
    for _ in range(5):
        features = torch.tanh(data @ proj)
        loss = ((features @ head - target) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for p in (proj, head):
                p -= 0.1 * p.grad
                p.grad = None
        losses.append(loss.item())
    return {"losses": losses, "items holding a graph": 0}


def _carry_hidden_data():
    """A 12-step sequence, its targets, and a tiny recurrent cell's weights (w_in, w_h, w_out)."""
    g = cpu_generator(19)
    sequence = torch.randn(12, 2, generator=g)
    targets = torch.randn(12, 1, generator=g)
    weights = tuple(
        (0.5 * torch.randn(*shape, generator=g)).requires_grad_()
        for shape in ((2, 4), (4, 4), (4, 1))
    )
    return sequence, targets, weights


def carry_hidden_losses(mistake: str = "") -> list[float]:
    """Chunk losses of truncated backpropagation through time: h detached once per chunk.

    `mistake` gives a typical wrong version: "reset" (h zeroed every chunk), "per step"
    (h detached at every time step) or "grads kept" (.grad never cleared)."""
    sequence, targets, (w_in, w_h, w_out) = _carry_hidden_data()
    h = torch.zeros(1, 4)
    losses = []
    for start in (0, 4, 8):
        h = torch.zeros(1, 4) if mistake == "reset" else h.detach()
        loss = torch.zeros(())
        for t in range(start, start + 4):
            if mistake == "per step":
                h = h.detach()
            h = torch.tanh(sequence[t : t + 1] @ w_in + h @ w_h)
            loss = loss + (h @ w_out - targets[t : t + 1]).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (w_in, w_h, w_out):
                p -= 0.1 * p.grad
                if mistake != "grads kept":
                    p.grad = None
        losses.append(loss.item())
    return losses


def _penalty_data():
    """A weight vector that requires grad and a batch of inputs for the gradient penalty."""
    g = cpu_generator(29)
    w = torch.randn(3, generator=g).requires_grad_()
    xs = torch.randn(6, 3, generator=g)
    return w, xs


def penalised_leaf(mistake: str = ""):
    """w after backward() of loss + 0.1 * |d loss / d w|^2, the inner gradient by autograd.grad.

    `mistake`: "counted twice" (loss.backward(create_graph=True), .grad kept), "retain_graph"
    (autograd.grad with retain_graph instead of create_graph) or "weight decay" (a penalty on
    w itself)."""
    import warnings

    w, xs = _penalty_data()
    loss = (xs @ w).pow(2).mean()
    if mistake == "counted twice":
        with warnings.catch_warnings():  # torch's reference-cycle warning; not here
            warnings.simplefilter("ignore")
            loss.backward(create_graph=True)
        grad_w = w.grad
    elif mistake == "retain_graph":
        (grad_w,) = torch.autograd.grad(loss, w, retain_graph=True)
    else:
        (grad_w,) = torch.autograd.grad(loss, w, create_graph=True)
    penalty = w.pow(2).sum() if mistake == "weight decay" else grad_w.pow(2).sum()
    (loss + 0.1 * penalty).backward()
    return w


EXERCISES = [
    # ---- Check yourself (lesson notebook) ----
    Exercise(
        id="09.quiz_second_backward",
        title="Calling backward() twice",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "x.grad doubles", "b": "a RuntimeError", "c": "x.grad stays the same"},
        explanations={
            "a": "That is what retain_graph=True would give. Without it, the first backward() "
            "freed what x ** 2 saved for its backward formula (its input x), so the second call "
            "cannot run.",
            "c": "A backward() that runs adds to .grad; this one cannot run, because the saved "
            "tensors are gone, so it raises an error instead.",
        },
        hints=(
            "What does x ** 2 need to remember for its backward formula?",
            "backward() frees the saved tensors after using them (unless retain_graph=True).",
            "The second call finds the saved x freed: 'Trying to backward through the graph a "
            "second time'.",
        ),
        solution='check("09.quiz_second_backward", "b")',
    ),
    Exercise(
        id="09.quiz_two_losses",
        title="Two losses, one graph",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "loss_a.backward(retain_graph=True), then loss_b.backward()",
            "b": "(loss_a + loss_b).backward()",
            "c": "loss_a.detach(), then loss_b.backward()",
        },
        explanations={
            "a": "It runs and gives the same gradients, but walks the shared graph twice and keeps "
            "its saved tensors alive in between. Summing does it in one pass.",
            "c": "detach() returns a new tensor and changes nothing about loss_a; loss_a would "
            "simply never be backpropagated.",
        },
        hints=(
            "Gradients are linear: what is the gradient of a sum?",
            "One backward() through the sum gives the sum of both gradients, in one pass.",
            "(loss_a + loss_b).backward()",
        ),
        solution='check("09.quiz_two_losses", "b")',
    ),
    Exercise(
        id="09.quiz_keep_history",
        title="What a kept loss keeps alive",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "nothing",
            "b": "every step's graph nodes, but not their saved tensors",
            "c": "every step's graph nodes and saved tensors",
        },
        explanations={
            "a": "Each kept loss still has a grad_fn, and through it every node of its step's "
            "graph stays reachable.",
            "c": "backward() already freed the saved tensors of each step; what remains is the "
            "chain of nodes (the lesson's history loop showed 0.0 KiB of saved tensors).",
        },
        hints=(
            "A tensor keeps its grad_fn, and a node keeps the nodes after it.",
            "What did backward() already free in each step?",
            "The nodes stay (kept through loss.grad_fn), the saved tensors were freed by "
            "backward().",
        ),
        solution='check("09.quiz_keep_history", "b")',
    ),
    # ---- Exercises (solutions notebook) ----
    Exercise(
        id="09.backward_twice_error",
        title="The error of a second backward()",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        hints=(
            "Run the snippet in a scratch cell and read the first word of the last line.",
            "It is the general-purpose error torch raises for problems found while running, "
            "not a TypeError or ValueError.",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="09.sum_losses",
        forbid=("many:backward|grad", "kw:backward|grad.retain_graph"),
        require=("call:backward|grad",),  # a backward pass, not a .grad set by hand
        task_says={
            "both": "check:attributes:grad",
            "a single backward pass": "check:many:backward|grad",
            "walks the graph once": "check:kw:backward|grad.retain_graph",
        },
        title="One backward() for two losses",
        lesson=LESSON,
        kind="autograd",
        build_reference=_summed_losses_leaf,
        attributes=("grad", "is_leaf", "requires_grad"),
        hints=(
            "The second backward() fails because the shared tanh(inputs @ w) part was freed.",
            "Do not reach for retain_graph: combine the two losses into one scalar first.",
            "(loss_a + loss_b).backward(), then answer = w",
        ),
        solution=(
            "h = torch.tanh(inputs @ w)\n"
            "loss_a = h.pow(2).mean()\n"
            "loss_b = (h[:, 0] - h[:, 1]).abs().mean()\n"
            "(loss_a + loss_b).backward()\n"
            "answer = w"
        ),
    ),
    Exercise(
        id="09.second_derivative_tanh",
        min_calls={"grad": (lambda x: 2 if x.numel() else 0, "two calls to torch.autograd.grad")},
        task_says={
            "computed by autograd": "check:min_calls:grad",
            "do not modify it": "check:inputs_unchanged",
        },
        title="Second derivative of tanh with create_graph",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _second_derivative_of_tanh,
        cases=_tanh_cases,
        hints=(
            "Make a copy of x that requires grad, compute torch.tanh of it, and differentiate "
            "twice with torch.autograd.grad.",
            "The first torch.autograd.grad call needs create_graph=True; both calls need a scalar, "
            "so differentiate .sum() of the elementwise result.",
            "Detach x and switch requires_grad on for that new leaf (x itself stays untouched); "
            "take torch.autograd.grad of the summed tanh with respect to the leaf, keeping the "
            "graph of that first derivative (create_graph=True) so it can be differentiated "
            "again; then call torch.autograd.grad once more on the sum of the first derivative "
            "and return the result.",
        ),
        context="keep_graph",
        solution=(
            "def second_derivative_of_tanh(x):\n"
            "    x_leaf = x.detach().requires_grad_()\n"
            "    (d1,) = torch.autograd.grad(torch.tanh(x_leaf).sum(), x_leaf, create_graph=True)\n"
            "    (d2,) = torch.autograd.grad(d1.sum(), x_leaf)\n"
            "    return d2"
        ),
    ),
    Exercise(
        id="09.grad_has_graph",
        task_says={
            "Without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Does the gradient require grad?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (True, False),
        options=None,
        hints=(
            "create_graph=True records the backward pass as a graph; without it the gradient "
            "has no history.",
            "A tensor with a history (a grad_fn) has requires_grad=True.",
        ),
        reveal_values=False,
        solution="answer = (True, False)",
    ),
    Exercise(
        id="09.third_derivative",
        require=("call:grad", "call:backward", "many:grad"),
        task_says={
            "by hand": "advice: a worked value the task gives, not an instruction",
            "use torch.autograd.grad twice": "check:many:grad",
        },
        title="A third derivative in x.grad",
        lesson=LESSON,
        kind="autograd",
        build_reference=_third_derivative_leaf,
        attributes=("grad", "is_leaf", "requires_grad"),
        hints=(
            "Two torch.autograd.grad calls give the second derivative; backward() on it gives the "
            "third in x.grad.",
            "Both grad calls need create_graph=True, otherwise the next step has no graph to "
            "differentiate.",
            "Make x the 0-dim leaf 1.5 that requires grad; differentiate x**4 with "
            "torch.autograd.grad, keeping the graph, then differentiate that first derivative "
            "the same way; the result is f''(x) with a graph of its own, and calling backward() "
            "on it writes f'''(1.5) into x.grad. Answer with x.",
        ),
        context="keep_graph",
        solution=(
            "x = torch.tensor(1.5, requires_grad=True)\n"
            "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\n"
            "(d2,) = torch.autograd.grad(d1, x, create_graph=True)\n"
            "d2.backward()\n"
            "answer = x"
        ),
    ),
    Exercise(
        id="09.train_both",
        forbid=("kw:backward|grad.retain_graph",),
        task_says={
            "no retain_graph": "check:kw:backward|grad.retain_graph",
            "keeping the same five steps and learning rate": (
                "check:value (other steps or another rate give other losses)"
            ),
        },
        title="Fix a loop that reuses a graph",
        lesson=LESSON,
        kind="value",
        build_reference=_train_both_losses,
        hints=(
            "Bug 1: which graph does the second step's backward() walk through, and who built "
            "it? Bug 2: what does each item of `losses` keep alive?",
            "proj must learn, so the graph through proj must be rebuilt every step: compute the "
            "features inside the loop. A loss tensor keeps its step's graph: store a Python "
            "number, or a tensor cut from the graph, instead.",
            "Move `features = torch.tanh(data @ proj)` into the loop (first line of the body) and "
            "append loss.item() (or loss.detach()) instead of loss; answer = losses.",
        ),
        solution=(
            "losses = []\n"
            "for _ in range(5):\n"
            "    features = torch.tanh(data @ proj)\n"
            "    loss = ((features @ head - target) ** 2).mean()\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        for p in (proj, head):\n"
            "            p -= 0.1 * p.grad\n"
            "            p.grad = None\n"
            "    losses.append(loss.item())\n"
            "answer = losses"
        ),
    ),
    Exercise(
        id="09.carry_hidden",
        forbid=("kw:backward|grad.retain_graph",),
        task_says={
            "no retain_graph": "check:kw:backward|grad.retain_graph",
        },
        title="Carry a hidden state across chunks",
        lesson=LESSON,
        kind="value",
        build_reference=carry_hidden_losses,
        hints=(
            "The second chunk's backward() fails. Which graph does the carried h still lead "
            "back into, and what did the first backward() do to it?",
            "The next chunk needs h's value but not its history: cut h from the graph once "
            "per chunk. retain_graph does not help (the update changed w_h in place).",
            "At the start of each chunk (first line inside `for start in ...`) write "
            "h = h.detach(); keep h carried over (do not reset it to zeros) and keep the rest "
            "of the loop as it is. answer = losses.",
        ),
        solution=(
            "h = torch.zeros(1, 4)\n"
            "losses = []\n"
            "for start in (0, 4, 8):\n"
            "    h = h.detach()\n"
            "    loss = torch.zeros(())\n"
            "    for t in range(start, start + 4):\n"
            "        h = torch.tanh(sequence[t : t + 1] @ w_in + h @ w_h)\n"
            "        loss = loss + (h @ w_out - targets[t : t + 1]).pow(2).sum()\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        for p in (w_in, w_h, w_out):\n"
            "            p -= 0.1 * p.grad\n"
            "            p.grad = None\n"
            "    losses.append(loss.item())\n"
            "answer = losses"
        ),
    ),
    Exercise(
        id="09.gradient_penalty",
        forbid=("kw:backward.create_graph",),
        require=("call:backward|grad",),
        task_says={
            "without a leak": "check:kw:backward.create_graph",
        },
        title="A gradient penalty without a leak",
        lesson=LESSON,
        kind="autograd",
        build_reference=penalised_leaf,
        attributes=("grad", "is_leaf", "requires_grad"),
        hints=(
            "The penalty is built from a gradient, so that gradient must have a graph of its "
            "own: which argument gives it one?",
            "loss.backward(create_graph=True) would also store that gradient in w.grad, where "
            "the final backward() adds onto it. torch.autograd.grad returns it instead.",
            "Get the inner gradient with torch.autograd.grad(loss, w, create_graph=True), "
            "build the penalty from it, then call backward() once on loss + 0.1 * penalty. "
            "answer = w.",
        ),
        solution=(
            "loss = (xs @ w).pow(2).mean()\n"
            "(grad_w,) = torch.autograd.grad(loss, w, create_graph=True)\n"
            "penalty = grad_w.pow(2).sum()\n"
            "(loss + 0.1 * penalty).backward()\n"
            "answer = w"
        ),
    ),
]
