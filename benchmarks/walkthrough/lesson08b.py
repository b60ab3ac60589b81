# ruff: noqa: E501  (answer cells are written as one-line strings)
from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


SGD = "w = torch.tensor([0.5, -1.0], device=device, requires_grad=True)\nx = torch.tensor([2.0, 1.0], device=device)\ny = torch.tensor([3.0, 0.0], device=device)\nloss = ((w * x - y) ** 2).sum()\nloss.backward()\n"
RELU = "a = torch.tensor([-0.5, 0.2, 1.5], device=device, requires_grad=True)\n"
with Walk("08") as w:
    w.setup()
    E = "08.sgd_step"
    w.cell_of(E)
    w.try_(
        E,
        cell(E, "answer", SGD + "torch.set_grad_enabled(False)\nw -= 0.1 * w.grad\nanswer = w"),
        "global grad mode off, first attempt",
        "fail",
    )
    E = "08.relu_fix"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            RELU
            + "h = torch.tanh(a).clamp(min=0)\nloss = (h**2).sum()\nloss.backward()\nanswer = a",
        ),
        "right answer, but grad mode still off from 08.sgd_step",
        "pass?",
    )
    w.try_(
        E,
        cell(E, "answer", RELU + "h = torch.tanh(a).clamp(min=0)\nloss = (h**2).sum()\nanswer = a"),
        "drop backward after that error",
        "fail",
    )
