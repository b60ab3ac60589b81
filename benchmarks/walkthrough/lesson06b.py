# ruff: noqa: E501  (answer cells are written as one-line strings)
from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


with Walk("06") as w:
    w.setup()
    E = "06.two_losses_two_calls"
    w.cell_of(E)
    base = "w = torch.tensor([1.0, 2.0], requires_grad=True)\nx = torch.tensor([3.0, -1.0])\nloss_a = (w**2).sum()\nloss_b = (w * x).sum()\n"
    w.try_(
        E,
        cell(E, "answer", base + "torch.autograd.backward([loss_a, loss_b])\nanswer = w"),
        "one call with both losses",
        "?",
    )
    w.try_(
        E,
        cell(E, "answer", base + "for loss in (loss_a, loss_b):\n    loss.backward()\nanswer = w"),
        "right: a loop, one backward() line",
        "pass",
    )
    E = "06.fix_training_loop"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "fit_line",
            "def fit_line(x, y, steps=50, lr=0.1):\n    w = torch.zeros((), requires_grad=True)\n    b = torch.zeros((), requires_grad=True)\n    opt = torch.optim.SGD([w, b], lr=lr)\n    for _ in range(steps):\n        loss = ((w * x + b - y) ** 2).mean()\n        loss.backward()\n        opt.step()\n    opt.zero_grad()\n    return torch.tensor([w.item(), b.item()])",
        ),
        "zero_grad dedented: after the loop",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "fit_line",
            "def fit_line(x, y, steps=50, lr=0.1):\n    w = torch.zeros((), requires_grad=True)\n    b = torch.zeros((), requires_grad=True)\n    opt = torch.optim.SGD([w, b], lr=lr)\n    for _ in range(steps):\n        opt.zero_grad\n        loss = ((w * x + b - y) ** 2).mean()\n        loss.backward()\n        opt.step()\n    return torch.tensor([w.item(), b.item()])",
        ),
        "zero_grad without parentheses",
        "fail",
    )
    w.hint(E)
