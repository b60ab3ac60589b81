import os
import sys
from datetime import timedelta

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one compute thread per process

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def setup():
    """Backend and device for this process: NCCL with a GPU per process, else gloo on CPU."""
    local_rank = int(os.environ["LOCAL_RANK"])
    local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if gpus >= local_world_size:
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
        if gpus and local_rank == 0:
            print(f"{gpus} GPU(s) for {local_world_size} processes: using gloo on the CPU")
    dist.init_process_group(backend, timeout=timedelta(seconds=60))
    return device, backend


def shard(device):
    g = torch.Generator().manual_seed(13)  # the same data on every rank
    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    per = len(x) // world_size
    rows = slice(rank * per, (rank + 1) * per)  # each rank keeps its own rows
    return x[rows].to(device), y[rows].to(device)


def fresh_model(device):
    torch.manual_seed(0)  # the same starting weights on every rank
    return nn.Linear(3, 1).to(device)


def train_by_hand(device, steps=5):
    xs, ys = shard(device)
    model = fresh_model(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        F.mse_loss(model(xs), ys).backward()
        for p in model.parameters():  # sum over the ranks, then divide: the mean
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()]).cpu()


def train_ddp(device, steps=5):
    xs, ys = shard(device)
    ids = [device.index] if device.type == "cuda" else None
    model = DDP(fresh_model(device), device_ids=ids)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        F.mse_loss(model(xs), ys).backward()  # DDP averages the gradients in here
        optimizer.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()]).cpu()


if __name__ == "__main__":
    device, backend = setup()
    by_hand, ddp = train_by_hand(device), train_ddp(device)
    if dist.get_rank() == 0:  # one writer
        torch.save(
            {"by_hand": by_hand, "ddp": ddp, "backend": backend, "world": dist.get_world_size()},
            sys.argv[1],
        )
    dist.barrier()  # all ranks leave together: none tears down while another still works
    dist.destroy_process_group()
