# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 08 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


SGD = "w = torch.tensor([0.5, -1.0], device=device, requires_grad=True)\nx = torch.tensor([2.0, 1.0], device=device)\ny = torch.tensor([3.0, 0.0], device=device)\nloss = ((w * x - y) ** 2).sum()\nloss.backward()\n"
RELU = "a = torch.tensor([-0.5, 0.2, 1.5], device=device, requires_grad=True)\n"


def options(w, E, wrongs, right):
    w.cell_of(E)
    w.try_(E, cell(E, "answer", f"answer = {wrongs[0]!r}"), "wrong", "fail")
    w.hint(E)
    for x in wrongs[1:]:
        w.try_(E, cell(E, "answer", f"answer = {x!r}"), "wrong", "fail")
    w.try_(E, cell(E, "answer", f"answer = {right!r}"), "right", "pass")


with Walk("08") as w:
    w.setup()
    options(w, "08.version_predict", [3, 1, "2"], 2)
    w.cell_of("08.inplace_dtype")
    E = "08.inplace_dtype"
    w.try_(E, cell(E, "answer", "answer = TypeError"), "type", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = None"), "silently truncates", "fail")
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "right", "pass")
    options(w, "08.safe_inplace", ["d", "c"], "b")

    E = "08.out_of_place"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "scale_and_clip",
            "def scale_and_clip(x):\n    y = x\n    y *= 2\n    y.clamp_(max=1.0)\n    return y",
        ),
        "alias",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "scale_and_clip",
            "def scale_and_clip(x):\n    y = x.detach()\n    y *= 2\n    return y.clamp_(max=1.0)",
        ),
        "detach shares memory",
        "fail",
    )
    w.try_(
        E,
        fn(E, "scale_and_clip", "def scale_and_clip(x):\n    return torch.clamp(x * 2, min=1.0)"),
        "min instead of max",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "scale_and_clip",
            "def scale_and_clip(x):\n    x = x * 2\n    x.clamp_(max=1.0)\n    return x",
        ),
        "right: rebinding then in place on the new tensor",
        "pass",
    )
    w.try_(
        E,
        fn(
            E,
            "scale_and_clip",
            "def scale_and_clip(x):\n    return torch.where(x * 2 > 1.0, 1.0, x * 2)",
        ),
        "right: where",
        "pass",
    )

    E = "08.sgd_step"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", SGD + "w = w - 0.1 * w.grad\nanswer = w"), "new non-leaf", "fail")
    w.hint(E)
    w.try_(
        E, cell(E, "answer", SGD + "w.data -= 0.1 * w.grad\nanswer = w"), "through .data", "fail"
    )
    w.try_(
        E,
        cell(E, "answer", SGD + "w = (w - 0.1 * w.grad).detach().requires_grad_()\nanswer = w"),
        "new leaf",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", SGD + "with torch.no_grad():\n    w -= 0.01 * w.grad\nanswer = w"),
        "wrong lr",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", SGD + "torch.set_grad_enabled(False)\nw -= 0.1 * w.grad\nanswer = w"),
        "global grad mode off, left off",
        "fail",
    )
    w.run("torch.set_grad_enabled(True)")
    w.try_(
        E,
        cell(
            E,
            "answer",
            SGD + "with torch.no_grad():\n    w -= 0.1 * w.grad\n    w -= 0.0 * w.grad\nanswer = w",
        ),
        "two in-place writes (version 2)",
        "?",
    )
    w.try_(
        E,
        cell(E, "answer", SGD + "with torch.no_grad():\n    w.sub_(w.grad, alpha=0.1)\nanswer = w"),
        "right: sub_ alpha",
        "pass",
    )

    E = "08.relu_fix"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            RELU
            + "h = torch.tanh(a)\nwith torch.no_grad():\n    h[h < 0] = 0\nloss = (h**2).sum()\nloss.backward()\nanswer = a",
        ),
        "in place under no_grad (still fails)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            RELU + "h = torch.tanh(a).detach()\nh[h < 0] = 0\nloss = (h**2).sum()\nanswer = a",
        ),
        "detached, no backward",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", RELU + "h = torch.tanh(a).clamp(min=0)\nloss = (h**2).sum()\nanswer = a"),
        "forgot backward",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            RELU
            + "h = torch.tanh(a).clamp(max=0)\nloss = (h**2).sum()\nloss.backward()\nanswer = a",
        ),
        "clamp max instead of min",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            RELU
            + "h = torch.tanh(a).clone()\nh[h < 0] = 0\nloss = (h**2).sum()\nloss.backward()\nanswer = a",
        ),
        "right: clone then in place",
        "pass",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            RELU
            + "h = torch.relu(torch.tanh(a))\nloss = (h**2).sum()\nloss.backward()\nanswer = a",
        ),
        "right: relu",
        "pass",
    )

    options(w, "08.anomaly_culprit", ["a", "b"], "c")
    options(w, "08.silent_cast", ["d", "a"], "c")
    options(w, "08.version_getitem", [2, 1], 3)
    E = "08.copyslices_grad"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = 0.0"), "in-place kills the gradient", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = 6.0"), "forgot the weight 2", "fail")
    w.try_(E, cell(E, "answer", "answer = 2 * 3 * 2 + 2"), "added something", "fail")
    w.try_(E, cell(E, "answer", "answer = 4 * 3.0"), "right", "pass")
    options(w, "08.step_between", ["c", "b"], "a")
    options(w, "08.multi_view", ["a", "c"], "b")
    options(w, "08.silent_downcast", [3000000000, 2147483647], -1294967296)
