# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 05 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


with Walk("05") as w:
    w.setup()
    E = "05.which_get_grad"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "b"'), "q too", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "d"'), "everything", "fail")
    w.try_(E, cell(E, "answer", 'answer = "a"'), "right", "pass")

    E = "05.hand_chain_rule"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            "df_da = 1.5**2 + 1\ndf_db = 2 * 1.5 * -2\nanswer = torch.tensor([df_da, df_db])",
        ),
        "swapped",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            "df_da = 2 * 1.5 * -2\ndf_db = 1.5**2\nanswer = torch.tensor([df_da, df_db])",
        ),
        "forgot the + b term",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", "df_da = 2 * 1.5 * -2\ndf_db = 1.5**2 + 1\nanswer = [df_da, df_db]"),
        "python list",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "a = torch.tensor(1.5, requires_grad=True)\nb = torch.tensor(-2.0, requires_grad=True)\nf = a**2 * b + b\nf.backward()\ndf_da = a.grad\ndf_db = b.grad\nanswer = torch.stack([df_da, df_db])",
        ),
        "autograd (ruled out)",
        "fail",
    )
    w.pre(E, "df_da = 2 * 1.5 * -2\ndf_db = 1.5**2 + 1")
    w.try_(
        E,
        cell(E, "answer", "answer = torch.tensor([df_da, df_db])"),
        "right, numbers from the cell above",
        "pass",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "df_da = 2 * 1.5 * -2\ndf_db = 1.5**2 + 1\nanswer = torch.tensor([df_da, df_db], dtype=torch.float64)",
        ),
        "right, float64",
        "pass",
    )
    w.cell_of(
        "05.keep_intermediate_grad"
    )  # the autograd-verdict cell runs (it is before ex 3's cell)

    E = "05.keep_intermediate_grad"
    base = "a = torch.tensor(2.0, requires_grad=True)\nb = torch.tensor(-1.0, requires_grad=True)\n"
    w.try_(
        E,
        cell(E, "answer", base + "u = a * b\nf = u * a + u\nf.backward()\nanswer = u"),
        "no retain_grad",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            base + "u = a * b\nf = u * a + u\nf.backward()\nu.retain_grad()\nanswer = u",
        ),
        "retain_grad too late",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            base + "u = a * b\nu.retain_grad()\nf = u * a + u\nf.backward()\nanswer = u.grad",
        ),
        "answer is u.grad, not u",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            base
            + "u = a * b\nu.retain_grad()\nf = u * a + u\nf.backward()\nf.backward()\nanswer = u",
        ),
        "backward twice (error in my cell)",
        "fail",
    )
    w.pre(E, base + "u = a * b\nu.retain_grad()")
    w.try_(
        E,
        cell(E, "answer", "f = u * a + u\nf.backward()\nanswer = u"),
        "right, split over two cells",
        "pass",
    )

    E = "05.cube_vjp"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "cube_vjp",
            "def cube_vjp(x, v):\n    x = x.clone().requires_grad_(True)\n    y = x**3\n    y.sum().backward()\n    return x.grad",
        ),
        "sum(): v ignored",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(E, "cube_vjp", "def cube_vjp(x, v):\n    return v * 3 * x**2"),
        "formula typed (ruled out)",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "cube_vjp",
            "def cube_vjp(x, v):\n    x = x.clone().requires_grad_(True)\n    y = x**3\n    return torch.autograd.grad(y, x, v)",
        ),
        "autograd.grad tuple",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "cube_vjp",
            "def cube_vjp(x, v):\n    x = x.clone().requires_grad_(True)\n    y = x**3\n    return torch.autograd.grad(y, x, v)[0]",
        ),
        "autograd.grad (task: keep using backward)",
        "?",
    )
    w.try_(
        E,
        fn(
            E,
            "cube_vjp",
            "def cube_vjp(x, v):\n    x.requires_grad_(True)\n    y = x**3\n    y.backward(v)\n    return x.grad",
        ),
        "no clone: mutates the caller's x",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "cube_vjp",
            "def cube_vjp(x, v):\n    x = x.clone().requires_grad_(True)\n    y = x**3\n    (y * v).sum().backward()\n    return x.grad",
        ),
        "right: (y*v).sum()",
        "pass",
    )
    w.try_(
        E,
        fn(
            E,
            "cube_vjp",
            "def cube_vjp(x, v):\n    x = x.detach().requires_grad_()\n    y = x**3\n    y.backward(gradient=v)\n    return x.grad",
        ),
        "right: gradient=v",
        "pass",
    )

    E = "05.central_difference"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            "t = torch.tensor(2.0, dtype=torch.float64)\nh = 1e-3\nanswer = ((t + h)**3 - t**3) / h",
        ),
        "forward difference",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            "t = torch.tensor(2.0)\nh = 1e-3\nanswer = ((t + h)**3 - (t - h)**3) / (2 * h)",
        ),
        "float32",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "t = torch.tensor(2.0, dtype=torch.float64)\nh = 1e-3\nanswer = ((t + h)**3 - (t - h)**3) / h",
        ),
        "divided by h not 2h",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", "t = 2.0\nh = 1e-3\nanswer = ((t + h)**3 - (t - h)**3) / (2 * h)"),
        "python float",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "t = torch.tensor(2.0, dtype=torch.float64)\nh = 1e-3\nf = lambda t: t**3\nanswer = (f(t + h) - f(t - h)) / (2 * h)",
        ),
        "right",
        "pass",
    )

    E = "05.round_times_s"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "round kills everything", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "round half up", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right", "pass")

    E = "05.integer_requires_grad"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = TypeError"), "type", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = None"), "no error", "fail")
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "right", "pass")

    E = "05.max_dim_tie"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "split evenly", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "both", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right?", "pass")

    E = "05.mul_saves"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "both", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "only w", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right", "pass")

    E = "05.hook_halve"
    w.cell_of(E)
    b2 = "a = torch.tensor(2.0, requires_grad=True)\n"
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2
            + "u = a**2\nf = u + 3 * a\na.register_hook(lambda g: g / 2)\nf.backward()\nanswer = a",
        ),
        "hook on a",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2
            + "u = a**2\nf = u + 3 * a\nf.backward()\nu.register_hook(lambda g: g / 2)\nanswer = a",
        ),
        "hook after backward",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2
            + "u = a**2\nf = u + 3 * a\nu.register_hook(lambda g: print(g / 2))\nf.backward()\nanswer = a",
        ),
        "hook returns nothing",
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
        "a.grad instead of a",
        "?",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            b2 + "u = a**2\nf = u + 3 * a\nf.backward()\na.grad = torch.tensor(5.0)\nanswer = a",
        ),
        ".grad set by hand (ruled out)",
        "fail",
    )
    w.pre(E, b2 + "u = a**2\nhandle = u.register_hook(lambda grad: grad * 0.5)")
    w.try_(
        E,
        cell(E, "answer", "f = u + 3 * a\nf.backward()\nanswer = a"),
        "right, hook one cell earlier",
        "pass",
    )

    E = "05.retain_grad_with_hook"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "retain before hook", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "None", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right", "pass")
