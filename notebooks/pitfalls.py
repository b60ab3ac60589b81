import os
import sys
from datetime import timedelta

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler


def data():
    g = torch.Generator().manual_seed(13)  # the lesson's 8 rows, the same on every rank
    return torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)


def my_rows(t):
    rank = dist.get_rank()
    return t[rank * 4 : rank * 4 + 4]


def evaluation():
    """The mean loss over 5 samples (the first 5 rows), split across the ranks three ways."""
    x, y = data()
    x, y = x[:5], y[:5]
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    splits = {
        "DistributedSampler": list(DistributedSampler(range(5), shuffle=False)),
        "drop_last=True": list(DistributedSampler(range(5), shuffle=False, drop_last=True)),
        "unpadded split": list(range(rank, 5, world_size)),  # every sample exactly once
    }
    results = {}
    for label, rows in splits.items():
        with torch.no_grad():
            total = F.mse_loss(model(x[rows]), y[rows], reduction="sum")
        sums = torch.stack([total, torch.tensor(float(len(rows)))])
        dist.all_reduce(sums)  # [sum of the losses, number of samples] over all ranks
        results[label] = (rows, (sums[0] / sums[1]).item())
    return results


def printed_loss():
    """The loss of this rank's 4 rows, and its mean over the ranks."""
    x, y = data()
    torch.manual_seed(0)
    ddp = DDP(nn.Linear(3, 1))
    loss = F.mse_loss(ddp(my_rows(x)), my_rows(y))
    mean = loss.detach().clone()
    dist.all_reduce(mean)  # the sum over the ranks ...
    mean /= dist.get_world_size()  # ... divided by their number: the mean (equal shards)
    return loss.item(), mean.item()


def batch_norm():
    """One backward through BatchNorm under DDP; then SyncBatchNorm on the CPU."""
    x, y = data()
    torch.manual_seed(0)
    ddp = DDP(nn.Sequential(nn.BatchNorm1d(3), nn.Linear(3, 1)))
    F.mse_loss(ddp(my_rows(x)), my_rows(y)).backward()
    grads = torch.cat([p.grad.flatten() for p in ddp.parameters()])
    running_mean = ddp.module[0].running_mean.clone()
    synced = nn.SyncBatchNorm.convert_sync_batchnorm(
        nn.Sequential(nn.BatchNorm1d(3), nn.Linear(3, 1))
    )
    try:
        DDP(synced)
        refused = "accepted"
    except ValueError as err:
        refused = f"{type(err).__name__}: {err}"
    return running_mean, grads, type(synced[0]).__name__, refused


class WithSpare(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(3, 1)
        self.spare = nn.Linear(3, 1)  # a layer the forward never calls

    def forward(self, x):
        return self.used(x)


def unused_parameter(find_unused_parameters):
    """Two training steps of WithSpare: what happened, and the all-reduces of each step."""
    x, y = data()
    torch.manual_seed(0)
    ddp = DDP(WithSpare(), find_unused_parameters=find_unused_parameters)
    calls = []

    def counting_allreduce(state, bucket):
        calls.append(1)
        return default_hooks.allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, counting_allreduce)
    per_step = []
    try:
        for step in range(2):
            before = len(calls)
            F.mse_loss(ddp(my_rows(x)), my_rows(y)).backward()
            per_step.append(len(calls) - before)
    except RuntimeError as err:  # kept to show it; uncaught, it would end the rank
        return f"step {step} failed: {type(err).__name__}: {err}", per_step
    return "both steps ran", per_step


def uneven_inputs(use_join):
    """Rank 0 trains on 3 batches, rank 1 on 2: what happened, and the final weights."""
    g = torch.Generator().manual_seed(13)
    x, y = torch.randn(10, 3, generator=g), torch.randn(10, 1, generator=g)
    rows = range(0, 6) if dist.get_rank() == 0 else range(6, 10)
    batches = [list(rows)[i : i + 2] for i in range(0, len(rows), 2)]  # 3 or 2 batches of 2
    dist.barrier()  # both ranks are here: they make the short-timeout group together
    quick = dist.new_group(timeout=timedelta(seconds=5))
    torch.manual_seed(0)
    ddp = DDP(nn.Linear(3, 1), process_group=quick)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    steps = 0
    try:
        with Join([ddp], enable=use_join):  # enable=False: as if there were no Join
            for batch in batches:
                optimizer.zero_grad()
                F.mse_loss(ddp(x[batch]), y[batch]).backward()
                optimizer.step()
                steps += 1
        outcome = f"finished its {steps} steps"
    except RuntimeError as err:
        text = str(err).lower()
        timed_out = "timed out" in text or "timeout" in text
        outcome = f"{type(err).__name__} in step {steps}, the 5-second timeout: {timed_out}"
    return outcome, torch.cat([p.detach().flatten() for p in ddp.module.parameters()])


if __name__ == "__main__":
    dist.init_process_group("gloo")
    mine = {
        "evaluation": evaluation(),
        "printed loss": printed_loss(),
        "batch norm": batch_norm(),
        "unused, default": unused_parameter(False),
        "unused, find_unused_parameters=True": unused_parameter(True),
        "uneven, no Join": uneven_inputs(False),
        "uneven, Join": uneven_inputs(True),
    }
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)  # rank 0 collects every rank's results
    if dist.get_rank() == 0:
        torch.save(everyone, sys.argv[1])
    dist.destroy_process_group()
