"""Checked exercises for lesson 11: training loops."""

from __future__ import annotations

import torch

from course_helpers.environment.notebook import cpu_generator
from course_helpers.lessons.model import Exercise

LESSON = "11_training_loops"


def _small_data():
    """The data of the exercise notebook: 16 points, 3 features, a known linear rule."""
    g = cpu_generator(11)
    x = torch.randn(16, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.05 * torch.randn(16, 1, generator=g)
    return x, y


# --- 11.gd_step: one gradient-descent step, as a function


def _gd_step(w, x, y, lr):
    w = w.detach().clone().requires_grad_(True)
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        return w - lr * w.grad


def _gd_step_cases(g):
    return [
        (torch.randn(3, 1, generator=g), torch.randn(8, 3, generator=g),
         torch.randn(8, 1, generator=g), 0.1),
        (torch.randn(4, 2, generator=g), torch.randn(5, 4, generator=g),
         torch.randn(5, 2, generator=g), 0.05),
        # edge case: a single point with a single feature
        (torch.randn(1, 1, generator=g), torch.randn(1, 1, generator=g),
         torch.randn(1, 1, generator=g), 0.5),
    ]  # fmt: skip


# --- 11.leaf_after_steps: the state of a hand-trained parameter


def _leaf_after_three_steps():
    x, y = _small_data()
    w = torch.zeros(3, 1, requires_grad=True)
    for step in range(3):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        if step < 2:  # the last step's gradient stays in w.grad
            w.grad.zero_()
    return w


# --- 11.fix_forgotten_zero: the weight after the repaired module loop


def _fixed_loop_weight():
    x, y = _small_data()
    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.MSELoss()
    for _ in range(30):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    return model.weight.detach().clone()


# --- 11.evaluate: evaluation without dropout and without a graph


def _evaluate(model, x, y):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        loss = torch.nn.functional.mse_loss(model(x), y)
    model.train(was_training)
    return loss


def probe(evaluate):
    """What the check compares (the notebook's ``evaluate_probe``) for an ``evaluate``: the
    loss, and the mode the model is left in, which must be the mode it arrived in."""

    def evaluate_probe(model, x, y):
        loss = evaluate(model, x, y)
        return {"loss": loss, "mode afterwards": "train" if model.training else "eval"}

    return evaluate_probe


_evaluate_probe = probe(_evaluate)


def _dropout_net(g):
    """A small network with dropout, in training mode, its weights drawn from ``g``."""
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Dropout(p=0.5), torch.nn.Linear(8, 1)
    )
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=g))
    return net.train()


def _evaluate_cases(g):
    return [
        (_dropout_net(g), torch.randn(6, 3, generator=g), torch.randn(6, 1, generator=g)),
        (_dropout_net(g), torch.randn(20, 3, generator=g), torch.randn(20, 1, generator=g)),
        # edge case: a batch of one
        (_dropout_net(g), torch.randn(1, 3, generator=g), torch.randn(1, 1, generator=g)),
        # a model that arrives in evaluation mode must stay in it
        (_dropout_net(g).eval(), torch.randn(5, 3, generator=g), torch.randn(5, 1, generator=g)),
    ]


def _seeded_batches():
    from torch.utils.data import DataLoader, TensorDataset

    loader = DataLoader(
        TensorDataset(torch.arange(10)), batch_size=4, shuffle=True, generator=cpu_generator(3)
    )
    return [batch.tolist() for (batch,) in loader]


# --- 11.lr_schedule: the learning rate each optimizer step used


def lr_schedule_run(where: str = "after each epoch") -> list[float]:
    """The learning rate of each optimizer.step() over 4 epochs of 2 batches, with a StepLR.

    `where` places scheduler.step(): "after each epoch" (the right place), "before each
    epoch", "after each batch" or "never" (the typical mistakes)."""
    import warnings

    x, y = _small_data()
    batches = [(x[:8], y[:8]), (x[8:], y[8:])]
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    lrs = []
    with warnings.catch_warnings():  # the "before" mistake makes torch warn; not here
        warnings.simplefilter("ignore")
        for _ in range(4):
            if where == "before each epoch":
                scheduler.step()
            for xb, yb in batches:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(xb), yb).backward()
                lrs.append(optimizer.param_groups[0]["lr"])
                optimizer.step()
                if where == "after each batch":
                    scheduler.step()
            if where == "after each epoch":
                scheduler.step()
    return lrs


EXERCISES = [
    # --- quick questions in the lesson notebook ---
    Exercise(
        id="11.quiz_step_order",
        title="The canonical training step",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "forward, loss, optimizer.step(), loss.backward(), zero_grad()",
            "b": "zero_grad(), forward, loss, loss.backward(), optimizer.step()",
            "c": "forward, zero_grad(), optimizer.step(), loss, loss.backward()",
        },
        explanations={
            "a": "step() uses the gradients, so it must come after backward() has made them.",
            "c": "step() before backward() updates with old (or no) gradients, and the loss "
            "must exist before backward() can run.",
        },
        hints=(
            "Which call needs the gradients, and which call makes them?",
            "backward() fills .grad; step() reads .grad; zero_grad() clears it before the "
            "next backward().",
            "Clear, forward, loss, backward, step: 'b'.",
        ),
        solution='check("11.quiz_step_order", "b")',
    ),
    Exercise(
        id="11.quiz_eval_mode",
        title="What model.eval() does",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "a",
        options={
            "a": "it switches layers such as Dropout and BatchNorm to their evaluation "
            "behaviour; autograd still records",
            "b": "it stops autograd from recording a graph, like torch.no_grad()",
            "c": "it moves the model to the CPU for evaluation",
        },
        explanations={
            "b": "eval() only flips module.training; outputs still have a grad_fn. "
            "Stopping the graph is torch.no_grad()'s job.",
            "c": "eval() never moves anything; only .to(device) does.",
        },
        hints=(
            "In the lesson, what were out.requires_grad and out.grad_fn after net.eval()?",
            "eval() sets the flag module.training = False; which layers read that flag?",
            "Dropout and BatchNorm change behaviour; autograd does not: 'a'.",
        ),
        solution='check("11.quiz_eval_mode", "a")',
    ),
    Exercise(
        id="11.quiz_item_sync",
        title="Why .item() every step is slow on a GPU",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "c",
        options={
            "a": "it copies every parameter to the CPU",
            "b": "it runs backward() a second time",
            "c": "it makes the CPU wait until all queued GPU work is done (a synchronisation), "
            "so the GPU idles",
        },
        explanations={
            "a": ".item() copies a single number, not the parameters.",
            "b": ".item() only reads a value; it never runs backward().",
        },
        hints=(
            "On a GPU, PyTorch queues kernels and returns at once. What must happen before "
            "a value can be read on the CPU?",
            "To read the loss, the CPU has to wait until the GPU has computed it.",
            "A host-device synchronisation: 'c'.",
        ),
        solution='check("11.quiz_item_sync", "c")',
    ),
    # --- exercises in solutions/11_training_loops.ipynb ---
    Exercise(
        id="11.gd_step",
        task_says={
            "new": "check:value (the weights after one step are compared)",
            "Use autograd to get the gradient": "check:call:backward|grad",
            "do not modify the w you were given": "check:inputs_unchanged",
        },
        title="One gradient-descent step",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _gd_step,
        cases=_gd_step_cases,
        forbid=("attr:data",),
        require=("call:backward|grad",),  # "use autograd to get the gradient"
        context="no_graph",
        hints=(
            "Make a copy of w that requires grad, compute the mean squared error of x @ w "
            "against y, and call backward().",
            "Cut the copy off from the caller's w (detach, clone) before switching "
            "requires_grad on; after backward() the gradient is in the copy's .grad. The update "
            "itself must not be recorded.",
            "Inside a torch.no_grad() block, compute the copy minus lr times its gradient and "
            "return that: it is a new tensor without a graph, and the given w is untouched.",
        ),
        solution=(
            "def gd_step(w, x, y, lr):\n"
            "    w = w.detach().clone().requires_grad_(True)\n"
            "    loss = ((x @ w - y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        return w - lr * w.grad"
        ),
    ),
    Exercise(
        id="11.update_error",
        title="The update outside no_grad",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        explanations={
            "TypeError": "The types are fine (a tensor minus a tensor); autograd objects to "
            "the in-place change of a leaf that requires grad.",
            "ValueError": "No value is wrong here; autograd refuses the operation itself.",
        },
        hints=(
            "Run the snippet in a scratch cell and read the first word of the last line.",
            "Autograd refuses an in-place change to a leaf that requires grad; which "
            "exception class does PyTorch use for that?",
            "It is a RuntimeError.",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="11.leaf_after_steps",
        forbid=("attr:data", "call:step"),
        require=("call:backward|grad",),
        task_says={
            "by hand": "check:call:step",
            "three": "check:attributes:value",
            "Update w in place": "check:attributes:is_leaf",
            "not": "check:attributes:grad",
        },
        title="A parameter after three steps by hand",
        lesson=LESSON,
        kind="autograd",
        build_reference=_leaf_after_three_steps,
        attributes=("requires_grad", "is_leaf", "value", "grad"),
        reveal_values=False,
        hints=(
            "Each step: forward, loss, backward(), then an update that autograd must not "
            "record, so that w stays a leaf that requires grad.",
            "Subtract 0.1 times the gradient from w in place, inside a torch.no_grad() block. "
            "Zero w.grad after the first and the second update, but not after the third: the "
            "checker looks at the third step's gradient.",
            "Loop over three steps: compute the loss on x_small and y_small, call backward(), "
            "update w in place under no_grad, and zero the gradient in place unless it is the "
            "last step; then answer with w itself.",
        ),
        solution=(
            "w = torch.zeros(3, 1, requires_grad=True)\n"
            "for step in range(3):\n"
            "    loss = ((x_small @ w - y_small) ** 2).mean()\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        w -= 0.1 * w.grad\n"
            "    if step < 2:\n"
            "        w.grad.zero_()\n"
            "answer = w"
        ),
    ),
    Exercise(
        id="11.fix_forgotten_zero",
        task_says={
            "without a graph": "check:value (requires_grad of the weight is compared)",
        },
        title="Repair a loop that never zeroes",
        lesson=LESSON,
        kind="value",
        check_step_order=True,
        build_reference=_fixed_loop_weight,
        rtol=1e-4,
        atol=1e-5,
        hints=(
            "Nothing crashes: compare the loop with the canonical step order from the lesson.",
            "The gradients of all previous steps pile up in .grad; one call is missing.",
            "Each step must start from clean gradients: clear them through the optimizer "
            "before the new backward() adds into .grad; keep every other line as it is.",
        ),
        solution=(
            "model = nn.Linear(3, 1)\n"
            "with torch.no_grad():\n"
            "    model.weight.zero_()\n"
            "    model.bias.zero_()\n"
            "model = model.to(device)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for _ in range(30):\n"
            "    optimizer.zero_grad()\n"
            "    loss = loss_fn(model(xs), ys)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "answer = model.weight.detach().cpu()"
        ),
    ),
    Exercise(
        id="11.evaluate",
        task_says={
            "without dropout": "check:value (dropout in training mode changes the loss)",
            "without a graph": "check:must_build_no_graph",
            "use F.mse_loss": "check:value (the loss is compared)",
            "must not use dropout": "check:value (dropout in training mode changes the loss)",
            "must not build a graph": "check:must_build_no_graph",
            "must leave the model in the mode it found it in": "check:inputs_unchanged",
        },
        title="Evaluate without dropout and without a graph",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _evaluate_probe,
        cases=_evaluate_cases,
        must_build_no_graph=True,
        context="no_graph",
        hints=(
            "Two switches are needed: one for the layers (dropout), one for autograd. And "
            "the model must leave your function in the mode it arrived in.",
            "model.eval() turns dropout off; torch.no_grad() stops the graph. Remember "
            "model.training first so you can restore it with model.train(was_training).",
            "Save the model's training flag, switch it to evaluation mode, compute F.mse_loss "
            "inside a torch.no_grad() block, then put the model back into the saved mode "
            "(model.train accepts a bool) before returning the loss.",
        ),
        solution=(
            "def evaluate(model, x, y):\n"
            "    was_training = model.training\n"
            "    model.eval()\n"
            "    with torch.no_grad():\n"
            "        loss = F.mse_loss(model(x), y)\n"
            "    model.train(was_training)\n"
            "    return loss"
        ),
    ),
    Exercise(
        id="11.loader_batches",
        task_says={
            "without running it": (
                "advice: a prediction; the answer is the same whether or not the code was run first"
            ),
        },
        title="Batches in a DataLoader",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (4, 4),
        options=None,
        reveal_values=False,
        hints=(
            "len(loader) counts batches, including a last, shorter one.",
            "100 = 3 × 32 + 4: three full batches and what is left over.",
            "Three full batches of 32 make 96 samples; one more batch holds what is left.",
        ),
        solution="answer = (4, 4)",
    ),
    Exercise(
        id="11.seeded_loader",
        task_says={
            "seed 3 alone": (
                "check:value (the batches are compared after other draws from the global generator)"
            ),
        },
        title="A shuffling order fixed by a seed",
        lesson=LESSON,
        kind="value",
        build_reference=_seeded_batches,
        hints=(
            "The order must come from seed 3 alone, whatever happened to the global generator "
            "before. Which DataLoader argument takes a generator of its own?",
            "DataLoader(..., shuffle=True, generator=...) draws the shuffling order from that "
            "generator; torch.manual_seed changes the global one, which other code also uses.",
            "Pass generator=cpu_generator(3) to the DataLoader, then collect batch.tolist() for "
            "each (batch,) it yields.",
        ),
        solution=(
            "loader = DataLoader(\n"
            "    TensorDataset(torch.arange(10)), batch_size=4, shuffle=True, "
            "generator=cpu_generator(3)\n"
            ")\n"
            "answer = [batch.tolist() for (batch,) in loader]"
        ),
    ),
    Exercise(
        id="11.clip_with_scaler",
        title="Gradient clipping with a GradScaler",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "scaler.scale(loss).backward(); clip_grad_norm_(...); scaler.step(optimizer)",
            "b": "scaler.scale(loss).backward(); scaler.unscale_(optimizer); "
            "clip_grad_norm_(...); scaler.step(optimizer)",
            "c": "scaler.scale(loss).backward(); scaler.step(optimizer); clip_grad_norm_(...)",
        },
        explanations={
            "a": "After scaler.scale(loss).backward() the gradients are multiplied by the scale "
            "factor, so the clipping compares scaled gradients with max_norm and cuts them far "
            "too much.",
            "c": "scaler.step(optimizer) has already updated the parameters: clipping afterwards "
            "changes gradients that are no longer used.",
        },
        hints=(
            "What do the gradients in .grad hold right after scaler.scale(loss).backward()?",
            "They are multiplied by the scale factor. Clipping must see the true gradients, and "
            "it must happen before the update.",
            "Unscale first, clip second, step last.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="11.lr_schedule",
        title="Where the scheduler steps",
        lesson=LESSON,
        kind="value",
        build_reference=lr_schedule_run,
        hints=(
            "StepLR's step_size counts calls of scheduler.step(). Is it written in epochs or "
            "in batches here?",
            "An epoch schedule is stepped once per epoch, and only after the optimizer has "
            "used the current rate.",
            "Create the StepLR next to the optimizer; inside the batch loop leave everything "
            "as it is; after the batch loop, still inside the epoch loop, call "
            "scheduler.step(). answer = lrs.",
        ),
        solution=(
            "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)\n"
            "lrs = []\n"
            "for _ in range(4):\n"
            "    for xb, yb in batches:\n"
            "        optimizer.zero_grad()\n"
            "        loss_fn(model(xb), yb).backward()\n"
            '        lrs.append(optimizer.param_groups[0]["lr"])\n'
            "        optimizer.step()\n"
            "    scheduler.step()\n"
            "answer = lrs"
        ),
    ),
]
