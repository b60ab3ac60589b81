# ruff: noqa: E501  (answer cells are written as one-line strings)
from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


with Walk("05") as w:
    w.setup()
    E = "05.hook_halve"
    w.cell_of(E)
    b2 = "a = torch.tensor(2.0, requires_grad=True)\n"
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2 + "u = a**2\nf = u + 3 * a\nf.backward()\na.grad = torch.tensor(5.0)\nanswer = a",
        ),
        ".grad set by hand, first attempt",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2
            + "u = a**2\nf = u + 3 * a\nf.backward()\nwith torch.no_grad():\n    a.grad -= 0.5 * 2 * a\nanswer = a",
        ),
        "gradient edited after backward",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2
            + "u = a**2\nu.register_hook(lambda g: g / 2)\nf = u + 3 * a\nf.backward()\nanswer = a.grad",
        ),
        "a.grad (fresh)",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2
            + "u = a**2\nu.register_hook(lambda g: g / 2)\nf = u + 3 * a\nf.backward()\nanswer = u",
        ),
        "answer = u",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2
            + "u = a**2\nu.register_hook(lambda g: g / 2)\nf = u + 3 * a\nf.backward()\nanswer = a.grad.item()",
        ),
        "a.grad.item()",
        "fail",
    )
