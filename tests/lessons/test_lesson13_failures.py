"""Issue 24 (4): in lesson 13, when a rank crashes or the ranks hang, ``check`` says that the
run failed, on which rank, and the rank's error: never "Not attempted"."""

from __future__ import annotations

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
