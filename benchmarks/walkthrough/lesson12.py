# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 12 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


REG = """@repair
class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 32)
        self.skip = nn.Linear(4, 32)
{outw}
        self.out_b = nn.Parameter(torch.zeros(1))

    def forward(self, x):
{fwd}
        return h @ self.out_w + self.out_b


check("{ex}", {arg})"""
OUTW0 = "        self.out_w = torch.randn(32, 1) * 0.1"
OUTW1 = "        self.out_w = nn.Parameter(torch.randn(32, 1) * 0.1)"
FWD0 = "        h = torch.tanh(self.hidden(x))\n        h += self.skip(x)  # skip connection"
FWD1 = "        h = torch.tanh(self.hidden(x))\n        h = h + self.skip(x)  # skip connection"
MD = '''@repair
def make_data(n, seed):
    """n raw measurements of shape (n, 4) and their targets."""
    gen = cpu_generator(seed)
    z = torch.randn(n, 4, generator=gen)
    x_raw = FEATURE_MEAN + FEATURE_STD * z
    y = torch.sin(z[:, 0]) + 0.5 * z[:, 1] - z[:, 3] + 0.1 * torch.randn(n, generator=gen)
    return {ret}


check("12.fix_targets", make_data)'''
RS = """@repair
def run_steps(model, optimizer, x, y, steps):
    losses = []
    for _ in range(steps):
{body}
    return torch.stack(losses)


check("12.zero_grad", run_steps)"""
L = "        loss = loss_fn(model, model(x), y)\n"
TRAIN = """@repair
def train(steps, device):
    x, y = make_data(256, seed=0)
    x_val, y_val = make_data(128, seed=1)
    x, y = normalize(x.to(device)), y.to(device)
    x_val, y_val = normalize(x_val.to(device)), y_val.to(device)
    torch.manual_seed(0)
    model = Regressor().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr={lr})
    history = []
    for start in range(0, steps, 50):
        run_steps(model, optimizer, x, y, min(50, steps - start))
        history.append(evaluate(model, x_val, y_val))
    return torch.stack(history)


check("12.train", train)"""
PROBE = """


def normalize_probe(x):
    if unanswered(normalize):
        return ...
    try:
        on_meta = normalize(x.to("meta"))
    except Exception as error:
        raise RuntimeError(f"normalize fails for x on another device (meta): {error}") from None
    if on_meta is None:
        return None
    return normalize(x), str(on_meta.device)


check("12.normalize_device", normalize_probe)"""

with Walk("12") as w:
    w.setup()
    E = "12.first_error"
    w.cell_of(E)
    w.pre(E, 'train(200, torch.device("cpu"))')
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", '"InplaceError"\nanswer = "InplaceError"'), "made-up name", "fail")
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "right", "pass")

    E = "12.fix_inplace"
    w.cell_of(E)
    w.try_(
        E,
        REG.format(
            outw=OUTW0,
            fwd="        h = torch.tanh(self.hidden(x))\n        h.add_(self.skip(x))",
            ex=E,
            arg="input_gradient(Regressor)",
        ),
        "add_ is the same in-place bug",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        REG.format(
            outw=OUTW0,
            fwd="        h = torch.tanh(self.hidden(x))",
            ex=E,
            arg="input_gradient(Regressor)",
        ),
        "dropped the skip connection",
        "fail",
    )
    w.try_(
        E,
        REG.format(
            outw=OUTW0,
            fwd="        h = torch.tanh(self.hidden(x)).clone()\n        h += self.skip(x)",
            ex=E,
            arg="input_gradient(Regressor)",
        ),
        "right: clone then +=",
        "pass",
    )
    w.try_(
        E, REG.format(outw=OUTW0, fwd=FWD1, ex=E, arg="input_gradient(Regressor)"), "right", "pass"
    )

    E = "12.register_parameter"
    w.cell_of(E)
    w.pre(E, "print(trainable_names(Regressor))")
    w.try_(
        E,
        REG.format(
            outw='        self.register_buffer("out_w", torch.randn(32, 1) * 0.1)',
            fwd=FWD1,
            ex=E,
            arg="trainable_names(Regressor)",
        ),
        "buffer",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        REG.format(
            outw="        self.out_w = torch.randn(32, 1, requires_grad=True) * 0.1",
            fwd=FWD1,
            ex=E,
            arg="trainable_names(Regressor)",
        ),
        "requires_grad on a non-leaf",
        "fail",
    )
    w.try_(
        E,
        REG.format(outw=OUTW1, fwd=FWD0, ex=E, arg="trainable_names(Regressor)"),
        "param fixed but in-place bug back",
        "?",
    )
    w.try_(
        E, REG.format(outw=OUTW1, fwd=FWD1, ex=E, arg="trainable_names(Regressor)"), "right", "pass"
    )

    E = "12.broadcast_shape"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = (256, 1)"), "same as pred", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = (256,)"), "same as target", "fail")
    w.try_(E, cell(E, "answer", "answer = torch.Size([256, 256])"), "right, Size", "pass")

    E = "12.fix_targets"
    w.cell_of(E)
    w.try_(E, MD.format(ret="x_raw, y.unsqueeze(0)"), "unsqueeze(0): (1, n)", "fail")
    w.hint(E)
    w.try_(E, MD.format(ret="x_raw, y.squeeze()"), "squeeze", "fail")
    w.try_(E, MD.format(ret="x_raw.unsqueeze(1), y.unsqueeze(1)"), "x too", "fail")
    w.try_(E, MD.format(ret="x_raw, y.view(256, 1)"), "hard-coded 256", "fail")
    w.try_(E, MD.format(ret="x_raw, y[:, None]"), "right: None index", "pass")

    E = "12.keep_penalty_graph"
    w.cell_of(E)
    w.try_(
        E,
        '@repair\ndef l2_penalty(model):\n    return torch.tensor(sum(p.pow(2).sum().item() for p in model.parameters()))\n\n\ncheck("12.keep_penalty_graph", l2_penalty)',
        "wrapped the floats in a tensor",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        '@repair\ndef l2_penalty(model):\n    return sum(p.detach().pow(2).sum() for p in model.parameters())\n\n\ncheck("12.keep_penalty_graph", l2_penalty)',
        "detach",
        "fail",
    )
    w.try_(
        E,
        '@repair\ndef l2_penalty(model):\n    return sum(p.pow(2).mean() for p in model.parameters())\n\n\ncheck("12.keep_penalty_graph", l2_penalty)',
        "mean instead of sum",
        "fail",
    )
    w.try_(
        E,
        '@repair\ndef l2_penalty(model):\n    return torch.stack([p.pow(2).sum() for p in model.parameters()]).sum()\n\n\ncheck("12.keep_penalty_graph", l2_penalty)',
        "right: stack+sum (fails for no params?)",
        "pass",
    )
    w.try_(
        E,
        '@repair\ndef l2_penalty(model):\n    return sum(p.pow(2).sum() for p in model.parameters())\n\n\ncheck("12.keep_penalty_graph", l2_penalty)',
        "right",
        "pass",
    )

    E = "12.zero_grad"
    w.cell_of(E)
    w.try_(
        E,
        RS.format(
            body=L
            + "        loss.backward()\n        optimizer.zero_grad()\n        optimizer.step()\n        losses.append(loss.detach())"
        ),
        "zero_grad between backward and step",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        RS.format(
            body="        optimizer.zero_grad()\n"
            + L
            + "        loss.backward()\n        optimizer.step()\n        losses.append(loss)"
        ),
        "graph kept in losses",
        "fail",
    )
    w.try_(
        E,
        RS.format(
            body=L
            + "        loss.backward()\n        optimizer.step()\n        model.zero_grad()\n        losses.append(loss.detach())"
        ),
        "right: model.zero_grad after step",
        "pass",
    )

    E = "12.evaluate_no_graph"
    w.cell_of(E)
    w.try_(
        E,
        '@repair\ndef evaluate(model, x, y):\n    return ((model(x) - y) ** 2).mean().item()\n\n\ncheck("12.evaluate_no_graph", evaluate)',
        "item",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        '@repair\ndef evaluate(model, x, y):\n    model.eval()\n    return ((model(x) - y) ** 2).mean()\n\n\ncheck("12.evaluate_no_graph", evaluate)',
        "eval()",
        "fail",
    )
    w.try_(
        E,
        '@repair\ndef evaluate(model, x, y):\n    return ((model(x) - y) ** 2).mean().detach()\n\n\ncheck("12.evaluate_no_graph", evaluate)',
        "detach after (graph built)",
        "?",
    )
    w.try_(
        E,
        '@repair\n@torch.no_grad()\ndef evaluate(model, x, y):\n    """Validation MSE."""\n    return ((model(x) - y) ** 2).mean()\n\n\ncheck("12.evaluate_no_graph", evaluate)',
        "right: decorator under @repair",
        "pass",
    )

    E = "12.normalize_device"
    w.cell_of(E)
    w.try_(
        E,
        "@repair\ndef normalize(x):\n    return (x - FEATURE_MEAN.to(device)) / FEATURE_STD.to(device)"
        + PROBE,
        "global device",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        "@repair\ndef normalize(x):\n    return ((x.cpu() - FEATURE_MEAN) / FEATURE_STD)" + PROBE,
        "move x to the cpu",
        "fail",
    )
    w.try_(
        E,
        "@repair\ndef normalize(x):\n    return (x - FEATURE_MEAN.to(x)) / FEATURE_STD.to(x)"
        + PROBE,
        "right: .to(x)",
        "pass",
    )

    E = "12.train"
    w.cell_of(E)
    w.try_(E, TRAIN.format(lr="0.01"), "changed the lr", "fail")
    w.hint(E)
    w.try_(E, TRAIN.format(lr="0.02"), "right: unchanged", "pass")
    w.cell_of("12.first_nonfinite")

    E = "12.first_nonfinite"
    F = '\n\n\ncheck("12.first_nonfinite", first_nonfinite)'
    w.try_(
        E,
        "def first_nonfinite(losses):\n    t = torch.tensor(losses)\n    bad = (~torch.isfinite(t)).nonzero()\n    return bad[0].item() if len(bad) else -1"
        + F,
        "float32",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        "import math\n\n\ndef first_nonfinite(losses):\n    for i, v in enumerate(losses):\n        if not math.isfinite(v):\n            return i\n    return -1"
        + F,
        "math.isfinite (task: torch.isfinite)",
        "fail",
    )
    w.try_(
        E,
        "def first_nonfinite(losses):\n    t = torch.tensor(losses, dtype=torch.float64)\n    bad = torch.isnan(t).nonzero()\n    return bad[0].item() if len(bad) else -1"
        + F,
        "isnan only",
        "fail",
    )
    w.try_(
        E,
        "def first_nonfinite(losses):\n    t = torch.tensor(losses, dtype=torch.float64)\n    bad = (~torch.isfinite(t)).nonzero()\n    return bad[0] if len(bad) else -1"
        + F,
        "tensor index",
        "fail",
    )
    w.try_(
        E,
        "def first_nonfinite(losses):\n    ok = torch.isfinite(torch.tensor(losses, dtype=torch.float64))\n    if ok.all():\n        return -1\n    return int((~ok).int().argmax())"
        + F,
        "right: argmax",
        "pass",
    )

    E = "12.overfit_one_batch"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "more data", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "overfitting", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right", "pass")
