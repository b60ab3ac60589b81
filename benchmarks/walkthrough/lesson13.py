# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 13 exercises, as a new learner (each launch runs two ranks in their own processes)."""

from driver import Walk


def fill(template, body):
    return template.replace("{body}", body)


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


AG = "x4 = torch.tensor([[1.0, 2.0], [0.0, 1.0], [2.0, 0.0], [1.0, 1.0]])\ny4 = torch.tensor([1.0, 0.0, 2.0, 1.0])\nw = torch.tensor([0.5, -1.0])\n"
SHARD = "def shard_grad(rows):\n    w2 = w.clone().requires_grad_()\n    ((x4[rows] @ w2 - y4[rows]) ** 2).mean().backward()\n    return w2.grad\n\n\n"
TBH = """def train_by_hand(rank, world_size, workdir):
    g = torch.Generator().manual_seed(13)
    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    per = len(x) // world_size
    xs, ys = x[rank * per : (rank + 1) * per], y[rank * per : (rank + 1) * per]
    for _ in range(5):
        optimizer.zero_grad()
        F.mse_loss(model(xs), ys).backward()
        average_gradients(model, world_size)
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def average_gradients(model, world_size):
{body}"""
AG_CHECK = 'answer = stacked(run_on_two_ranks(train_by_hand, average_gradients))\ncheck("13.average_by_hand", answer)'
EO = """def epoch_orders(rank, world_size, workdir):
    dataset = TensorDataset(torch.arange(12))
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=3, sampler=sampler)
    orders = []
    for epoch in range(3):
{body}
    return orders


answer = stacked(run_on_two_ranks(epoch_orders))  # shape (rank, epoch, sample)
check("13.fix_set_epoch", answer)"""
ORD = "        orders.append([i for (batch,) in loader for i in batch.tolist()])"
SL = """def save_then_load(rank, world_size, workdir):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    path = os.path.join(workdir, "model.pt")
{body}
    return torch.cat([state[k].flatten() for k in state])


results = run_on_two_ranks(save_then_load)
if not isinstance(results, list):  # not attempted, or the run failed
    answer = results
else:
    answer = {"saves per rank": [r["saves"] for r in results], "loaded": stacked(results)}
check("13.rank0_checkpoint", answer)"""
PB = 'def pick_backend(cuda_count, local_rank, local_world_size):\n{body}\n\n\ncheck("13.pick_backend", pick_backend)'
ACC = """def accumulate(rank, world_size, workdir):
    g = torch.Generator().manual_seed(13)
    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
    x, y = x[4 * rank : 4 * rank + 4], y[4 * rank : 4 * rank + 4]
    torch.manual_seed(0)
    ddp = DDP(nn.Linear(3, 1))
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    optimizer.zero_grad()
{body}
    optimizer.step()
    return torch.cat([p.detach().flatten() for p in ddp.parameters()])


results = run_on_two_ranks(accumulate)
if not isinstance(results, list):  # not attempted, or the run failed
    answer = results
else:
    answer = {
        "weights": stacked(results),
        "all-reduces per rank": [r["allreduces"] for r in results],
    }
check("13.accumulate_no_sync", answer)"""
EV = """def evaluate(rank, world_size, workdir):
    g = torch.Generator().manual_seed(13)
    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
    x, y = x[:5], y[:5]
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
{body}


answer = stacked(run_on_two_ranks(evaluate))  # one number per rank
check("13.exact_evaluation", answer)"""

with Walk("13", timeout=600) as w:
    w.setup()
    E = "13.averaged_gradient"
    w.cell_of(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            AG
            + SHARD
            + "grads = [shard_grad(slice(0, 2)), shard_grad(slice(2, 4))]\nanswer = grads[0] + grads[1]",
        ),
        "summed, not averaged",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E,
            "answer",
            AG
            + SHARD
            + "grads = [shard_grad(slice(0, 2)), shard_grad(slice(2, 4))]\nanswer = grads[0]",
        ),
        "rank 0's own gradient",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            AG
            + SHARD
            + "grads = [shard_grad(slice(0, 2)), shard_grad(slice(2, 4))]\nanswer = torch.stack(grads)",
        ),
        "both, stacked (shape (2, 2))",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            AG
            + SHARD
            + "grads = [shard_grad(slice(0, 2)), shard_grad(slice(2, 4))]\nanswer = (grads[0] + grads[1]) / 2",
        ),
        "right: average of the shards",
        "pass",
    )

    E = "13.average_by_hand"
    w.cell_of(E)
    w.pre(E, fill(TBH, "    for p in model.parameters():\n        dist.all_reduce(p.grad)"))
    w.try_(E, AG_CHECK, "sum, no division", "fail")
    w.hint(E)
    w.pre(E, fill(TBH, "    for p in model.parameters():\n        p.grad /= world_size"))
    w.try_(E, AG_CHECK, "division, no all_reduce", "fail")
    w.pre(
        E,
        fill(
            TBH,
            "    for p in model.parameters():\n        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)",
        ),
    )
    w.try_(E, AG_CHECK, "ReduceOp.AVG (gloo?)", "?")
    w.pre(
        E,
        fill(
            TBH,
            "    for p in model.parameters():\n        dist.all_reduce(p.grad)\n        p.grad /= world_size",
        ),
    )
    w.try_(E, AG_CHECK, "right", "pass")

    E = "13.fix_set_epoch"
    w.cell_of(E)
    w.try_(E, fill(EO, "        sampler.set_epoch(0)\n" + ORD), "set_epoch(0)", "fail")
    w.hint(E)
    w.try_(
        E,
        fill(EO, ORD + "\n        sampler.set_epoch(epoch)"),
        "set_epoch after the epoch (off by one)",
        "fail",
    )
    w.try_(
        E,
        fill(
            EO,
            "        sampler = DistributedSampler(dataset, shuffle=True, seed=epoch)\n        loader = DataLoader(dataset, batch_size=3, sampler=sampler)\n"
            + ORD,
        ),
        "new sampler with seed=epoch",
        "fail",
    )
    w.try_(E, fill(EO, "        sampler.set_epoch(epoch)\n" + ORD), "right", "pass")

    E = "13.rank0_checkpoint"
    w.cell_of(E)
    w.try_(
        E,
        fill(
            SL,
            '    if rank == 0:\n        torch.save(model.state_dict(), path)\n    state = torch.load(path, map_location="cpu")',
        ),
        "no barrier",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fill(
            SL,
            '    dist.barrier()\n    if rank == 0:\n        torch.save(model.state_dict(), path)\n    state = torch.load(path, map_location="cpu")',
        ),
        "barrier before the save",
        "fail",
    )
    w.try_(
        E,
        fill(
            SL,
            '    torch.save(model.state_dict(), path)\n    dist.barrier()\n    state = torch.load(path, map_location="cpu")',
        ),
        "every rank saves, then barrier",
        "fail",
    )
    w.try_(
        E,
        fill(
            SL,
            "    if rank == 0:\n        torch.save(model.state_dict(), path)\n    dist.monitored_barrier()\n    state = torch.load(path)",
        ),
        "monitored_barrier, no map_location",
        "?",
    )
    w.try_(
        E,
        fill(
            SL,
            '    if rank == 0:\n        torch.save(model.state_dict(), path)\n    dist.barrier()\n    state = torch.load(path, map_location="cpu")',
        ),
        "right",
        "pass",
    )

    E = "13.pick_backend"
    w.cell_of(E)
    w.try_(
        E,
        fill(
            PB,
            '    if cuda_count > 0:\n        return ("nccl", f"cuda:{local_rank}")\n    return ("gloo", "cpu")',
        ),
        "one GPU is enough",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fill(
            PB,
            '    if cuda_count >= local_world_size:\n        return ("nccl", "cuda")\n    return ("gloo", "cpu")',
        ),
        "no index",
        "fail",
    )
    w.try_(
        E,
        fill(
            PB,
            '    if cuda_count >= local_world_size:\n        return ["nccl", f"cuda:{local_rank}"]\n    return ["gloo", "cpu"]',
        ),
        "a list",
        "fail",
    )
    w.try_(
        E,
        fill(
            PB,
            '    use_gpu = cuda_count >= local_world_size\n    return ("nccl" if use_gpu else "gloo", f"cuda:{local_rank}" if use_gpu else "cpu")',
        ),
        "right",
        "pass",
    )

    E = "13.accumulate_no_sync"
    w.cell_of(E)
    w.try_(
        E,
        fill(
            ACC,
            "    for xb, yb in zip(x.split(2), y.split(2)):\n        (F.mse_loss(ddp(xb), yb) / 2).backward()",
        ),
        "no no_sync: two all-reduces",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fill(
            ACC,
            "    with ddp.no_sync():\n        F.mse_loss(ddp(x[:2]), y[:2]).backward()\n    F.mse_loss(ddp(x[2:]), y[2:]).backward()",
        ),
        "no /2",
        "fail",
    )
    w.try_(
        E,
        fill(
            ACC,
            "    with ddp.no_sync():\n        for xb, yb in zip(x.split(2), y.split(2)):\n            (F.mse_loss(ddp(xb), yb) / 2).backward()",
        ),
        "both inside no_sync: no all-reduce",
        "fail",
    )
    w.try_(
        E,
        fill(
            ACC,
            "    out = ddp(x[:2])\n    with ddp.no_sync():\n        (F.mse_loss(out, y[:2]) / 2).backward()\n    (F.mse_loss(ddp(x[2:]), y[2:]) / 2).backward()",
        ),
        "forward outside no_sync",
        "fail",
    )
    w.try_(
        E,
        fill(
            ACC,
            "    with ddp.no_sync():\n        (F.mse_loss(ddp(x[:2]), y[:2]) / 2).backward()\n    (F.mse_loss(ddp(x[2:]), y[2:]) / 2).backward()",
        ),
        "right",
        "pass",
    )

    E = "13.uninitialized_error"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "runtime", "?")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = None"), "no error", "fail")
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value", "?")

    E = "13.exact_evaluation"
    w.cell_of(E)
    w.try_(
        E,
        fill(
            EV,
            "    rows = torch.arange(5)[rank::world_size]\n    with torch.no_grad():\n        loss = F.mse_loss(model(x[rows]), y[rows])\n    dist.all_reduce(loss)\n    return (loss / world_size).item()",
        ),
        "average of the ranks' means (uneven)",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fill(
            EV,
            '    sampler = DistributedSampler(TensorDataset(x, y), shuffle=False)\n    rows = list(sampler)\n    with torch.no_grad():\n        total = F.mse_loss(model(x[rows]), y[rows], reduction="sum")\n    dist.all_reduce(total)\n    return (total / 5).item()',
        ),
        "DistributedSampler pads",
        "fail",
    )
    w.try_(
        E,
        fill(
            EV,
            '    rows = torch.arange(5)[rank::world_size]\n    with torch.no_grad():\n        total = F.mse_loss(model(x[rows]), y[rows], reduction="sum")\n    dist.all_reduce(total)\n    return total / 5',
        ),
        "tensor, not .item()",
        "fail",
    )
    w.try_(
        E,
        fill(
            EV,
            "    with torch.no_grad():\n        loss = F.mse_loss(model(x), y)\n    return loss.item()",
        ),
        "every rank evaluates all 5 rows",
        "fail",
    )
    w.try_(
        E,
        fill(
            EV,
            "    rows = torch.arange(5)[rank::world_size]\n    with torch.no_grad():\n        sums = torch.stack([((model(x[rows]) - y[rows]) ** 2).sum(), torch.tensor(float(len(rows)))])\n    dist.all_reduce(sums)\n    return (sums[0] / sums[1]).item()",
        ),
        "right: sum and count",
        "pass",
    )
