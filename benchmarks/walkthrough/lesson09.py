# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 09 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


SUM = "g = cpu_generator(9)\nw = torch.randn(3, 2, generator=g).requires_grad_()\ninputs = torch.randn(5, 3, generator=g)\nh = torch.tanh(inputs @ w)\nloss_a = h.pow(2).mean()\nloss_b = (h[:, 0] - h[:, 1]).abs().mean()\n"
TRAIN = "g = cpu_generator(5)\nproj = torch.randn(4, 3, generator=g).requires_grad_()\nhead = torch.randn(3, 1, generator=g).requires_grad_()\ndata = torch.randn(10, 4, generator=g)\ntarget = torch.randn(10, 1, generator=g)\n"
TRAIN_TAIL = '\n\n\ndef what_is_checked(items):\n    if not isinstance(items, (list, tuple)):\n        return items\n    values = [v.item() if isinstance(v, torch.Tensor) and v.numel() == 1 else v for v in items]\n    graphs = sum(isinstance(v, torch.Tensor) and v.grad_fn is not None for v in items)\n    return {"losses": values, "items holding a graph": graphs}\n\n\ncheck("09.train_both", what_is_checked(answer))'
STEP = "    with torch.no_grad():\n        for p in (proj, head):\n            p -= 0.1 * p.grad\n            p.grad = None\n"
HID = "g = cpu_generator(19)\nsequence = torch.randn(12, 2, generator=g)\ntargets = torch.randn(12, 1, generator=g)\nw_in, w_h, w_out = (\n    (0.5 * torch.randn(*shape, generator=g)).requires_grad_() for shape in ((2, 4), (4, 4), (4, 1))\n)\n"
HLOOP = "losses = []\nfor start in (0, 4, 8):\n{pre}    loss = torch.zeros(())\n    for t in range(start, start + 4):\n{inner}        h = torch.tanh(sequence[t : t + 1] @ w_in + h @ w_h)\n        loss = loss + (h @ w_out - targets[t : t + 1]).pow(2).sum()\n    loss.backward({bw})\n    with torch.no_grad():\n        for p in (w_in, w_h, w_out):\n            p -= 0.1 * p.grad\n            p.grad = None\n    losses.append(loss.item())\nanswer = losses"
PEN = "g = cpu_generator(29)\nw = torch.randn(3, generator=g).requires_grad_()\nxs = torch.randn(6, 3, generator=g)\nloss = (xs @ w).pow(2).mean()\n"

with Walk("09") as w:
    w.setup()
    E = "09.backward_twice_error"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = None"), "accumulates, no error", "fail")
    w.try_(
        E,
        cell(E, "answer", 'answer = "Trying to backward through the graph a second time"'),
        "the message",
        "fail",
    )
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "right", "pass")

    E = "09.sum_losses"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E, "answer", SUM + "loss_a.backward(retain_graph=True)\nloss_b.backward()\nanswer = w"
        ),
        "retain_graph (ruled out)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(E, "answer", SUM + "torch.stack([loss_a, loss_b]).mean().backward()\nanswer = w"),
        "mean of the two (half)",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            SUM
            + "loss_a.backward()\nh = torch.tanh(inputs @ w)\nloss_b = (h[:, 0] - h[:, 1]).abs().mean()\nloss_b.backward()\nanswer = w",
        ),
        "second forward + second backward (two passes)",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", SUM + "(loss_a + loss_b).backward()\nanswer = w.grad"),
        "w.grad",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", SUM + "torch.autograd.backward([loss_a, loss_b])\nanswer = w"),
        "one call, two roots (one pass)",
        "pass?",
    )
    w.try_(
        E,
        cell(E, "answer", SUM + "total = loss_a + loss_b\ntotal.backward()\nanswer = w"),
        "right",
        "pass",
    )

    E = "09.second_derivative_tanh"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "second_derivative_of_tanh",
            "def second_derivative_of_tanh(x):\n    x = x.detach().requires_grad_()\n    (d1,) = torch.autograd.grad(torch.tanh(x).sum(), x)\n    (d2,) = torch.autograd.grad(d1.sum(), x)\n    return d2",
        ),
        "no create_graph",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "second_derivative_of_tanh",
            "def second_derivative_of_tanh(x):\n    x = x.detach().requires_grad_()\n    (d1,) = torch.autograd.grad(torch.tanh(x).sum(), x, create_graph=True)\n    return d1",
        ),
        "first derivative",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "second_derivative_of_tanh",
            "def second_derivative_of_tanh(x):\n    t = torch.tanh(x)\n    return -2 * t * (1 - t**2)",
        ),
        "formula (ruled out)",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "second_derivative_of_tanh",
            "def second_derivative_of_tanh(x):\n    x.requires_grad_(True)\n    (d1,) = torch.autograd.grad(torch.tanh(x).sum(), x, create_graph=True)\n    (d2,) = torch.autograd.grad(d1.sum(), x)\n    return d2",
        ),
        "modifies the input",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "second_derivative_of_tanh",
            "def second_derivative_of_tanh(x):\n    x = x.detach().requires_grad_()\n    (d1,) = torch.autograd.grad(torch.tanh(x).sum(), x, create_graph=True)\n    (d2,) = torch.autograd.grad(d1.sum(), x, create_graph=True)\n    return d2",
        ),
        "d2 with a graph",
        "?",
    )
    w.try_(
        E,
        fn(
            E,
            "second_derivative_of_tanh",
            "def second_derivative_of_tanh(x):\n    x = x.clone().requires_grad_(True)\n    y = torch.tanh(x)\n    (d1,) = torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)\n    (d2,) = torch.autograd.grad(d1, x, torch.ones_like(d1))\n    return d2",
        ),
        "right: grad_outputs",
        "pass",
    )

    E = "09.grad_has_graph"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = (False, False)"), "never", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = (True, True)"), "x requires grad so both", "fail")
    w.try_(E, cell(E, "answer", "answer = [True, False]"), "list", "?")
    w.try_(E, cell(E, "answer", 'answer = ("True", "False")'), "strings", "fail")
    w.try_(E, cell(E, "answer", "answer = (True, False)"), "right", "pass")

    E = "09.third_derivative"
    w.cell_of(E)
    X = "x = torch.tensor(1.5, requires_grad=True)\n\n"
    w.try_(
        E,
        cell(
            E,
            "answer",
            X
            + "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\n(d2,) = torch.autograd.grad(d1, x)\nd2.backward()\nanswer = x",
        ),
        "d2 without create_graph (raises)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            X
            + "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\nd1.backward()\nanswer = x",
        ),
        "one grad only: x.grad = f''",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            X
            + "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\n(d2,) = torch.autograd.grad(d1, x, create_graph=True)\nx.grad = torch.tensor(36.0)\nanswer = x",
        ),
        "typed 36 into .grad",
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
        "backward(create_graph) three times (task: autograd.grad twice)",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            X
            + "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\n(d2,) = torch.autograd.grad(d1, x, create_graph=True)\nd2.backward()\nanswer = x",
        ),
        "right",
        "pass",
    )

    E = "09.train_both"
    w.cell_of(E)
    w.try_(
        E,
        TRAIN
        + "losses = []\nfeatures = torch.tanh(data @ proj)\nfor _ in range(5):\n    loss = ((features @ head - target) ** 2).mean()\n    loss.backward(retain_graph=True)\n"
        + STEP
        + "    losses.append(loss.item())\nanswer = losses"
        + TRAIN_TAIL,
        "retain_graph (ruled out; stale features)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        TRAIN
        + "losses = []\nfor _ in range(5):\n    features = torch.tanh(data @ proj)\n    loss = ((features @ head - target) ** 2).mean()\n    loss.backward()\n"
        + STEP
        + "    losses.append(loss)\nanswer = losses"
        + TRAIN_TAIL,
        "first bug fixed, graphs kept",
        "fail",
    )
    w.try_(
        E,
        TRAIN
        + "losses = []\nfeatures = torch.tanh(data @ proj).detach()\nfor _ in range(5):\n    loss = ((features @ head - target) ** 2).mean()\n    loss.backward()\n    with torch.no_grad():\n        head -= 0.1 * head.grad\n        head.grad = None\n    losses.append(loss.item())\nanswer = losses"
        + TRAIN_TAIL,
        "features detached: proj never learns",
        "fail",
    )
    w.try_(
        E,
        TRAIN
        + "losses = []\nfor _ in range(5):\n    features = torch.tanh(data @ proj)\n    loss = ((features @ head - target) ** 2).mean()\n    loss.backward()\n"
        + STEP
        + "    losses.append(loss.detach())\nanswer = losses"
        + TRAIN_TAIL,
        "right: detached tensors",
        "pass",
    )

    E = "09.carry_hidden"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            HID
            + "h = torch.zeros(1, 4)\n"
            + HLOOP.format(pre="", inner="", bw="retain_graph=True").replace(
                '\ncheck("09.carry_hidden", answer)', ""
            ),
        ),
        "retain_graph (ruled out)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(E, "answer", HID + HLOOP.format(pre="    h = torch.zeros(1, 4)\n", inner="", bw="")),
        "h reset every chunk (does not carry)",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            HID
            + "h = torch.zeros(1, 4)\n"
            + HLOOP.format(pre="", inner="        h = h.detach()\n", bw=""),
        ),
        "detach every time step",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            HID
            + "h = torch.zeros(1, 4)\n"
            + HLOOP.format(pre="    h = h.detach()\n", inner="", bw=""),
        ),
        "right",
        "pass",
    )

    E = "09.gradient_penalty"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            PEN
            + "loss.backward(create_graph=True)\ngrad_w = w.grad\npenalty = 0.1 * grad_w.pow(2).sum()\ntotal = loss + penalty\ntotal.backward()\nanswer = w",
        ),
        "backward(create_graph) leak",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            PEN
            + "(grad_w,) = torch.autograd.grad(loss, w)\npenalty = 0.1 * grad_w.pow(2).sum()\ntotal = loss + penalty\ntotal.backward()\nanswer = w",
        ),
        "no create_graph: penalty constant",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            PEN
            + "(grad_w,) = torch.autograd.grad(loss, w, create_graph=True)\npenalty = 0.1 * grad_w.pow(2)\ntotal = loss + penalty.sum()\ntotal.backward()\nanswer = w",
        ),
        "right (sum later)",
        "pass",
    )
