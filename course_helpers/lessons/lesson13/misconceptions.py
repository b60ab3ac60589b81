"""Typical wrong answers to lesson 13's exercises (data-parallel training with torchrun)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _shard_gradients():
    from course_helpers.lessons.lesson13.exercises import _small_problem

    x, y, w = _small_problem()
    grads = []
    for shard in (slice(0, 2), slice(2, 4)):
        w_rank = w.clone().requires_grad_(True)
        ((x[shard] @ w_rank - y[shard]) ** 2).mean().backward()
        grads.append(w_rank.grad)
    return grads


def _trained(rows: slice, lr: float, steps: int):
    """One process training nn.Linear(3, 1) on some rows of the lesson's 8-row data."""
    from course_helpers.lessons.lesson13.exercises import _flat, _regression_data

    x, y = _regression_data()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x[rows]), y[rows]).backward()
        optimizer.step()
    return _flat(model)


def _summed_not_averaged():
    # the sum of the two shard gradients is twice the mean: like the full batch with lr 0.2
    w = _trained(slice(0, 8), 0.2, 5)
    return torch.stack([w, w])


def _never_synchronised():
    return torch.stack([_trained(slice(0, 4), 0.1, 5), _trained(slice(4, 8), 0.1, 5)])


def _repeated_orders():
    from torch.utils.data.distributed import DistributedSampler

    orders = []
    for rank in range(2):
        sampler = DistributedSampler(list(range(12)), num_replicas=2, rank=rank, seed=0)
        orders.append([list(sampler)] * 3)
    return torch.tensor(orders)


def _every_rank_saves():
    from course_helpers.lessons.lesson13.exercises import _checkpoint_reference

    return dict(_checkpoint_reference(), **{"saves per rank": [1, 1]})


def _accumulated(weights, allreduces=(1, 1)):
    """An answer to 13.accumulate_no_sync: the ranks' weights and their all-reduce counts."""
    return {"weights": weights, "all-reduces per rank": list(allreduces)}


def _micro_losses_not_divided():
    w = _trained(slice(0, 8), 0.2, 1)
    return _accumulated(torch.stack([w, w]))


def _synced_twice():
    from course_helpers.lessons.lesson13.exercises import _accumulation_reference

    return _accumulated(_accumulation_reference()["weights"], (2, 2))


def _nccl_with_any_gpu(cuda_count, local_rank, local_world_size):
    if cuda_count > 0:
        return ("nccl", f"cuda:{local_rank}")
    return ("gloo", "cpu")


MISCONCEPTIONS = [
    # --- 13.averaged_gradient ---
    Misconception(
        exercise_id="13.averaged_gradient",
        label="summed, not averaged",
        build_answer=lambda: _shard_gradients()[0] + _shard_gradients()[1],
        message=(
            "This is twice the expected gradient: the sum of the two ranks' gradients, what an "
            "all-reduce alone leaves behind. DDP also divides by the number of ranks, so that the "
            "result is the whole batch's gradient."
        ),
        hint="After adding up the ranks' gradients, what does DDP divide by?",
    ),
    Misconception(
        exercise_id="13.averaged_gradient",
        label="one rank's own gradient",
        build_answer=lambda: _shard_gradients()[0],
        message=(
            "This is the gradient of rank 0's rows only, what a rank holds before the gradients "
            "are combined. After DDP's backward pass every rank holds the same combined gradient."
        ),
        hint="After DDP's backward pass, whose rows does each rank's gradient cover?",
    ),
    # --- 13.average_by_hand ---
    Misconception(
        exercise_id="13.average_by_hand",
        label="summed, not averaged",
        build_answer=_summed_not_averaged,
        message=(
            "The two ranks agree, but their steps are twice too large: the ranks' gradients were "
            "added up and not divided by the number of ranks, and a sum of two means is not a "
            "mean."
        ),
        hint="After adding up the two ranks' gradients, what must you divide by?",
    ),
    Misconception(
        exercise_id="13.average_by_hand",
        label="gradients never exchanged",
        build_answer=_never_synchronised,
        message=(
            "The two ranks ended with different weights: each stepped with the gradient of its own "
            "rows only. The gradients must be combined across the ranks before every step."
        ),
        hint="Before each step, does each rank know the other rank's gradient?",
    ),
    # --- 13.fix_set_epoch ---
    Misconception(
        exercise_id="13.fix_set_epoch",
        label="the same order every epoch",
        build_answer=_repeated_orders,
        message=(
            "Every epoch still repeats epoch 0's order: the sampler shuffles with its seed plus an "
            "epoch number that nothing changes. Tell the sampler which epoch it is."
        ),
        hint="Which number, besides the seed, decides the sampler's shuffle?",
    ),
    # --- 13.rank0_checkpoint ---
    Misconception(
        exercise_id="13.rank0_checkpoint",
        label="every rank saves",
        build_answer=_every_rank_saves,
        message=(
            "Both ranks still save the checkpoint: two processes write one file at the same time. "
            "Only one rank should write, and the others must wait until it has finished before "
            "they read."
        ),
        hint="How many ranks should write the file, and what must the others do meanwhile?",
    ),
    # --- 13.accumulate_no_sync ---
    Misconception(
        exercise_id="13.accumulate_no_sync",
        label="micro-batch losses not divided",
        build_answer=_micro_losses_not_divided,
        message=(
            "The step is twice too large: the gradients of two micro-batch means add up, as in "
            "lesson 06. Scale each micro-batch's loss by the number of micro-batches."
        ),
        hint="Two micro-batch means add up to how many times the batch's mean?",
    ),
    Misconception(
        exercise_id="13.accumulate_no_sync",
        label="an all-reduce per micro-batch",
        build_answer=_synced_twice,
        message=(
            "The weights are right, but each rank all-reduced its gradients twice: the first "
            "micro-batch was synchronised too. DDP decides in the forward pass whether the coming "
            "backward pass synchronises, so both the forward and the backward pass of that "
            "micro-batch belong inside the block that switches synchronisation off."
        ),
        hint=(
            "Where does DDP decide whether a backward pass synchronises: in the forward pass or "
            "the backward?"
        ),
    ),
    # --- 13.pick_backend ---
    Misconception(
        exercise_id="13.pick_backend",
        label="NCCL whenever any GPU exists",
        build_answer=lambda: _nccl_with_any_gpu,
        message=(
            "With fewer GPUs than processes on the machine, some processes would have no GPU of "
            "their own (NCCL wants one per process). Compare the number of GPUs with the number of "
            "local processes."
        ),
        hint="With 1 GPU and 2 local processes, does every process have a GPU of its own?",
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="13.uninitialized_error",
        label="no error: one process needs no group",
        build_answer=lambda: None,
        message=(
            "A collective never falls back to doing nothing: even a single process must call "
            "init_process_group first, because all_reduce asks the default process group who takes "
            "part. dist.is_initialized() tells you whether one exists."
        ),
        hint="Whom does a collective ask which processes take part?",
    ),
]


def _orders(mistake: str):
    from torch.utils.data.distributed import DistributedSampler

    orders = []
    for rank in range(2):
        sampler = DistributedSampler(
            list(range(12)), num_replicas=2, rank=rank, shuffle=mistake != "no shuffle", seed=0
        )
        per_epoch = []
        for epoch in range(3):
            per_epoch.append(list(sampler))
            sampler.set_epoch(epoch)  # after the epoch: one epoch late
        orders.append(per_epoch)
    return torch.tensor(orders)


def _every_rank_on_gpu_0(cuda_count, local_rank, local_world_size):
    if cuda_count >= local_world_size:
        return ("nccl", "cuda:0")
    return ("gloo", "cpu")


def _enough_for_this_rank(cuda_count, local_rank, local_world_size):
    if cuda_count > local_rank:
        return ("nccl", f"cuda:{local_rank}")
    return ("gloo", "cpu")


# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="13.averaged_gradient",
        label="divided by the ranks once more",
        build_answer=lambda: (_shard_gradients()[0] + _shard_gradients()[1]) / 4,
        message=(
            "This is half the combined gradient: DDP already divides the all-reduced sum by the "
            "number of ranks, so dividing the gradient by the world size again shrinks it twice."
        ),
        hint="Has DDP already divided the combined gradient by the number of ranks?",
    ),
    Misconception(
        exercise_id="13.average_by_hand",
        label="divided by the world size twice",
        build_answer=lambda: torch.stack([_trained(slice(0, 8), 0.05, 5)] * 2),
        message=(
            "The ranks agree, but their steps are half as large as they should be: the summed "
            "gradient needs one division by the world size, not two (for example once before the "
            "all-reduce and once after)."
        ),
        hint="How many times must the summed gradient be divided by the world size?",
    ),
    Misconception(
        exercise_id="13.fix_set_epoch",
        label="set_epoch after the epoch",
        build_answer=lambda: _orders("late"),
        message=(
            "Your orders are those of a run in which the sampler learns each epoch's number only "
            "after the epoch, so every epoch uses the previous epoch's number and the first two "
            "epochs share one order. The sampler must know the epoch before the loader is "
            "iterated."
        ),
        hint="When must the sampler learn the epoch's number: before or after the epoch's loop?",
    ),
    Misconception(
        exercise_id="13.fix_set_epoch",
        label="shuffle switched off",
        build_answer=lambda: _orders("no shuffle"),
        message=(
            "The order is the same in every epoch, the samples dealt out in their stored order: "
            "the sampler does not shuffle. Keep shuffling and tell the sampler which epoch it is, "
            "so the shuffle changes."
        ),
        hint="Does the sampler shuffle at all in your version?",
    ),
    Misconception(
        exercise_id="13.pick_backend",
        label="every process on cuda:0",
        build_answer=lambda: _every_rank_on_gpu_0,
        message=(
            "With one device name for everyone, all the processes of a machine share its first GPU "
            "and the others stay idle (NCCL refuses two ranks on one GPU). Each process takes the "
            "GPU numbered by its local rank."
        ),
        hint="Which GPU should the process with local rank 1 take?",
    ),
    Misconception(
        exercise_id="13.pick_backend",
        label="decided per rank",
        build_answer=lambda: _enough_for_this_rank,
        message=(
            "Each process decides only for itself here, so with too few GPUs some ranks pick NCCL "
            "and others Gloo, and a process group needs one backend for all of them. Decide from "
            "whether the machine has a GPU for every local process."
        ),
        hint="Must every process of the group pick the same backend?",
    ),
]

MISCONCEPTIONS += [
    Misconception(
        exercise_id="13.accumulate_no_sync",
        label="only the last micro-batch",
        build_answer=lambda: _accumulated(
            torch.stack([_trained(torch.tensor([2, 3, 6, 7]), 0.05, 1)] * 2)
        ),
        message=(
            "The step used only the second micro-batch's gradient: the first one was cleared "
            "before the second was added. Clear once before the first micro-batch, and let the "
            "second backward pass add onto the first."
        ),
        hint="What must the gradients still hold when the second micro-batch's backward pass runs?",
    ),
    Misconception(
        exercise_id="13.accumulate_no_sync",
        label="divided by the world size too",
        build_answer=lambda: _accumulated(torch.stack([_trained(slice(0, 8), 0.05, 1)] * 2)),
        message=(
            "The step is half as large as it should be: DDP already averages the gradients over "
            "the ranks, so each micro-batch's loss is divided only by the number of micro-batches, "
            "not by the world size as well."
        ),
        hint="Does DDP already average over the ranks?",
    ),
    Misconception(
        exercise_id="13.rank0_checkpoint",
        label="the other rank saves",
        build_answer=lambda: dict(_every_rank_saves(), **{"saves per rank": [0, 1]}),
        message=(
            "One writer is right, but the writer is rank 0 by convention: rank 0 exists in every "
            "run, even with a single process, while rank 1 does not."
        ),
        hint="Which rank exists in every run, even with one process?",
    ),
]


def _both(value: float):
    return torch.tensor([value, value])


def _padded_mean():
    from torch.utils.data.distributed import DistributedSampler

    rows = [i for rank in range(2) for i in DistributedSampler(range(5), 2, rank, False)]
    return _both(_mean_loss(rows))  # sample 0 twice


def _mean_loss(rows):
    from course_helpers.lessons.lesson13.exercises import _mean_loss

    return _mean_loss(rows)


MISCONCEPTIONS += [
    Misconception(
        exercise_id="13.exact_evaluation",
        label="DistributedSampler's padded shards",
        build_answer=_padded_mean,
        message=(
            "Both ranks agree, but one sample was counted twice: your mean is that of shards "
            "padded by repeating a sample so that every rank gets the same number. Split the 5 "
            "samples so that each is evaluated by exactly one rank."
        ),
        hint=(
            "With 5 samples and 2 ranks, how many does each rank evaluate, and is any counted "
            "twice?"
        ),
        cause=(
            "DistributedSampler pads the shorter shard with the first samples of its order, so "
            "that every rank gets as many as the others: with 5 samples and 2 ranks both get 3, "
            "and sample 0 is evaluated twice (lesson 13 printed rank 1's [1, 3, 0])."
        ),
        evidence=("call:DistributedSampler",),
    ),
    Misconception(
        exercise_id="13.exact_evaluation",
        label="drop_last=True",
        build_answer=lambda: _both(_mean_loss([0, 1, 2, 3])),
        message=(
            "Both ranks agree, but one sample was never evaluated: equal shards without the tail "
            "leave the last sample out. Every sample must be evaluated once, even if one rank gets "
            "more samples than the other."
        ),
        hint="With 5 samples and 2 ranks, is every sample evaluated?",
    ),
    Misconception(
        exercise_id="13.exact_evaluation",
        label="the mean of the ranks' means",
        build_answer=lambda: _both((_mean_loss([0, 2, 4]) + _mean_loss([1, 3])) / 2),
        message=(
            "Every sample was evaluated once, but the ranks' means were averaged: with shards of 3 "
            "and 2 samples that weights the smaller shard's samples more. Combine the sum of the "
            "losses and the number of samples over the ranks, then divide."
        ),
        hint="With shards of 3 and 2 samples, is the mean of the two means the mean of all 5?",
    ),
    Misconception(
        exercise_id="13.exact_evaluation",
        label="each rank's own mean",
        build_answer=lambda: torch.tensor([_mean_loss([0, 2, 4]), _mean_loss([1, 3])]),
        message=(
            "The two ranks report different numbers: each one's is the mean over its own samples "
            "only. Combine the ranks' parts, so that every rank holds the mean over all 5 samples."
        ),
        hint="Does each rank know the other rank's losses before it divides?",
    ),
]
