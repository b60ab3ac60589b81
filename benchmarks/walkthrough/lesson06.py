# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 06 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


FIT = "def fit_line(x, y, steps=50, lr=0.1):\n    w = torch.zeros((), requires_grad=True)\n    b = torch.zeros((), requires_grad=True)\n    opt = torch.optim.SGD([w, b], lr=lr)\n    for _ in range(steps):\n{body}\n    return torch.tensor([w.item(), b.item()])"

with Walk("06") as w:
    w.setup()
    E = "06.two_losses_two_calls"
    w.cell_of(E)
    base = "w = torch.tensor([1.0, 2.0], requires_grad=True)\nx = torch.tensor([3.0, -1.0])\nloss_a = (w**2).sum()\nloss_b = (w * x).sum()\n"
    w.try_(
        E,
        cell(E, "answer", base + "(loss_a + loss_b).backward()\nanswer = w"),
        "sum (ruled out)",
        "fail",
    )
    w.hint(E)
    w.try_(E, cell(E, "answer", base + "loss_a.backward()\nanswer = w"), "only one loss", "fail")
    w.try_(
        E,
        cell(E, "answer", base + "loss_a.backward()\nw.grad = None\nloss_b.backward()\nanswer = w"),
        "cleared between",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", base + "loss_a.backward()\nloss_b.backward()\nanswer = w.grad"),
        "answer w.grad",
        "fail",
    )
    w.pre(E, base + "loss_a.backward()")
    w.try_(
        E, cell(E, "answer", "loss_b.backward()\nanswer = w"), "right, split over two cells", "pass"
    )

    E = "06.predict_loop_grad"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = 8.0"), "last loss only", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = 16.0"), "counted k = 1..3", "fail")
    w.try_(E, cell(E, "answer", "answer = torch.tensor(12.0)"), "tensor", "fail")
    w.try_(E, cell(E, "answer", "answer = 12"), "right (int)", "pass")

    E = "06.momentum_zero_grad"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "zero gradient -> no move", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "error", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right", "pass")

    E = "06.fix_training_loop"
    w.cell_of(E)
    L = "        loss = ((w * x + b - y) ** 2).mean()\n"
    w.try_(
        E,
        fn(
            E,
            "fit_line",
            FIT.format(
                body=L + "        loss.backward()\n        opt.zero_grad()\n        opt.step()"
            ),
        ),
        "zero_grad between backward and step",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "fit_line",
            FIT.replace(
                "    for _ in range(steps):\n", "    opt.zero_grad()\n    for _ in range(steps):\n"
            ).format(body=L + "        loss.backward()\n        opt.step()"),
        ),
        "zero_grad once, outside the loop",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "fit_line",
            FIT.format(
                body="        w.grad = None\n" + L + "        loss.backward()\n        opt.step()"
            ),
        ),
        "clears w only",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "fit_line",
            FIT.replace("lr=lr)", "lr=lr / 10)").format(
                body=L + "        loss.backward()\n        opt.step()"
            ),
        ),
        "smaller lr instead",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "fit_line",
            FIT.format(
                body=L + "        loss.backward()\n        opt.step()\n        opt.zero_grad()"
            ),
        ),
        "right: zero_grad after step",
        "pass",
    )

    E = "06.accumulated_grad"
    w.cell_of(E)
    A = "def accumulated_grad(w, x, y, micro):\n    w = w.clone().requires_grad_(True)\n    chunks = list(zip(x.split(micro), y.split(micro), strict=True))\n    for xb, yb in chunks:\n        {line}\n    return w.grad"
    w.try_(
        E,
        fn(E, "accumulated_grad", A.format(line="((xb @ w - yb) ** 2).mean().backward()")),
        "no scaling",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "accumulated_grad",
            A.format(line="(((xb @ w - yb) ** 2).mean() / len(chunks)).backward()"),
        ),
        "divide by number of chunks (uneven)",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "accumulated_grad",
            "def accumulated_grad(w, x, y, micro):\n    w = w.clone().requires_grad_(True)\n    ((x @ w - y) ** 2).mean().backward()\n    return w.grad",
        ),
        "one backward (ruled out)",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "accumulated_grad",
            "def accumulated_grad(w, x, y, micro):\n    w.requires_grad_(True)\n    for xb, yb in zip(x.split(micro), y.split(micro), strict=True):\n        (((xb @ w - yb) ** 2).sum() / len(x)).backward()\n    return w.grad",
        ),
        "modifies the given w",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "accumulated_grad",
            A.format(line="(((xb @ w - yb) ** 2).mean() * len(xb) / len(x)).backward()"),
        ),
        "right: n_k / N",
        "pass",
    )

    E = "06.chunk_weights"
    w.cell_of(E)
    w.try_(
        E,
        cell(E, "answer", "answer = torch.tensor([1 / 3, 1 / 3, 1 / 3])"),
        "divide by number of chunks",
        "fail",
    )
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = torch.tensor([4.0, 4.0, 2.0])"), "sizes", "fail")
    w.try_(E, cell(E, "answer", "answer = [0.4, 0.4, 0.2]"), "list", "fail")
    w.try_(
        E, cell(E, "answer", "answer = torch.tensor([0.4, 0.4])"), "forgot the last chunk", "fail"
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "sizes = torch.tensor([len(c) for c in torch.arange(10).split(4)])\nanswer = sizes / 10",
        ),
        "right, computed",
        "pass",
    )

    E = "06.read_cleared_grad"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = None"), "prints 0", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "runtime", "fail")
    w.try_(E, cell(E, "answer", "answer = TypeError"), "type", "fail")
    w.try_(E, cell(E, "answer", "answer = AttributeError"), "right", "pass")

    E = "06.step_per_group"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "all inside", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "clip inside", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right", "pass")
