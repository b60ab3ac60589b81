# ruff: noqa: E501  (answer cells are written as one-line strings)
from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


with Walk("09") as w:
    w.setup()
    E = "09.second_derivative_tanh"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "second_derivative_of_tanh",
            "def second_derivative_of_tanh(x):\n    x = x.detach().requires_grad_()\n    (d1,) = torch.autograd.grad(torch.tanh(x).sum(), x, create_graph=True)\n    return d1",
        ),
        "first derivative (with graph)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "second_derivative_of_tanh",
            "def second_derivative_of_tanh(x):\n    x = x.detach().requires_grad_()\n    (d1,) = torch.autograd.grad(torch.tanh(x).sum(), x, create_graph=True)\n    return d1.detach()",
        ),
        "followed the advice: .detach()",
        "fail",
    )
    E = "09.third_derivative"
    w.cell_of(E)
    X = "x = torch.tensor(1.5, requires_grad=True)\n\n"
    w.try_(
        E,
        cell(
            E,
            "answer",
            X
            + "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\n(d2,) = torch.autograd.grad(d1, x, create_graph=True)\nx.grad = torch.tensor(36.0)\nanswer = x",
        ),
        "typed 36 into .grad, first attempt",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            X
            + "y = x**4\ny.backward(create_graph=True)\nd1 = x.grad\nx.grad = None\nd1.backward(create_graph=True)\nd2 = x.grad\nx.grad = None\nd2.backward()\nanswer = x",
        ),
        "backward(create_graph) chain, no autograd.grad in this cell",
        "fail",
    )
