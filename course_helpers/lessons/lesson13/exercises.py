"""Checked exercises for lesson 13: data-parallel training with torchrun.

Besides ``EXERCISES`` this module offers ``run_on_two_ranks`` (from ``environment.two_ranks``),
which the lesson's solution notebook uses to run a learner's function in two processes,
as torchrun would.
"""

from __future__ import annotations

import torch

from course_helpers.environment.two_ranks import (  # noqa: F401 (imported from here)
    RunFailed,
    _failure,
    run_on_two_ranks,
)
from course_helpers.lessons.model import Exercise

LESSON = "13_distributed_data_parallel"

# --- shared data and references (built in this process, never in the ranks)


def _regression_data():
    g = torch.Generator().manual_seed(13)
    x = torch.randn(8, 3, generator=g)
    y = torch.randn(8, 1, generator=g)
    return x, y


def _flat(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def _full_batch_weights(steps: int):
    """One process, the whole batch of 8, plain SGD: what two ranks with 4 each must match."""
    x, y = _regression_data()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return _flat(model)


def _by_hand_reference():
    w = _full_batch_weights(5)
    return torch.stack([w, w])


def _small_problem():
    x = torch.tensor([[1.0, 2.0], [0.0, 1.0], [2.0, 0.0], [1.0, 1.0]])
    y = torch.tensor([1.0, 0.0, 2.0, 1.0])
    w = torch.tensor([0.5, -1.0])
    return x, y, w


def _averaged_gradient():
    x, y, w = _small_problem()
    grads = []
    for shard in (slice(0, 2), slice(2, 4)):
        w_rank = w.clone().requires_grad_(True)
        ((x[shard] @ w_rank - y[shard]) ** 2).mean().backward()
        grads.append(w_rank.grad)
    return (grads[0] + grads[1]) / 2


def _epoch_orders():
    from torch.utils.data import TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    dataset = TensorDataset(torch.arange(12))
    orders = []
    for rank in range(2):
        sampler = DistributedSampler(dataset, num_replicas=2, rank=rank, shuffle=True, seed=0)
        per_epoch = []
        for epoch in range(3):
            sampler.set_epoch(epoch)
            per_epoch.append(list(sampler))
        orders.append(per_epoch)
    return torch.tensor(orders)


def _checkpoint_reference():
    torch.manual_seed(0)
    w = _flat(torch.nn.Linear(3, 1))
    return {"saves per rank": [1, 0], "loaded": torch.stack([w, w])}


def _pick_backend(cuda_count, local_rank, local_world_size):
    if cuda_count >= local_world_size:
        return ("nccl", f"cuda:{local_rank}")
    return ("gloo", "cpu")


def _pick_backend_cases(g):
    del g  # the inputs are counts, not random tensors
    return [
        (0, 0, 2),  # a CPU-only machine
        (0, 1, 2),
        (1, 0, 2),  # one GPU for two processes: not enough, use the CPU path
        (1, 1, 2),
        (2, 1, 2),  # one GPU per process
        (8, 5, 8),
        (4, 3, 2),  # more GPUs than processes on this machine
        (1, 0, 1),  # edge case: a single process on a single GPU
    ]


def _accumulation_reference():
    """The weights after one step, and one gradient all-reduce per rank (no_sync)."""
    w = _full_batch_weights(1)
    return {"weights": torch.stack([w, w]), "all-reduces per rank": [1, 1]}


def _mean_loss(rows) -> float:
    """One process's mean loss over some of the 5 evaluation rows (the first 5 of 8)."""
    x, y = _regression_data()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        return torch.nn.functional.mse_loss(model(x[rows]), y[rows]).item()


EXERCISES = [
    # --- quick questions in the lesson notebook ---
    Exercise(
        id="13.quiz_set_epoch",
        title="What set_epoch changes",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "nothing: DistributedSampler reshuffles by itself every epoch",
            "b": "the seed of the shuffle: without it every epoch repeats epoch 0's order",
            "c": "which rank gets which half; without it both ranks see the same samples",
        },
        explanations={
            "a": "The sampler's shuffle is seeded with seed + epoch, and epoch stays 0 until "
            "you call set_epoch: the lesson's run printed the same order three times.",
            "c": "The split into disjoint shards happens with or without set_epoch; what "
            "repeats is the order.",
        },
        hints=(
            "Look at the orders the lesson's script printed with and without set_epoch.",
            "DistributedSampler seeds its shuffle with seed + epoch. Who changes epoch?",
            "Only set_epoch changes the epoch number, hence the order: 'b'.",
        ),
        solution='check("13.quiz_set_epoch", "b")',
    ),
    Exercise(
        id="13.quiz_one_rank_collective",
        title="A collective that only one rank calls",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "d",
        options={
            "a": "it raises an error at once on that rank",
            "b": "it returns that rank's own tensor unchanged",
            "c": "that rank waits for the others; only the process group's timeout ends the wait",
            "d": "that rank waits for the others, until the group's timeout or until another "
            "rank's process exits (a connection error)",
        },
        explanations={
            "a": "Nothing can tell the rank at once that the others will never come: it waits.",
            "b": "A collective never completes alone; it needs every rank of the group.",
            "c": "The timeout is one end of the wait, not the only one: in the lesson, rank 0's "
            "all_reduce on the default group (a 30-minute timeout) failed with 'Connection "
            "closed by peer' as soon as rank 1's process had exited.",
        },
        hints=(
            "What did rank 0 do in the lesson's hang demonstration before each of its two "
            "errors came?",
            "It waited both times: once until the 5-second timeout, once only until rank 1's "
            "process exited, long before the 30-minute timeout.",
            "It waits until the timeout, or until a peer's process exits: 'd'.",
        ),
        solution='check("13.quiz_one_rank_collective", "d")',
    ),
    Exercise(
        id="13.quiz_spawn_notebook",
        title="Why mp.spawn from a notebook breaks",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "a",
        options={
            "a": "the new processes receive the function by name (__main__.train), and their "
            "__main__ is not the notebook, so the name is missing there",
            "b": "Jupyter forbids starting processes",
            "c": "gloo does not work inside Jupyter",
        },
        explanations={
            "b": "The notebook starts processes every time it runs torchrun with '!'.",
            "c": "gloo is the same library whoever starts the processes; the failure comes "
            "before any process group exists.",
        },
        hints=(
            "What did pickle.dumps(train) contain in the lesson?",
            "A function is pickled as its module and name only. Which module is __main__ "
            "in a freshly spawned Python process?",
            "The name cannot be found in the child's __main__: 'a'.",
        ),
        solution='check("13.quiz_spawn_notebook", "a")',
    ),
    # --- exercises in solutions/13_distributed_data_parallel.ipynb ---
    Exercise(
        id="13.averaged_gradient",
        title="Predict the averaged gradient",
        lesson=LESSON,
        kind="value",
        build_reference=_averaged_gradient,
        atol=1e-6,
        rtol=1e-6,
        hints=(
            "Compute each rank's gradient of its own mean squared error (rows 0-1 for rank "
            "0, rows 2-3 for rank 1), then combine the two as DDP does.",
            "DDP sums the ranks' gradients with an all-reduce and divides by the world size; "
            "with equal shards that is the full batch's gradient.",
            "Make a leaf copy of w per shard, call backward() on ((x[s] @ w_r - y[s]) ** 2)"
            ".mean(), and average the two .grad tensors.",
        ),
        solution=(
            "grads = []\n"
            "for shard in (slice(0, 2), slice(2, 4)):\n"
            "    w_rank = w.clone().requires_grad_(True)\n"
            "    ((x4[shard] @ w_rank - y4[shard]) ** 2).mean().backward()\n"
            "    grads.append(w_rank.grad)\n"
            "answer = (grads[0] + grads[1]) / 2"
        ),
    ),
    Exercise(
        id="13.average_by_hand",
        require=("call:all_reduce",),
        task_says={
            "by hand": "check:call:all_reduce",
            "with dist.all_reduce": "check:call:all_reduce",
        },
        title="Average the gradients with all_reduce",
        lesson=LESSON,
        kind="value",
        build_reference=_by_hand_reference,
        atol=1e-6,
        rtol=1e-5,
        hints=(
            "Every parameter's .grad must become the mean over the ranks, in place, on every rank.",
            "dist.all_reduce(t) sums t over all ranks in place (op=SUM is the default); the "
            "sum still has to be divided.",
            "for p in model.parameters(): all-reduce p.grad, then divide it in place by "
            "world_size.",
        ),
        solution=(
            "def average_gradients(model, world_size):\n"
            "    for p in model.parameters():\n"
            "        dist.all_reduce(p.grad)\n"
            "        p.grad /= world_size"
        ),
    ),
    Exercise(
        id="13.fix_set_epoch",
        forbid=("many:DistributedSampler",),
        task_says={"only the bug fixed": "check:many:DistributedSampler"},
        title="Repair a sampler that repeats every epoch",
        lesson=LESSON,
        kind="value",
        build_reference=_epoch_orders,
        hints=(
            "The shards are right; compare epoch 0's order with epoch 1's.",
            "DistributedSampler shuffles with seed + epoch; the loop never tells it the epoch.",
            "Call sampler.set_epoch(epoch) at the top of each epoch, before iterating the loader.",
        ),
        solution=(
            "def epoch_orders(rank, world_size, workdir):\n"
            "    dataset = TensorDataset(torch.arange(12))\n"
            "    sampler = DistributedSampler(dataset, shuffle=True, seed=0)\n"
            "    loader = DataLoader(dataset, batch_size=3, sampler=sampler)\n"
            "    orders = []\n"
            "    for epoch in range(3):\n"
            "        sampler.set_epoch(epoch)\n"
            "        orders.append([i for (batch,) in loader for i in batch.tolist()])\n"
            "    return orders"
        ),
    ),
    Exercise(
        id="13.rank0_checkpoint",
        task_says={
            "once per rank": "check:counts (torch.save calls per rank)",
            "exactly once": "check:counts (torch.save calls per rank)",
            "before it is complete": "check:call:barrier|monitored_barrier",
        },
        title="One checkpoint, written by rank 0",
        lesson=LESSON,
        kind="value",
        require=("call:barrier|monitored_barrier",),  # no rank may read before the save
        build_reference=_checkpoint_reference,
        hints=(
            "Count the writes: how many processes run the torch.save line?",
            "Guard the save with the rank, and make the other ranks wait until the file is "
            "complete before they read it.",
            "if rank == 0: torch.save(...); then dist.barrier(); then every rank loads with "
            'map_location="cpu".',
        ),
        solution=(
            "def save_then_load(rank, world_size, workdir):\n"
            "    torch.manual_seed(0)\n"
            "    model = nn.Linear(3, 1)\n"
            '    path = os.path.join(workdir, "model.pt")\n'
            "    if rank == 0:\n"
            "        torch.save(model.state_dict(), path)\n"
            "    dist.barrier()\n"
            '    state = torch.load(path, map_location="cpu")\n'
            "    return torch.cat([state[k].flatten() for k in state])"
        ),
    ),
    Exercise(
        id="13.pick_backend",
        title="Choose the backend and the device",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _pick_backend,
        cases=_pick_backend_cases,
        hints=(
            "NCCL needs one GPU per process on this machine; otherwise stay on the CPU.",
            "Compare cuda_count with local_world_size; a process's GPU is numbered by its "
            "local rank.",
            "When there are at least as many GPUs as local processes: NCCL, and the GPU whose "
            "number is the local rank; in every other case: gloo on the CPU.",
        ),
        solution=(
            "def pick_backend(cuda_count, local_rank, local_world_size):\n"
            "    if cuda_count >= local_world_size:\n"
            '        return ("nccl", f"cuda:{local_rank}")\n'
            '    return ("gloo", "cpu")'
        ),
    ),
    Exercise(
        id="13.accumulate_no_sync",
        task_says={
            "right after": "check:value (another seed gives other initial weights)",
            "take one step": "check:value (a second step gives other weights)",
            "only once (": "check:counts (gradient all-reduces per rank)",
        },
        title="Accumulate two micro-batches under DDP",
        lesson=LESSON,
        kind="value",
        build_reference=_accumulation_reference,
        atol=1e-6,
        rtol=1e-5,
        hints=(
            "Each rank holds 4 rows; run them as two micro-batches of 2 and take one "
            "optimizer step. The result must equal one step on all 8 rows.",
            "The first backward() goes inside `with ddp.no_sync():` (no all-reduce), the "
            "second outside it; each micro-batch loss is divided by the number of "
            "micro-batches, as in lesson 06.",
            "with ddp.no_sync(): (loss on rows 0-1 of the shard / 2).backward(); then (loss on "
            "rows 2-3 / 2).backward(); then optimizer.step().",
        ),
        solution=(
            "def accumulate(rank, world_size, workdir):\n"
            "    g = torch.Generator().manual_seed(13)\n"
            "    x = torch.randn(8, 3, generator=g)\n"
            "    y = torch.randn(8, 1, generator=g)\n"
            "    torch.manual_seed(0)\n"
            "    ddp = DDP(nn.Linear(3, 1))\n"
            "    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)\n"
            "    xs, ys = x[rank * 4 : rank * 4 + 4], y[rank * 4 : rank * 4 + 4]\n"
            "    optimizer.zero_grad()\n"
            "    with ddp.no_sync():\n"
            "        (F.mse_loss(ddp(xs[:2]), ys[:2]) / 2).backward()\n"
            "    (F.mse_loss(ddp(xs[2:]), ys[2:]) / 2).backward()\n"
            "    optimizer.step()\n"
            "    return torch.cat([p.detach().flatten() for p in ddp.parameters()])"
        ),
    ),
    Exercise(
        id="13.exact_evaluation",
        rank_rows=5,
        rank_value="number",
        task_says={
            "Return it as a Python number": "check:rank_value",
            "right after": "check:value (another seed gives another model)",
            "exactly one rank": "check:counts (rows the ranks' models saw: 5 in all)",
            "with dist.all_reduce": "check:call:all_reduce",
        },
        title="An exact mean loss over uneven shards",
        lesson=LESSON,
        kind="value",
        require=("call:all_reduce",),  # the ranks combine their parts
        build_reference=lambda: torch.tensor([_mean_loss(list(range(5)))] * 2),
        atol=1e-6,
        rtol=1e-5,
        hints=(
            "Give every sample to exactly one rank: with 5 samples and 2 ranks, one gets 3 "
            "and the other 2 (no padding, nothing dropped).",
            'Each rank sums its squared errors (reduction="sum") and counts its samples; '
            "an all-reduce adds both over the ranks; the mean is sum / count.",
            "rows = list(range(rank, 5, world_size)); all-reduce torch.stack([the sum, "
            "float(len(rows))]) and return (sums[0] / sums[1]).item().",
        ),
        solution=(
            "def evaluate(rank, world_size, workdir):\n"
            "    g = torch.Generator().manual_seed(13)\n"
            "    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)\n"
            "    x, y = x[:5], y[:5]\n"
            "    torch.manual_seed(0)\n"
            "    model = nn.Linear(3, 1)\n"
            "    rows = list(range(rank, 5, world_size))\n"
            "    with torch.no_grad():\n"
            '        total = F.mse_loss(model(x[rows]), y[rows], reduction="sum")\n'
            "    sums = torch.stack([total, torch.tensor(float(len(rows)))])\n"
            "    dist.all_reduce(sums)\n"
            "    return (sums[0] / sums[1]).item()"
        ),
    ),
    Exercise(
        id="13.uninitialized_error",
        title="A collective before init_process_group",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: ValueError,
        explanations={
            "RuntimeError": "Not a failure while communicating: PyTorch refuses earlier, "
            "because there is no default process group to ask.",
            "TimeoutError": "Nothing waits: without a process group there is nobody to wait "
            "for, and the call fails at once.",
        },
        hints=(
            "Run dist.all_reduce(torch.ones(1)) in a scratch cell of this notebook (no process "
            "group exists here).",
            "The message says the default process group has not been initialized; which "
            "class does PyTorch use for a missing setting?",
            "It is a ValueError.",
        ),
        solution="answer = ValueError",
    ),
]
