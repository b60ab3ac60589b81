import os
import sys
from datetime import timedelta

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def epoch_orders(call_set_epoch):
    dataset = TensorDataset(torch.arange(12))
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=3, sampler=sampler)
    orders = []
    for epoch in range(3):
        if call_set_epoch:
            sampler.set_epoch(epoch)
        orders.append([i for (batch,) in loader for i in batch.tolist()])
    return orders


def counted_ddp():
    """DDP(nn.Linear(3, 1)), this rank's 4 rows, and a list that grows at each all-reduce."""
    g = torch.Generator().manual_seed(13)
    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
    rank = dist.get_rank()
    xs, ys = x[rank * 4 : rank * 4 + 4], y[rank * 4 : rank * 4 + 4]
    torch.manual_seed(0)
    ddp = DDP(nn.Linear(3, 1))
    calls = []

    def counting_allreduce(state, bucket):
        calls.append(1)
        return default_hooks.allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, counting_allreduce)
    return ddp, xs, ys, calls


def one_step(use_no_sync):
    """One SGD step on this rank's 4 rows, as two micro-batches of 2."""
    ddp, xs, ys, calls = counted_ddp()
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    optimizer.zero_grad()
    if use_no_sync:
        with ddp.no_sync():  # first micro-batch, forward and backward: no all-reduce
            (F.mse_loss(ddp(xs[:2]), ys[:2]) / 2).backward()
    else:
        (F.mse_loss(ddp(xs[:2]), ys[:2]) / 2).backward()
    (F.mse_loss(ddp(xs[2:]), ys[2:]) / 2).backward()  # all-reduces the accumulated sum
    optimizer.step()
    return torch.cat([p.detach().flatten() for p in ddp.parameters()]), len(calls)


def half_inside_no_sync(inside):
    """One forward and its backward, only one of the two inside no_sync(): all-reduces."""
    ddp, xs, ys, calls = counted_ddp()
    if inside == "forward":
        with ddp.no_sync():
            loss = F.mse_loss(ddp(xs), ys)
        loss.backward()
    else:
        loss = F.mse_loss(ddp(xs), ys)
        with ddp.no_sync():
            loss.backward()
    return len(calls)


def checkpoint_round_trip(folder, device):
    torch.manual_seed(0)
    ddp = DDP(nn.Linear(3, 1))
    path = os.path.join(folder, "checkpoint.pt")
    if dist.get_rank() == 0:
        torch.save(ddp.module.state_dict(), path)  # keys without "module."
    dist.barrier()  # nobody reads before rank 0 has finished writing
    state = torch.load(path, map_location=device)
    model = nn.Linear(3, 1).to(device)
    model.load_state_dict(state)
    return sorted(state), model.weight.detach().cpu()


def evaluate_on_rank_0():
    """After a training step, rank 0 alone runs the plain model, then the DDP model."""
    g = torch.Generator().manual_seed(13)
    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
    rank = dist.get_rank()
    dist.barrier()  # both ranks are here: they make the short-timeout group together
    quick = dist.new_group(timeout=timedelta(seconds=5))  # its collectives wait at most 5 s
    torch.manual_seed(0)
    ddp = DDP(nn.Sequential(nn.BatchNorm1d(3), nn.Linear(3, 1)), process_group=quick)
    F.mse_loss(ddp(x[rank * 4 : rank * 4 + 4]), y[rank * 4 : rank * 4 + 4]).backward()
    if rank != 0:
        return {}  # rank 1 goes on with its own work: it never evaluates
    ddp.eval()
    with torch.no_grad():
        outcome = {"ddp.module(x)": f"returned, shape {tuple(ddp.module(x).shape)}"}
        try:
            outcome["ddp(x)"] = f"returned, shape {tuple(ddp(x).shape)}"
        except RuntimeError as err:
            text = str(err).lower()
            timed_out = "timed out" in text or "timeout" in text
            outcome["ddp(x)"] = f"{type(err).__name__}, the 5-second timeout: {timed_out}"
    return outcome


if __name__ == "__main__":
    dist.init_process_group("gloo")
    out = sys.argv[1]
    mine = {
        "without set_epoch": epoch_orders(False),
        "with set_epoch": epoch_orders(True),
        "no_sync": one_step(True),
        "sync every micro-batch": one_step(False),
        "forward inside no_sync": half_inside_no_sync("forward"),
        "backward inside no_sync": half_inside_no_sync("backward"),
        "checkpoint": checkpoint_round_trip(os.path.dirname(out), torch.device("cpu")),
        "evaluate on rank 0": evaluate_on_rank_0(),
    }
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)  # rank 0 collects every rank's results
    if dist.get_rank() == 0:
        torch.save(everyone, out)
    dist.destroy_process_group()
