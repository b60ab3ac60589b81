# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 10 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


def options(w, E, wrongs, right):
    w.cell_of(E)
    w.try_(E, cell(E, "answer", f"answer = {wrongs[0]}"), "wrong", "fail")
    w.hint(E)
    for x in wrongs[1:]:
        w.try_(E, cell(E, "answer", f"answer = {x}"), "wrong", "fail")
    w.try_(E, cell(E, "answer", f"answer = {right}"), "right", "pass")


SC_DATA = "g = cpu_generator(10)\nx = torch.randn(16, 3, generator=g)\ny = x * torch.tensor([2.0, -1.0, 0.5]) + torch.tensor([1.0, 0.0, -1.0])\n\n\n"
SC_CLASS = "class Scaler(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n{init}\n\n    def forward(self, x):\n        return x * self.scale + self.shift\n\n\n"
SC_TRAIN = "model = Scaler(3)\n{opt}\nfor _ in range(30):\n    optimizer.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n    optimizer.step()\nanswer = model.state_dict()"
OPT = "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)"
ST_DATA = "data = torch.randn(20, 4, generator=cpu_generator(11)) * 3.0 + 1.0\n\n\n"
ST_CLASS = 'class Standardize(nn.Module):\n    def __init__(self, data):\n        super().__init__()\n{init}\n\n    def forward(self, x):\n        return (x - self.mean) / self.std\n\n\nmodel = Standardize(data).double()\nanswer = {{"buffers": dict(model.named_buffers()), "state_dict keys": sorted(model.state_dict())}}'
FO = "g = cpu_generator(12)\nx = torch.randn(24, 2, generator=g)\ny = torch.sin(x[:, :1]) - x[:, 1:]\n\n"
FO_LOOP = "for _ in range(20):\n    optimizer.zero_grad()\n    loss = ((net(x) - y) ** 2).mean()\n    loss.backward()\n    optimizer.step()\nanswer = net[2].weight.detach().clone()"

with Walk("10") as w:
    w.setup()
    options(w, "10.empty_optimizer_error", ["RuntimeError", "None", "'valueerror'"], "ValueError")
    options(
        w,
        "10.state_dict_keys",
        [
            '("fc.bias", "fc.weight", "gain", "offset", "running_mean")',
            '("fc.bias", "fc.weight", "gain")',
            '("fc.weight", "fc.bias", "gain", "running_mean")',
            '["fc.bias", "fc.weight", "gain", "running_mean"]',
        ],
        'tuple(sorted(["fc.weight", "fc.bias", "gain", "running_mean"]))',
    )

    E = "10.fix_scaler"
    w.cell_of(E)
    orig = "        self.scale = torch.ones(n, requires_grad=True)\n        self.shift = nn.Parameter(torch.zeros(n))"
    w.try_(
        E,
        cell(
            E,
            "answer",
            SC_DATA
            + SC_CLASS.format(init=orig)
            + SC_TRAIN.format(
                opt="optimizer = torch.optim.SGD(list(model.parameters()) + [model.scale], lr=0.1)"
            ),
        ),
        "scale handed to the optimizer (ruled out)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            SC_DATA
            + SC_CLASS.format(
                init='        self.register_buffer("scale", torch.ones(n))\n        self.shift = nn.Parameter(torch.zeros(n))'
            )
            + SC_TRAIN.format(opt=OPT),
        ),
        "buffer",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            SC_DATA
            + SC_CLASS.format(
                init="        self.scale = nn.Parameter(torch.ones(n), requires_grad=False)\n        self.shift = nn.Parameter(torch.zeros(n))"
            )
            + SC_TRAIN.format(opt=OPT),
        ),
        "Parameter without grad",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            SC_DATA
            + SC_CLASS.format(
                init="        self.scale = nn.Parameter(torch.ones(n))\n        self.shift = nn.Parameter(torch.zeros(n))"
            )
            + SC_TRAIN.format(opt="optimizer = torch.optim.SGD(model.parameters(), lr=0.01)"),
        ),
        "right module, changed the lr",
        "fail",
    )
    w.pre(
        E,
        SC_DATA
        + SC_CLASS.format(
            init='        self.register_parameter("scale", nn.Parameter(torch.ones(n)))\n        self.shift = nn.Parameter(torch.zeros(n))'
        ).rstrip(),
    )
    w.try_(
        E,
        cell(E, "answer", SC_TRAIN.format(opt=OPT)),
        "right: register_parameter, class one cell up",
        "pass",
    )

    E = "10.standardize_buffers"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            ST_DATA
            + ST_CLASS.format(
                init="        self.mean = nn.Parameter(data.mean(dim=0))\n        self.std = nn.Parameter(data.std(dim=0))"
            ),
        ),
        "Parameters (trained)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            ST_DATA
            + ST_CLASS.format(
                init='        self.register_buffer("mean", data.mean(dim=0), persistent=False)\n        self.register_buffer("std", data.std(dim=0), persistent=False)'
            ),
        ),
        "persistent=False",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            ST_DATA
            + ST_CLASS.format(
                init='        self.register_buffer("mean", data.mean(dim=0))\n        self.std = data.std(dim=0)'
            ),
        ),
        "only the mean",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            ST_DATA
            + ST_CLASS.format(
                init='        self.register_buffer("mean", data.mean(dim=0).double())\n        self.register_buffer("std", data.std(dim=0))'
            ),
        ),
        "right-ish: mean made double by hand",
        "pass",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            ST_DATA
            + ST_CLASS.format(
                init='        self.register_buffer("mean", data.mean(dim=0))\n        self.register_buffer("std", data.std(dim=0))'
            ),
        ),
        "right",
        "pass",
    )

    E = "10.stuck_parameters"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "stuck_parameters",
            "def stuck_parameters(before, module):\n    return [n for n, p in module.named_parameters() if torch.allclose(p, before[n])]",
        ),
        "allclose (tiny change)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "stuck_parameters",
            "def stuck_parameters(before, module):\n    return [n for n, p in module.named_parameters() if (p == before[n]).any()]",
        ),
        "any()",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "stuck_parameters",
            "def stuck_parameters(before, module):\n    return [n for n, p in module.named_parameters() if not torch.equal(p, before[n])]",
        ),
        "the changed ones",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "stuck_parameters",
            "def stuck_parameters(before, module):\n    return sorted(n for n, p in module.named_parameters() if torch.equal(p, before[n]))",
        ),
        "sorted",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "stuck_parameters",
            "def stuck_parameters(before, module):\n    stuck = []\n    for name, p in module.named_parameters():\n        if (p.detach() == before[name]).all():\n            stuck.append(name)\n    return stuck",
        ),
        "right: all() of ==",
        "pass",
    )
    w.cell_of("10.fix_optimizer_order")

    E = "10.fix_optimizer_order"
    w.try_(
        E,
        cell(
            E,
            "answer",
            FO
            + "torch.manual_seed(0)\nnet = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\nnet[2] = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            + FO_LOOP,
        ),
        "added a second optimizer line (ruled out)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            FO
            + 'torch.manual_seed(0)\nnet = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\nnet[2] = nn.Linear(4, 1)\noptimizer.add_param_group({"params": net[2].parameters()})\n'
            + FO_LOOP,
        ),
        "add_param_group (added line)",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            FO
            + "torch.manual_seed(0)\nnet = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))\nnet[2] = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(net[2].parameters(), lr=0.1)\n"
            + FO_LOOP,
        ),
        "changed the optimizer's argument",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            FO
            + "torch.manual_seed(0)\nnet = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))\nnet[2] = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            + FO_LOOP,
        ),
        "right",
        "pass",
    )

    options(w, "10.parameter_to", ['"a"', '"c"'], '"b"')

    # 10.resume_checkpoint: see lesson10b.py (its cell defines make_run and train itself)
    options(w, "10.strict_false_prefix", ['"a"', '"c"'], '"b"')
