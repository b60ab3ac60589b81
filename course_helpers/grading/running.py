"""Run one submission's worker (``grading.worker``), sandboxed and within its budget, and read
back what it reports: its run status and the answer frames its kernels sent.

The notebook's bytes reach the worker on stdin (sandboxed, it runs in a tmpfs work folder of
its own; without the sandbox, in a fresh unlistable folder); its report comes back on a pipe
of its own, never through a folder. The worker's own output (its last 64 KiB) is kept only to
say why a worker failed before its first kernel started: a failure of the grader's setup,
not of the notebook (``WorkerRun.started``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from course_helpers.checking.submissions import GRADING_ENV
from course_helpers.grading import budget, sandbox
from course_helpers.grading.worker import MAX_ANSWERS_MB, MAX_RESTARTS

OUTPUT_KEPT = 64 * 1024  # bytes of a worker's output the grader keeps (the end of it)
REPORT_LIMIT = MAX_ANSWERS_MB * 2**20 + 2**20  # a worker's report, answers included
REPORT_GRACE_S = 5  # how long the readers may go on once the worker has ended

NOBODY = 65534  # the owner of the folders around work folders when the grader is root


@dataclass
class WorkerRun:
    run: str  # "completed", "timed out", "kernel died (...)", ...
    answers: bytes = b""  # the answer frames its kernels sent, in order
    started: bool = False  # it reached its first kernel (else: the grader's own failure)
    problems: tuple[str, ...] = ()  # answers lost or dropped on the way


def notebook_limit(timeout: int, cells: int) -> int:
    """Seconds a whole notebook may take: each cell its timeout, a re-run for each allowed
    kernel restart, plus start-up, but never more than 10 cell timeouts or 10 minutes
    (whichever is longer): a cell that holds its worker cannot hold it for long."""
    return min(timeout * cells * (1 + MAX_RESTARTS) + 120, max(10 * timeout, 600))


def run_worker(
    data: bytes,
    name: str,
    *,
    cells: int,
    timeout: int,
    kernel: str,
    limits: sandbox.Limits,
    use_sandbox: bool,
    hide: list[Path],
) -> WorkerRun:
    """Run the worker on a notebook (``data``, file name ``name``, ``cells`` code cells)."""
    sandboxed = use_sandbox and sandbox.bwrap_works()
    group = budget.notebook_group(limits.memory_mb, limits.processes)
    base = None
    try:
        if sandboxed:
            work, cwd = Path(sandbox.SANDBOX_WORK), "/"
        else:
            base = Path(tempfile.mkdtemp(prefix="course-grading-"))
            work = base / secrets.token_hex(16)  # unguessable, in a folder nobody can list
            work.mkdir(mode=0o700)
            _unlistable(base)
            cwd = str(work)
        readable, writable = os.pipe()
        argv = [sys.executable, "-m", "course_helpers.grading.worker", "--worker"]
        argv += ["--timeout", str(timeout), "--kernel", kernel, "--report-fd", str(writable)]
        root_unsandboxed = os.geteuid() == 0 and not sandboxed
        try:  # (a worker that cannot even start is the grader's failure, not the notebook's)
            process = subprocess.Popen(
                sandbox.command(argv, hide, use_sandbox, limits),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=kernel_environment(work),
                cwd=cwd,
                start_new_session=True,
                pass_fds=(writable,),
                preexec_fn=sandbox.preexec(limits, root_unsandboxed, sandboxed, group),
            )
        except (OSError, subprocess.SubprocessError) as err:
            os.close(readable)
            return WorkerRun(f"its worker could not start ({type(err).__name__}: {err})")
        finally:
            os.close(writable)
        header = {"name": name, "size": len(data), "processes": limits.processes * sandboxed}
        message = json.dumps(header).encode() + b"\n" + data
        return _wait(process, readable, message, group, cells, timeout)
    finally:
        if group is not None:
            group.close()
        if base is not None:
            with contextlib.suppress(OSError):  # listable again, for its owner to remove it
                os.chmod(base, 0o700)
            shutil.rmtree(base, ignore_errors=True)


def _wait(process, readable: int, message: bytes, group, cells: int, timeout: int) -> WorkerRun:
    tail, report = bytearray(), bytearray()
    finished = threading.Event()
    report_reader = threading.Thread(
        target=_read_report, args=(readable, report, finished), daemon=True
    )
    readers = [
        threading.Thread(target=_send, args=(process.stdin, message), daemon=True),
        threading.Thread(target=_keep_tail, args=(process.stdout, tail), daemon=True),
        report_reader,
    ]
    for thread in readers:
        thread.start()
    timed_out, out_of_memory = False, 0
    try:
        process.wait(timeout=notebook_limit(timeout, cells))
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # whatever it left behind in its session
        if group is not None:
            out_of_memory = group.oom_kills()
            group.close()  # and everything else it started, detached or not
        process.wait()
        deadline = time.monotonic() + REPORT_GRACE_S
        for thread in readers:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        # a process left behind may still hold the report pipe open: the reader takes what is
        # waiting in it, stops, and closes it itself (never under its feet: the next
        # notebook's pipe may be given the same descriptor number)
        finished.set()
        report_reader.join()
    result = _parse_report(bytes(report))
    if timed_out:
        return WorkerRun("timed out (the notebook's time limit; no answers)", started=True)
    if result is None:
        return WorkerRun(_failure(process.returncode, bytes(tail)), started=b"started" in report)
    run = str(result.get("run", ""))
    if out_of_memory:
        run += f" (it ran out of its {group.memory_mb} MiB of memory)"
    problems = []
    if result.get("lost"):
        problems.append("an answer being sent when its kernel died, or malformed, was lost")
    if result.get("overflow"):
        problems.append(f"answers beyond the first {MAX_ANSWERS_MB} MiB were dropped")
    return WorkerRun(run, result["frames"], True, tuple(problems))


def _failure(status, output: bytes) -> str:
    """Why a worker ended without a report: its status and the last line it printed."""
    lines = [line for line in output.decode(errors="replace").splitlines() if line.strip()]
    reason = f": {lines[-1].strip()[:300]}" if lines else ""
    return f"kernel died (its worker ended with status {status}{reason})"


def _parse_report(report: bytes) -> dict | None:
    """The worker's ``result`` line and its answer frames, or None when it sent none."""
    at = report.find(b"result ")
    if at < 0 or (at and report[at - 1 : at] != b"\n"):
        return None
    end = report.find(b"\n", at)
    try:
        result = json.loads(report[at + 7 : end])
        size = int(result["answers"])
    except (ValueError, KeyError, TypeError):
        return None
    frames = report[end + 1 : end + 1 + size]
    if not isinstance(result, dict) or len(frames) != size:
        return None
    result["frames"] = frames
    return result


def _send(stream, message: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(message)
        stream.close()


def _keep_tail(stream, tail: bytearray) -> None:
    """Read ``stream`` to its end, keeping only its last :data:`OUTPUT_KEPT` bytes."""
    while True:
        try:
            chunk = stream.read1(65536)
        except (OSError, ValueError):
            return
        if not chunk:
            return
        tail += chunk
        if len(tail) > OUTPUT_KEPT:
            del tail[: len(tail) - OUTPUT_KEPT]


def _read_report(handle: int, report: bytearray, finished: threading.Event) -> None:
    """Read the worker's report to its end, keeping at most :data:`REPORT_LIMIT` bytes; once
    ``finished`` is set, only what is already waiting (for at most a second). Closes
    ``handle`` when it stops."""
    stop_at = None
    try:
        while True:
            if stop_at is None and finished.is_set():
                stop_at = time.monotonic() + 1
            last = stop_at is not None
            if not select.select([handle], [], [], 0 if last else 0.2)[0]:
                if last:
                    return
                continue
            chunk = os.read(handle, 1 << 16)
            if not chunk:
                return
            if len(report) < REPORT_LIMIT:
                report += chunk
            if last and time.monotonic() > stop_at:
                return
    except (OSError, ValueError):
        return
    finally:
        os.close(handle)


def _unlistable(folder: Path) -> None:
    """Make ``folder`` (around one work folder) impossible to list for a submission: mode
    0311 (its owner may create and enter, nobody may read it); when the grader is root it is
    also given to ``nobody``, since a kernel without the sandbox is a root process whose
    capabilities are dropped (:func:`course_helpers.grading.sandbox.preexec`), and an
    owner could list it again with ``chmod``."""
    os.chmod(folder, 0o311)
    if os.geteuid() == 0:
        os.chown(folder, NOBODY, NOBODY)


# what a kernel may inherit from the grader: never the rest (tokens, passwords, keys)
ENV_ALLOWED = (
    "PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "LD_LIBRARY_PATH",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
    "COURSE_DEVICE",
)  # fmt: skip


def kernel_environment(work: Path) -> dict[str, str]:
    """The environment of a worker and its kernel: the names of :data:`ENV_ALLOWED` (and
    ``LC_*``) taken from the grader's, the rest set here; nothing else of the grader's."""
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOWED or k.startswith("LC_")}
    env.update(
        {
            "JUPYTER_RUNTIME_DIR": str(work / ".jupyter"),
            "IPYTHONDIR": str(work / ".ipython"),
            "MPLCONFIGDIR": str(work / ".matplotlib"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(work),
            "COURSE_PROGRESS": "off",
        }
    )
    env.pop(GRADING_ENV, None)
    return env
