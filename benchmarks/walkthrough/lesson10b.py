# ruff: noqa: E501  (answer cells are written as one-line strings)
from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


HEAD = """import io

g = cpu_generator(13)
x = torch.randn(16, 3, generator=g)
y = x @ torch.tensor([[1.0], [-1.0], [2.0]]) + 0.5


def make_run():
    torch.manual_seed(0)
    net = nn.Linear(3, 1)
    return net, torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)


def train(net, optimizer, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        optimizer.step()


"""
RES = "net, optimizer = make_run()\ntrain(net, optimizer, 4)\nbuffer = io.BytesIO()\n{save}\n\nbuffer.seek(0)\ncheckpoint = torch.load(buffer)\nnet, optimizer = make_run()\n{load}\ntrain(net, optimizer, 4)\nanswer = net.weight.detach().clone()"
BOTH = 'torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict()}, buffer)'
with Walk("10") as w:
    w.setup()
    E = "10.resume_checkpoint"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            HEAD
            + RES.format(
                save="torch.save(net.state_dict(), buffer)", load="net.load_state_dict(checkpoint)"
            ),
        ),
        "as given",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            HEAD + RES.format(save=BOTH, load='net.load_state_dict(checkpoint["model"])'),
        ),
        "saved optimizer, forgot to load it",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            HEAD
            + RES.format(
                save=BOTH,
                load='net.load_state_dict(checkpoint["model"])\noptimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)\noptimizer.load_state_dict(checkpoint["optimizer"])',
            ),
        ),
        "new optimizer after loading, state loaded (right)",
        "pass",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            HEAD
            + "net, optimizer = make_run()\ntrain(net, optimizer, 8)\nanswer = net.weight.detach().clone()",
        ),
        "8 steps without a stop (no checkpoint)",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            HEAD
            + RES.format(
                save=BOTH,
                load='net.load_state_dict(checkpoint["model"])\noptimizer.load_state_dict(checkpoint["optimizer"])',
            ),
        ),
        "right",
        "pass",
    )
