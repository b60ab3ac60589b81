"""The grading worker: one notebook run in a fresh kernel, inside the sandbox.

``python -m course_helpers.grading.worker --worker --report-fd N`` reads, on stdin, one JSON
line (the notebook's file name, its size, the process limit) and the notebook's bytes, and
writes the notebook into its working folder. It runs the cells in a fresh kernel whose
``check`` sends every attempt, as it is made, down an answer channel (a FIFO per kernel,
:class:`AnswerChannel`) that this worker reads while the kernel runs. At the end it kills
every process the notebook left behind, then writes its report on file descriptor N:
``started`` once its first kernel is up, before the notebook's first cell (a worker that
fails earlier failed on its own: the grader's setup is broken, the notebook is not to
blame), then ``result {json}`` and the collected frames.

The worker makes itself non-dumpable: a kernel running as the same user cannot open its
file descriptors or memory through ``/proc``, so it cannot write into the report.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import threading
from pathlib import Path

from course_helpers.checking.checker import STRICT_ENV
from course_helpers.checking.submissions import GRADING_ENV, frame_length

DEFAULT_TIMEOUT = 60  # seconds a cell may run
MAX_RESTARTS = 2  # kernels a notebook may kill before the rest of it is given up
MAX_ANSWERS_MB = 64  # answer frames a notebook may send, in all; the rest is dropped


class AnswerChannel:
    """The FIFOs the kernels' ``check`` writes attempts to, read here while they run.

    Each kernel gets a FIFO of its own (a kernel that dies mid-write leaves a partial frame
    that is dropped, and never garbles the next kernel's). What arrives is kept in order:
    a later cell cannot take an attempt back. At most ``limit`` bytes are kept."""

    def __init__(self, folder: Path, limit: int = MAX_ANSWERS_MB * 2**20):
        self.folder, self.limit = folder, limit
        self.frames = bytearray()
        self.lost = 0  # frames cut short (a kernel died while writing one) or malformed
        self.overflow = False  # more than ``limit`` bytes were sent: the rest was dropped
        self._count = 0
        self._thread: threading.Thread | None = None

    def open(self) -> str:
        """A new FIFO for the next kernel; its path (the kernel's ``COURSE_GRADING_DIR``)."""
        self._count += 1
        path = self.folder / f".answers-{self._count}"
        os.mkfifo(path, 0o600)
        self._path = path
        self._read = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._keep = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # no EOF between writers
        self._pending = bytearray()
        self._broken = False  # this kernel sent something that is not a frame
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()
        return str(path)

    def _pump(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._read], [], [], 0.1)
            if ready:
                self._take()

    def _take(self) -> None:
        """Read what is there now (never blocks), keeping whole frames."""
        while True:
            try:
                chunk = os.read(self._read, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                return
            if self.overflow or self._broken:
                continue  # keep reading, so that no writer blocks
            self._pending += chunk
            self._split()

    def _split(self) -> None:
        while len(self._pending) >= 12:
            size = frame_length(bytes(self._pending[:12]))
            if size is None or size > self.limit:  # garbage: the rest of this kernel's too
                self.lost += 1
                self._pending.clear()
                self._broken = True
                return
            if len(self._pending) < 12 + size:
                return
            frame = self._pending[: 12 + size]
            del self._pending[: 12 + size]
            if len(self.frames) + len(frame) > self.limit:
                self.overflow = True
                self._pending.clear()
                return
            self.frames += frame

    def close(self) -> None:
        """After the kernel ended: take what is left, drop a frame cut short."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._take()
        if self._pending:
            self.lost += 1
        for handle in (self._read, self._keep):
            os.close(handle)
        self._path.unlink(missing_ok=True)
        self._thread = None


def run_notebook(
    notebook, folder: Path, answers: AnswerChannel, timeout: int, kernel: str, ready=None
) -> str:
    """Execute ``notebook`` in a fresh kernel, its attempts arriving on ``answers``;
    ``ready()`` is called once the first kernel is up, before the first cell.

    A cell that kills its kernel is skipped: a new kernel runs the notebook again without it
    (up to ``MAX_RESTARTS`` times), so the answers in the other cells still count.
    """
    import nbformat
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    _KillingClient = _killing_client_class()  # noqa: N806 - a class

    env = dict(os.environ)
    env.update({STRICT_ENV: "0", "COURSE_PROGRESS": "off"})
    source = nbformat.from_dict(notebook)
    crashed: list[int] = []  # numbers (from 1) of the code cells that killed a kernel
    ignored: list[int] = []  # ... of those that ignored the interrupt (the kernel was killed)
    while True:
        notebook = nbformat.from_dict(source)
        client = _KillingClient(
            notebook,
            config=_kernel_transport(folder),
            timeout=timeout,
            kernel_name=kernel,
            allow_errors=True,
            interrupt_on_timeout=True,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(folder)}},
        )
        running = 0  # 0: the kernel died before any cell ran
        code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
        env[GRADING_ENV] = answers.open()
        try:
            # the kernel's own stdout/stderr (a cell writing to fd 1) go nowhere
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
            with client.setup_kernel(env=env, **quiet):
                if ready is not None:
                    ready()
                    ready = None
                for running, index in enumerate(code, start=1):
                    if running not in crashed:
                        client.execute_cell(notebook.cells[index], index)
        except CellTimeoutError:
            return "timed out"
        except DeadKernelError:
            if client.killed:
                ignored.append(running)
            crashed.append(running)
            if len(crashed) > MAX_RESTARTS or running in (0, len(code)):
                return _died(crashed, again=False)
            continue
        finally:
            answers.close()
        break
    interrupted = any(
        output.get("ename") == "KeyboardInterrupt"
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
    if interrupted:
        return "timed out"
    if ignored:
        cells = ", ".join(str(n) for n in ignored)
        return (
            f"timed out (code cell {cells} ignored the interrupt: kernel killed, "
            "run again without it, other answers kept)"
        )
    return _died(crashed) if crashed else "completed"


SOCKET_PATH_MAX = 100  # a Unix socket's path holds at most 107 bytes: "<prefix>-<n>"


def _kernel_transport(folder: Path):
    """Configuration for the kernel's manager: its kernel talks over socket files in
    ``folder`` (the notebook's own work folder), not over TCP ports. A free port is chosen
    before the kernel binds it, so another process (another notebook's kernel, without the
    sandbox) could take it first, and the kernel died before it replied. Where ``folder``'s
    path is too long for a socket: TCP, as before. Its connection file is in ``folder`` too
    (jupyter_client's default is a new file in the temporary folder, left there when the
    worker is killed), so it goes when the work folder goes."""
    from traitlets.config import Config

    connection = {"connection_file": str(folder / ".kernel.json")}
    prefix = str(folder / ".kernel")
    if len(f"{prefix}-99".encode()) > SOCKET_PATH_MAX:
        return Config({"KernelManager": connection})
    return Config({"KernelManager": {"transport": "ipc", "ip": prefix, **connection}})


def _killing_client_class():
    """A ``NotebookClient`` that kills the kernel when a cell still runs one timeout after
    it was interrupted (a cell that ignores SIGINT would otherwise hold it for ever): the
    kernel is then dead, and the notebook runs again without that cell."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError
    from nbclient.util import ensure_async

    class KillingClient(NotebookClient):
        killed = False
        _interrupted = None

        async def _async_handle_timeout(self, timeout, cell=None):
            if cell is not None and self._interrupted is cell:
                self.killed = True
                await ensure_async(self.km.shutdown_kernel(now=True))
                raise DeadKernelError("the cell ignored the interrupt: kernel killed")
            self._interrupted = cell
            return await super()._async_handle_timeout(timeout, cell)

    return KillingClient


def _died(crashed: list[int], again: bool = True) -> str:
    """The run status after kernels died in the code cells ``crashed`` (numbers from 1);
    ``again``: the notebook then ran to its end without them. Answers sent before a kernel
    died always count: they had reached the grader already."""
    if crashed == [0]:
        return "kernel died before its first cell: no answers"
    cells = ", ".join(str(n) for n in crashed)
    if not again:
        return f"kernel died (code cell {cells}; not run again, answers sent before it kept)"
    return f"kernel died (code cell {cells}; run again without it, other answers kept)"


def _prctl(option: int, value: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36


def kill_descendants() -> int:
    """Kill every process started below this one (this process is their subreaper, so
    detached ones were handed back to it); how many were killed."""
    import signal

    killed = 0
    for _ in range(1000):
        children = _children(os.getpid())
        if not children:
            break
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return killed


def _children(parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry))
    return found


def worker_main(timeout: int, kernel: str, report_fd: int) -> int:
    """Inside the worker: read the notebook from stdin, run it, report on ``report_fd``."""
    import resource

    import nbformat

    _prctl(PR_SET_DUMPABLE, 0)  # no kernel of this user reaches our fds through /proc
    _prctl(PR_SET_CHILD_SUBREAPER, 1)  # detached processes come back to us, to be killed
    report = os.fdopen(report_fd, "wb")
    header = json.loads(sys.stdin.buffer.readline())
    data = sys.stdin.buffer.read(int(header["size"]))
    processes = int(header.get("processes") or 0)
    if processes:  # in the sandbox's user namespace this counts this notebook's processes
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    folder = Path.cwd()
    path = folder / Path(header["name"]).name
    path.write_bytes(data)
    answers = AnswerChannel(folder)
    started = []

    def ready() -> None:
        report.write(b"started\n")
        report.flush()
        started.append(True)

    notebook = nbformat.reads(data.decode("utf-8"), as_version=4)  # the grader read it too
    try:
        run = run_notebook(notebook, folder, answers, timeout, kernel, ready)
    except Exception as err:
        if not started:
            raise  # no kernel came up: the grader's failure, said by its traceback
        run = f"could not run: {type(err).__name__}: {err}"
    kill_descendants()
    result = {"run": run, "lost": answers.lost, "overflow": answers.overflow}
    result["answers"] = len(answers.frames)
    report.write(b"result " + json.dumps(result).encode() + b"\n")
    report.write(bytes(answers.frames))
    report.close()
    return 0


if __name__ == "__main__":  # the worker: python -m course_helpers.grading.worker --worker
    from course_helpers.__main__ import skip_unused_iri_checker

    skip_unused_iri_checker()
    _worker = argparse.ArgumentParser()
    _worker.add_argument("--worker", action="store_true", required=True)
    _worker.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT)
    _worker.add_argument("--kernel", default="python3")
    _worker.add_argument("--report-fd", type=int, required=True)
    _args = _worker.parse_args()
    sys.exit(worker_main(_args.timeout, _args.kernel, _args.report_fd))
