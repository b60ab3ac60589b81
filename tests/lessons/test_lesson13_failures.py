"""Issue 24 (4): in lesson 13, when a rank crashes or the ranks hang, ``check`` says that the
run failed, on which rank, and the rank's error: never "Not attempted"."""

from __future__ import annotations

import pytest
import torch

from course_helpers import check
from course_helpers.lessons.lesson13.exercises import RunFailed, run_on_two_ranks


def stacked(results):  # as in the exercise notebook
    if not isinstance(results, list):
        return results
    return torch.stack([torch.as_tensor(r["value"]) for r in results])


def test_a_crashing_rank_is_named_with_its_error(capsys):
    def accumulate(rank, world_size, workdir):
        if rank == 1:
            raise ValueError("micro-batch of the wrong size")
        dist.barrier()  # noqa: F821 (the rank script imports dist)
        return torch.zeros(4)

    result = check("13.accumulate_no_sync", stacked(run_on_two_ranks(accumulate)))
    assert result.status == "error", result.message
    assert "The run failed on rank 1 with ValueError: micro-batch of the wrong size" in (
        result.message
    )
    assert "Not attempted" not in str(result) and result.hint_count > 0
    assert "rank 1" in capsys.readouterr().out


def test_a_hang_says_the_run_did_not_finish():
    def accumulate(rank, world_size, workdir):
        import time

        time.sleep(30 if rank == 0 else 0)
        return torch.zeros(4)

    failure = run_on_two_ranks(accumulate, timeout=3)
    assert isinstance(failure, RunFailed)
    result = check("13.accumulate_no_sync", stacked(failure))
    assert result.status == "error"
    assert result.message.startswith("The run failed:") and "did not finish within 3 s" in (
        result.message
    )


def test_a_stub_is_still_not_attempted():
    def accumulate(rank, world_size, workdir): ...

    assert check("13.accumulate_no_sync", stacked(run_on_two_ranks(accumulate))).status == (
        "not_attempted"
    )


ACCUMULATE = """
def accumulate(rank, world_size, workdir):
    g = torch.Generator().manual_seed(13)
    x = torch.randn(8, 3, generator=g)
    y = torch.randn(8, 1, generator=g)
    torch.manual_seed(0)
    ddp = DDP(nn.Linear(3, 1))
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    xs, ys = x[rank * 4 : rank * 4 + 4], y[rank * 4 : rank * 4 + 4]
    optimizer.zero_grad()
    {first}
    (F.mse_loss(ddp(xs[2:]), ys[2:]) / 2).backward()
    optimizer.step()
    return torch.cat([p.detach().flatten() for p in ddp.parameters()])
"""

FIRST = {
    "no_sync": "with ddp.no_sync():\n        (F.mse_loss(ddp(xs[:2]), ys[:2]) / 2).backward()",
    "none": "(F.mse_loss(ddp(xs[:2]), ys[:2]) / 2).backward()",
    "forward outside": (
        "loss = F.mse_loss(ddp(xs[:2]), ys[:2]) / 2\n"
        "    with ddp.no_sync():\n        loss.backward()"
    ),
}


@pytest.mark.parametrize("variant", list(FIRST))
def test_13_accumulate_no_sync_counts_the_all_reduces(variant, tmp_path, monkeypatch):
    """Issue 24 (1): right weights without no_sync (or with the forward outside the block,
    where DDP reads the flag) take two all-reduces, and no longer pass."""
    import importlib.util

    source = tmp_path / "answer.py"
    source.write_text(
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        + ACCUMULATE.format(first=FIRST[variant])
    )
    spec = importlib.util.spec_from_file_location("answer_13", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = run_on_two_ranks(module.accumulate)
    answer = {
        "weights": stacked(results),
        "all-reduces per rank": [r["allreduces"] for r in results],
    }
    result = check("13.accumulate_no_sync", answer)
    if variant == "no_sync":
        assert result.passed, result.message
    else:
        assert answer["all-reduces per rank"] == [2, 2]
        assert result.status == "failed" and "all-reduced its gradients twice" in result.message


def test_a_deadlocked_barrier_names_the_rank_its_line_and_the_cause(tmp_path):
    """The gloo timeout of a barrier only rank 0 calls (30 s in the rank script): rebuilt
    here from the files a real run leaves, without waiting 30 s."""
    from course_helpers.environment.rank_launcher import Launch
    from course_helpers.lessons.lesson13.exercises import _failure

    (tmp_path / "error_rank0.txt").write_text(
        "Traceback (most recent call last):\n"
        f'  File "{tmp_path}/job.py", line 46, in save_then_load\n'
        "    dist.barrier()\n"
        '  File "/torch/distributed/distributed_c10d.py", line 5356, in barrier\n'
        "    work.wait()\n"
        "RuntimeError: [gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 30000ms "
        "for recv operation to complete\n"
    )
    run = Launch(
        codes=[1, -9], logs=[tmp_path / "rank0.log", tmp_path / "rank1.log"], timed_out=False
    )
    text = _failure(run, tmp_path, 120)
    assert text.startswith("The run failed on rank 0 with RuntimeError: [gloo")
    assert "In your code (in save_then_load): dist.barrier()" in text
    assert "waited for a rank that never called it" in text
    result = check("13.rank0_checkpoint", RunFailed(text))
    assert result.status == "error" and result.message == text
