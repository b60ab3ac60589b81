"""Running a learner's function on two ranks, as torchrun would (lesson 13's checks).

``run_on_two_ranks`` writes the functions into a script whose head counts what the checks
need (each rank's ``torch.save`` calls, its ``DDP`` gradient all-reduces, the rows its
``nn.Linear`` layers saw), launches two gloo processes and gives back each rank's result.
"""

from __future__ import annotations

import torch

# The top of every script ``run_on_two_ranks`` writes: what the learner's functions may use.
_SCRIPT_HEAD = """\
import os
import sys
import traceback
from datetime import timedelta

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

torch.set_num_threads(1)
_real_save = torch.save
_saves = []


def _counted_save(obj, f, *args, **kwargs):
    _saves.append(str(f))
    return _real_save(obj, f, *args, **kwargs)


torch.save = _counted_save
_allreduces = []


class DDP(DDP):  # counts its gradient all-reduces: one communication-hook call per bucket

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_comm_hook(None, _counted_allreduce)


def _counted_allreduce(state, bucket):
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    _allreduces.append(bucket.index())
    return allreduce_hook(state, bucket)


_rows = []
_linear_forward = nn.Linear.forward


def _counted_forward(self, input):  # the rows (samples) this rank's Linear layers see
    _rows.append(int(input.shape[0]) if input.dim() > 1 else 1)
    return _linear_forward(self, input)


nn.Linear.forward = _counted_forward
"""

_SCRIPT_TAIL = """

def _main(workdir):
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    rank, world_size = dist.get_rank(), dist.get_world_size()
    try:
        value = {main}(rank, world_size, workdir)
    except BaseException:
        with open(os.path.join(workdir, f"error_rank{{rank}}.txt"), "w") as f:
            f.write(traceback.format_exc())
        raise
    results = [None] * world_size
    mine = {{
        "value": value, "saves": len(_saves), "allreduces": len(_allreduces), "rows": sum(_rows)
    }}
    dist.all_gather_object(results, mine)
    if rank == 0:
        _real_save(results, os.path.join(workdir, "results.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    _main(sys.argv[1])
"""


def _does_nothing(function) -> bool:
    """True for a function whose body is still only ``...`` (the exercise stub)."""
    import dis

    code = getattr(function, "__code__", None)
    if code is None:
        return False
    steps = [
        (i.opname, i.argval)
        for i in dis.get_instructions(code)
        if i.opname not in ("RESUME", "NOP", "CACHE")
    ]
    return steps in ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


class RunFailed(RuntimeError):
    """What ``run_on_two_ranks`` gives back when the run failed: its message says on which
    rank and with which error (or that the ranks hung). ``check`` shows that message, or,
    when the same cell printed it already (``printed_in``), points to it."""

    printed_in: int | None = None  # the IPython cell that printed the message


def _run_failed(message: str) -> RunFailed:
    """Print why the run failed (a cell that only runs it shows it) and give it back."""
    print(message)
    failed = RunFailed(message)
    failed.printed_in = execution_count()
    return failed


def _failure(run, workdir, timeout: float) -> str | None:
    """Why a launch failed, naming the rank and its error; None when it succeeded."""
    from pathlib import Path

    if run.timed_out:
        hung = [rank for rank, code in enumerate(run.codes) if code in (-9, None)]
        which = f"rank {hung[0]}" if len(hung) == 1 else "the ranks"
        return (
            f"The run failed: {which} did not finish within {timeout:.0f} s, most likely a "
            "hang, e.g. a collective (all_reduce, barrier) that only one rank calls."
        )
    # the rank that failed first is the cause; the others' collectives then fail with it
    # (a gloo "connection closed by peer" on the rank that was waiting)
    errors = sorted(
        Path(workdir).glob("error_rank*.txt"),
        key=lambda path: (_peer_failure(path.read_text()), path.stat().st_mtime_ns, path.name),
    )
    if run.ok and not errors:
        return None
    if errors:
        lines = [line for line in errors[0].read_text().strip().splitlines() if line.strip()]
        rank = errors[0].stem.replace("error_rank", "")
        text = f"The run failed on rank {rank} with {lines[-1]}"
        # the last line of the learner's own code that ran (job.py is the script written here)
        mine = [i for i, line in enumerate(lines) if 'job.py", line' in line]
        if mine and mine[-1] + 1 < len(lines):
            where = lines[mine[-1]].strip().rsplit(", ", 1)[-1]  # "in save_then_load"
            text += f"\nIn your code ({where}): {lines[mine[-1] + 1].strip()}"
        if "timed out" in lines[-1].lower():
            text += (
                "\nA collective that times out waited for a rank that never called it (e.g. "
                "a barrier or all_reduce inside `if rank == 0:`)."
            )
        return text
    failed = [(r, c) for r, c in enumerate(run.codes) if c != 0]
    # a rank the launcher stopped because the other failed shows -9: report the other
    rank, code = next(((r, c) for r, c in failed if c != -9), failed[0])
    log = run.logs[rank].read_text() if run.logs[rank].exists() else ""
    lines = [line for line in log.strip().splitlines() if line.strip()]
    last = "\n".join(lines[-8:]) or "(none)"
    return (
        f"The run failed on rank {rank}: it ended with exit code {code} and no Python error; "
        f"its last output:\n{last}"
    )


def _peer_failure(traceback_text: str) -> bool:
    """A collective that failed because another rank went away (not this rank's own bug)."""
    text = traceback_text.lower()
    return any(
        mark in text
        for mark in ("gloo/transport", "connection closed by peer", "remote worker", "nccl error")
    )


def run_on_two_ranks(main, *helpers, timeout: float = 120):
    """Run ``main(rank, world_size, workdir)`` in two CPU processes (gloo), as torchrun would.

    The processes get the environment ``torchrun --standalone --nproc_per_node=2`` gives its
    workers; ``environment.rank_launcher`` starts them (forked from a process that has
    already imported torch, on Linux; with torchrun itself elsewhere).

    ``helpers`` are further functions ``main`` calls; every function must be self-contained
    (it may use torch, dist, nn, F, DDP, DataLoader, TensorDataset, DistributedSampler).
    ``workdir`` is a temporary folder the ranks share, removed when the run ends.
    Returns the ranks' results in rank order, each ``{"value": ..., "saves": n,
    "allreduces": m, "rows": r}`` where ``n`` counts that rank's ``torch.save`` calls, ``m``
    the gradient all-reduces of the rank's ``DDP`` models (counted by a communication hook)
    and ``r`` the rows its ``nn.Linear`` layers were given (also kept in ``LAST_RUN``);
    ``...`` while a function is still the exercise stub; a :class:`RunFailed` (after
    printing it) when the run fails, which ``check`` reports with the rank and its error.
    """
    import inspect
    import tempfile
    import textwrap
    from pathlib import Path

    from course_helpers.environment import rank_launcher

    LAST_RUN.clear()
    functions = (main, *helpers)
    if not all(callable(f) and hasattr(f, "__code__") for f in functions):
        message = "run_on_two_ranks takes functions defined with def (pass them, do not call them)."
        return _run_failed(message)
    if any(_does_nothing(f) for f in functions):
        return ...
    try:
        sources = [textwrap.dedent(inspect.getsource(f)) for f in functions]
    except (OSError, TypeError):
        message = "The source of your function could not be read: define it with def in a cell."
        return _run_failed(message)
    # the folder goes away with the run, whatever happens (a test run used to leave one each)
    with tempfile.TemporaryDirectory(prefix="lesson13_", ignore_cleanup_errors=True) as workdir:
        script = Path(workdir) / "job.py"
        script.write_text(
            _SCRIPT_HEAD + "\n\n" + "\n\n".join(sources) + _SCRIPT_TAIL.format(main=main.__name__)
        )
        try:
            run = rank_launcher.launch(script, [workdir], nproc=2, timeout=timeout)
        except RuntimeError as error:  # the launcher's own failure, not a rank's
            return _run_failed(str(error))
        failure = _failure(run, workdir, timeout)
        if failure is not None:
            return _run_failed(failure)
        results = torch.load(Path(workdir) / "results.pt", weights_only=True)
    LAST_RUN.clear()
    LAST_RUN.update(
        main=main.__name__,
        rows=[r.get("rows", 0) for r in results],
        values=[_value_kind(r.get("value")) for r in results],
        cell=execution_count(),
    )
    return results


def _value_kind(value) -> str:
    """What a rank's function returned, in a word: "number", "tensor", or its type's name."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    return "tensor" if isinstance(value, torch.Tensor) else type(value).__name__


# what the last successful run counted, for the method checks in this kernel:
# {"main": the function's name, "rows": [rows each rank's nn.Linear layers saw],
#  "values": [what each rank's function returned: "number", "tensor", ...],
#  "cell": the IPython execution count of the cell that ran it (None outside IPython)}
LAST_RUN: dict = {}


def execution_count() -> int | None:
    """The number of the cell being run (None outside IPython)."""
    import sys

    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    shell = get_ipython()
    return getattr(shell, "execution_count", None) if shell is not None else None
