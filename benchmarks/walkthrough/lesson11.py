# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 11 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


PROBE = '\n\n\ndef evaluate_probe(model, x, y):\n    loss = evaluate(model, x, y)\n    if loss is None:\n        return None\n    return {"loss": loss, "mode afterwards": "train" if model.training else "eval"}\n\n\ncheck("11.evaluate", evaluate_probe)'
LEAF = "w = torch.zeros(3, 1, requires_grad=True)\nfor step in range(3):\n    loss = ((x_small @ w - y_small) ** 2).mean()\n    loss.backward()\n{upd}\n{zero}\nanswer = w"
UPD = "    with torch.no_grad():\n        w -= 0.1 * w.grad"
FIX = "xs, ys = x_small.to(device), y_small.to(device)\nmodel = nn.Linear(3, 1)\nwith torch.no_grad():\n    model.weight.zero_()\n    model.bias.zero_()\nmodel = model.to(device)\noptimizer = torch.optim.SGD(model.parameters(), lr={lr})\nfor step in range(30):\n{body}\nanswer = {ans}"
LR = 'batches = [\n    (x_small[:8].to(device), y_small[:8].to(device)),\n    (x_small[8:].to(device), y_small[8:].to(device)),\n]\ntorch.manual_seed(0)\nmodel = nn.Linear(3, 1).to(device)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nscheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)\nlrs = []\nfor _ in range(4):\n    for xb, yb in batches:\n        optimizer.zero_grad()\n        loss_fn(model(xb), yb).backward()\n        lrs.append(optimizer.param_groups[0]["lr"])\n{inner}        optimizer.step()\n{after}{outer}answer = lrs'

with Walk("11") as w:
    w.setup()
    E = "11.gd_step"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "gd_step",
            "def gd_step(w, x, y, lr):\n    grad = 2 * x.T @ (x @ w - y) / len(x)\n    return w - lr * grad",
        ),
        "gradient by hand (task: autograd)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "gd_step",
            "def gd_step(w, x, y, lr):\n    w = w.clone().requires_grad_(True)\n    ((x @ w - y) ** 2).mean().backward()\n    with torch.no_grad():\n        w -= lr * w.grad\n    return w",
        ),
        "returns the leaf that requires grad",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "gd_step",
            "def gd_step(w, x, y, lr):\n    w.requires_grad_(True)\n    ((x @ w - y) ** 2).mean().backward()\n    return (w - lr * w.grad).detach()",
        ),
        "modifies the given w",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "gd_step",
            "def gd_step(w, x, y, lr):\n    w2 = w.clone().requires_grad_(True)\n    ((x @ w2 - y) ** 2).sum().backward()\n    return (w2 - lr * w2.grad).detach()",
        ),
        "sum instead of mean",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "gd_step",
            "def gd_step(w, x, y, lr):\n    w2 = w.detach().requires_grad_()\n    loss = ((x @ w2 - y) ** 2).mean()\n    (grad,) = torch.autograd.grad(loss, w2)\n    return w - lr * grad",
        ),
        "right: autograd.grad",
        "pass",
    )

    E = "11.update_error"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = None"), "works", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value", "fail")
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "right", "pass")

    E = "11.leaf_after_steps"
    w.cell_of(E)
    w.try_(
        E,
        cell(E, "answer", LEAF.format(upd=UPD, zero="    w.grad.zero_()")),
        "zeroed after every step",
        "fail",
    )
    w.hint(E)
    w.try_(E, cell(E, "answer", LEAF.format(upd=UPD, zero="")), "never zeroed", "fail")
    w.try_(
        E,
        cell(E, "answer", LEAF.format(upd="    w = w - 0.1 * w.grad", zero="")),
        "w = w - ... (non-leaf; raises?)",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "w = torch.zeros(3, 1, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\nfor step in range(3):\n    loss = ((x_small @ w - y_small) ** 2).mean()\n    loss.backward()\n    opt.step()\n    if step < 2:\n        opt.zero_grad()\nanswer = w",
        ),
        "an optimizer (task: no optimizer)",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", LEAF.format(upd=UPD, zero="    if step < 2:\n        w.grad = None")),
        "right: grad = None between steps",
        "pass",
    )

    E = "11.fix_forgotten_zero"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            FIX.format(
                lr="0.1",
                body="    loss = loss_fn(model(xs), ys)\n    loss.backward()\n    optimizer.step()",
                ans="model.weight.detach().cpu()",
            ),
        ),
        "unchanged",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            FIX.format(
                lr="0.1",
                body="    loss = loss_fn(model(xs), ys)\n    loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()",
                ans="model.weight",
            ),
        ),
        "right loop, weight with graph",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            FIX.format(
                lr="0.01",
                body="    loss = loss_fn(model(xs), ys)\n    loss.backward()\n    optimizer.step()",
                ans="model.weight.detach().cpu()",
            ),
        ),
        "smaller lr instead",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            FIX.format(
                lr="0.1",
                body="    model.zero_grad()\n    loss = loss_fn(model(xs), ys)\n    loss.backward()\n    optimizer.step()",
                ans="model.weight.detach().cpu()",
            ),
        ),
        "right: model.zero_grad()",
        "pass",
    )

    E = "11.evaluate"
    w.cell_of(E)
    w.try_(
        E,
        "def evaluate(model, x, y):\n    with torch.no_grad():\n        return F.mse_loss(model(x), y)"
        + PROBE,
        "no eval(): dropout on",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        "def evaluate(model, x, y):\n    model.eval()\n    with torch.no_grad():\n        return F.mse_loss(model(x), y)"
        + PROBE,
        "eval, never restored",
        "fail",
    )
    w.try_(
        E,
        "def evaluate(model, x, y):\n    was = model.training\n    model.eval()\n    with torch.no_grad():\n        loss = F.mse_loss(model(x), y)\n    model.training = was\n    return loss"
        + PROBE,
        "model.training = was (children stay eval)",
        "fail",
    )
    w.try_(
        E,
        "def evaluate(model, x, y):\n    model.eval()\n    with torch.no_grad():\n        loss = F.mse_loss(model(x), y)\n    model.train()\n    return loss"
        + PROBE,
        "always back to train",
        "fail",
    )
    w.try_(
        E,
        "def evaluate(model, x, y):\n    was = model.training\n    model.eval()\n    loss = F.mse_loss(model(x), y)\n    model.train(was)\n    return loss"
        + PROBE,
        "no no_grad: graph",
        "fail",
    )
    w.try_(
        E,
        "@torch.no_grad()\ndef evaluate(model, x, y):\n    was = model.training\n    model.eval()\n    loss = F.mse_loss(model(x), y)\n    model.train(was)\n    return loss"
        + PROBE,
        "right: decorator",
        "pass",
    )

    E = "11.loader_batches"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = (3, 32)"), "drops the last", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = (4, 32)"), "last full", "fail")
    w.try_(E, cell(E, "answer", "answer = (4, 4.0)"), "float", "?")
    w.try_(E, cell(E, "answer", "answer = (4, 4)"), "right", "pass")

    E = "11.seeded_loader"
    w.cell_of(E)
    S = "torch.manual_seed(0)\ntorch.randn(5)  # other code that uses the global generator\n\n"
    w.try_(
        E,
        cell(
            E,
            "answer",
            S
            + "loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True)\nanswer = [batch.tolist() for (batch,) in loader]",
        ),
        "no seed",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            S
            + "torch.manual_seed(3)\nloader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True)\nanswer = [batch.tolist() for (batch,) in loader]",
        ),
        "global seed 3 right before (depends on seed 3 alone too)",
        "?",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            S
            + "loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(3))\nanswer = [batch for (batch,) in loader]",
        ),
        "tensors not lists",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            S
            + "loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, generator=torch.Generator().manual_seed(3))\nanswer = [batch.tolist() for (batch,) in loader]",
        ),
        "forgot shuffle",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            S
            + "loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True, generator=cpu_generator(3))\nanswer = [batch.tolist() for (batch,) in loader]",
        ),
        "right: cpu_generator(3)",
        "pass",
    )

    E = "11.clip_with_scaler"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "no unscale", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "clip after step", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right", "pass")

    E = "11.lr_schedule"
    w.cell_of(E)
    w.try_(
        E,
        cell(E, "answer", LR.format(inner="", after="        scheduler.step()\n", outer="")),
        "scheduler per batch",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(E, "answer", LR.format(inner="        scheduler.step()\n", after="", outer="")),
        "scheduler before optimizer.step",
        "fail",
    )
    w.try_(E, cell(E, "answer", LR.format(inner="", after="", outer="")), "never steps", "fail")
    w.try_(
        E,
        cell(E, "answer", LR.format(inner="", after="", outer="    scheduler.step()\n")),
        "right",
        "pass",
    )
