# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 07 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


FREEZE = "torch.manual_seed(6)\nmodel = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).to(device)\ng = cpu_generator(6)\ninputs = torch.randn(8, 3, generator=g).to(device)\ntargets = torch.randn(8, 1, generator=g).to(device)\n"
EVAL = "torch.manual_seed(7)\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)\ng = cpu_generator(7)\nbatches = [(torch.randn(10, 4, generator=g), torch.randn(10, 1, generator=g)) for _ in range(3)]\nbatches = [(xb.to(device), yb.to(device)) for xb, yb in batches]\n"
STOP = "w = torch.tensor(0.5, device=device, requires_grad=True)\nx = torch.tensor(3.0, device=device)\n"

with Walk("07") as w:
    w.setup()
    E = "07.predict_no_grad"
    w.cell_of(E)
    w.try_(
        E,
        fn(E, "predict", "def predict(weight, inputs):\n    return inputs @ weight"),
        "records a graph",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(E, "predict", "def predict(weight, inputs):\n    return (inputs @ weight).detach()"),
        "detach after (graph recorded)",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "predict",
            "def predict(weight, inputs):\n    torch.set_grad_enabled(False)\n    return inputs @ weight",
        ),
        "global grad mode off, left off",
        "fail",
    )
    w.run("torch.set_grad_enabled(True)")
    w.try_(
        E,
        fn(
            E,
            "predict",
            "def predict(weight, inputs):\n    with torch.no_grad():\n        out = inputs @ weight\n    return out.numpy()",
        ),
        "numpy output",
        "fail",
    )
    w.try_(
        E,
        fn(
            E, "predict", "@torch.no_grad\ndef predict(weight, inputs):\n    return inputs @ weight"
        ),
        "decorator without parentheses",
        "pass",
    )
    w.try_(
        E,
        fn(
            E,
            "predict",
            "def predict(weight, inputs):\n    with torch.inference_mode():\n        return inputs @ weight",
        ),
        "inference_mode",
        "pass",
    )
    w.try_(
        E,
        fn(
            E,
            "predict",
            "def predict(weight, inputs):\n    with torch.set_grad_enabled(False):\n        return inputs @ weight",
        ),
        "set_grad_enabled block",
        "pass",
    )
    w.try_(
        E,
        fn(
            E,
            "predict",
            "@torch.no_grad()\ndef predict(weight, inputs):\n    return inputs @ weight",
        ),
        "right: decorator",
        "pass",
    )

    E = "07.no_grad_parentheses"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = AttributeError"), "__enter__ (old python)", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = None"), "works anyway", "fail")
    w.try_(E, cell(E, "answer", "answer = TypeError"), "right?", "pass")

    E = "07.inference_reuse"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "b"'), "any use outside fails", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "d"'), "backward", "fail")
    w.try_(E, cell(E, "answer", 'answer = "C"'), "uppercase", "?")
    w.try_(E, cell(E, "answer", 'answer = "c"'), "right", "pass")

    E = "07.detach_copy"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "detach copies", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "b"'), "clone", "fail")
    w.try_(E, cell(E, "answer", "answer = x.detach().clone()"), "the expression itself", "fail")
    w.try_(E, cell(E, "answer", 'answer = "c"'), "right", "pass")

    E = "07.stop_gradient"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            STOP
            + "prediction = w * x\ntarget = 2 * w + 1\nloss = (prediction - target) ** 2\nloss.backward()\nanswer = w",
        ),
        "target not detached",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            STOP
            + "prediction = (w * x).detach()\ntarget = 2 * w + 1\nloss = (prediction - target) ** 2\nloss.backward()\nanswer = w",
        ),
        "detached the prediction",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            STOP
            + "prediction = w * x\ntarget = (2 * w + 1).detach()\nloss = (prediction - target) ** 2\nloss.backward()\nanswer = w.grad",
        ),
        "answer w.grad",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            STOP
            + "prediction = w * x\ntarget = 2 * w.data + 1\nloss = (prediction - target) ** 2\nloss.backward()\nanswer = w",
        ),
        ".data (discouraged, right value)",
        "?",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            STOP
            + "prediction = w * x\nwith torch.no_grad():\n    target = 2 * w + 1\nloss = (prediction - target) ** 2\nloss.backward()\nanswer = w",
        ),
        "right: target under no_grad",
        "pass",
    )

    E = "07.freeze_first"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            FREEZE
            + "model[0].requires_grad = False\ntrain(model, inputs, targets)\nanswer = model[2].weight",
        ),
        "module attribute (does nothing)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            FREEZE
            + "model[0].weight.requires_grad_(False)\ntrain(model, inputs, targets)\nanswer = model[2].weight",
        ),
        "weight only, bias trains",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            FREEZE + "model[0].eval()\ntrain(model, inputs, targets)\nanswer = model[2].weight",
        ),
        "eval() instead of freezing",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", FREEZE + "model[0].requires_grad_(False)\nanswer = model[2].weight"),
        "forgot to train",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            FREEZE
            + "for p in model[0].parameters():\n    p.requires_grad = False\ntrain(model, inputs, targets)\nanswer = model[2].weight",
        ),
        "right: loop over parameters",
        "pass",
    )

    E = "07.eval_loop_fix"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            EVAL
            + "total = 0.0\nfor xb, yb in batches:\n    loss = nn.functional.mse_loss(model(xb), yb)\n    total += loss.item()\nmean_loss = total / len(batches)\nanswer = (mean_loss, loss)",
        ),
        ".item() but no no_grad",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            EVAL
            + "total = 0.0\nwith torch.no_grad():\n    for xb, yb in batches:\n        loss = nn.functional.mse_loss(model(xb), yb)\n        total += loss\nmean_loss = total / len(batches)\nanswer = (mean_loss, loss)",
        ),
        "no_grad but mean_loss a tensor",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            EVAL
            + "total = 0.0\nfor xb, yb in batches:\n    loss = nn.functional.mse_loss(model(xb), yb).detach()\n    total += loss.item()\nmean_loss = total / len(batches)\nanswer = (mean_loss, loss)",
        ),
        "detach after the forward (graph built)",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            EVAL
            + "total = 0.0\nmodel.eval()\nfor xb, yb in batches:\n    loss = nn.functional.mse_loss(model(xb), yb)\n    total += loss.item()\nmean_loss = total / len(batches)\nanswer = (mean_loss, loss)",
        ),
        "model.eval() thinks it stops graph",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            EVAL
            + "total = 0.0\ntorch.set_grad_enabled(False)\nfor xb, yb in batches:\n    loss = nn.functional.mse_loss(model(xb), yb)\n    total += loss.item()\nmean_loss = total / len(batches)\nanswer = (mean_loss, loss)",
        ),
        "global grad mode off, left off",
        "fail",
    )
    w.run("torch.set_grad_enabled(True)")
    w.try_(
        E,
        cell(
            E,
            "answer",
            EVAL
            + "total = 0.0\nwith torch.no_grad():\n    for xb, yb in batches:\n        loss = nn.functional.mse_loss(model(xb), yb)\n        total += loss.item()\nmean_loss = total / len(batches)\nanswer = mean_loss",
        ),
        "only mean_loss",
        "fail",
    )
    w.pre(
        E,
        EVAL
        + "@torch.no_grad()\ndef batch_loss(xb, yb):\n    return nn.functional.mse_loss(model(xb), yb)",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "total = 0.0\nfor xb, yb in batches:\n    loss = batch_loss(xb, yb)\n    total += loss.item()\nmean_loss = total / len(batches)\nanswer = (mean_loss, loss)",
        ),
        "right: decorated helper one cell up",
        "pass",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            EVAL
            + "total = 0.0\nwith torch.inference_mode():\n    for xb, yb in batches:\n        loss = nn.functional.mse_loss(model(xb), yb)\n        total += loss.item()\nmean_loss = total / len(batches)\nanswer = (mean_loss, loss)",
        ),
        "right: inference_mode",
        "pass",
    )

    for E, wrong, right in [
        ("07.frozen_momentum", ["a", "c"], "b"),
        ("07.frozen_batchnorm", ["a", "c"], "b"),
        ("07.created_in_no_grad", ["b", "d"], "a"),
        ("07.frozen_middle", ["a", "c"], "b"),
        ("07.frozen_prefix_missed", ["c", "a"], "b"),
    ]:
        w.cell_of(E)
        w.try_(E, cell(E, "answer", f'answer = "{wrong[0]}"'), "wrong option", "fail")
        w.hint(E)
        w.try_(E, cell(E, "answer", f'answer = "{wrong[1]}"'), "wrong option", "fail")
        w.try_(E, cell(E, "answer", f'answer = "{right}"'), "right", "pass")
