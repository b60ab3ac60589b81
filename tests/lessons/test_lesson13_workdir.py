"""Lesson 13's ``run_on_two_ranks`` removes the folder it runs in, whether the run passed or
failed: each call used to leave a ``lesson13_*`` folder in the temporary directory."""

from __future__ import annotations

import tempfile

import pytest
import torch

from course_helpers.lessons.lesson13.exercises import RunFailed, run_on_two_ranks


def passes(rank, world_size, workdir):
    import os

    with open(os.path.join(workdir, f"note{rank}.txt"), "w") as f:  # a file of its own
        f.write("written by the rank")
    return torch.tensor([rank])


def fails(rank, world_size, workdir):
    raise ValueError("this rank fails")


@pytest.mark.parametrize("main", [passes, fails], ids=["run passed", "run failed"])
def test_the_run_leaves_no_folder_behind(main, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = run_on_two_ranks(main)
    if main is passes:
        assert [r["value"].item() for r in result] == [0, 1]
    else:
        assert isinstance(result, RunFailed) and "this rank fails" in str(result)
    assert list(tmp_path.iterdir()) == []
