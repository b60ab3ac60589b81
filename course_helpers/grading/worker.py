"""The grading worker: one notebook run in a fresh kernel, inside the sandbox.

``python -m course_helpers.grading.worker --worker`` runs the cells of the notebook whose path
arrives on stdin with ``COURSE_GRADING_DIR`` set, then sends one extra cell that writes the
answers ``check`` kept into a folder whose name (a token) arrives on stdin before it. It
prints one line, ``run: STATUS``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from course_helpers.checking.checker import STRICT_ENV
from course_helpers.checking.submissions import GRADING_ENV

_DUMP_CELL = (
    "import os as _os\n_os.makedirs({path!r})\n"
    "from course_helpers.checking.submissions import dump_for_grader as _dump\n_dump({path!r})"
)


DEFAULT_TIMEOUT = 60  # seconds a cell may run
MAX_RESTARTS = 2  # kernels a notebook may kill before the rest of it is given up


def run_notebook(notebook, folder: Path, record_dir: Path, timeout: int, kernel: str) -> str:
    """Execute ``notebook`` in a fresh kernel, then collect its answers into ``record_dir``.

    ``check`` keeps the answers in the kernel's memory; one extra cell, sent only after the
    notebook's own cells ran, writes them into ``record_dir``, a folder with a random name
    that this cell creates (so no earlier cell knows where it will be, or can pre-fill it).
    A cell that kills its kernel is skipped: a new kernel runs the notebook again without it
    (up to ``MAX_RESTARTS`` times), so the answers in the other cells still count.
    """
    import nbformat
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    _KillingClient = _killing_client_class()  # noqa: N806 - a class

    env = dict(os.environ)
    env.update({GRADING_ENV: "1", STRICT_ENV: "0", "COURSE_PROGRESS": "off"})
    source = nbformat.from_dict(notebook)  # a copy: the extra cell never reaches the caller
    source.cells.append(nbformat.v4.new_code_cell(_DUMP_CELL.format(path=str(record_dir))))
    crashed: list[int] = []  # numbers (from 1) of the code cells that killed a kernel
    ignored: list[int] = []  # ... of those that ignored the interrupt (the kernel was killed)
    while True:
        notebook = nbformat.from_dict(source)
        client = _KillingClient(
            notebook,
            timeout=timeout,
            kernel_name=kernel,
            allow_errors=True,
            interrupt_on_timeout=True,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(folder)}},
        )
        running = 0  # 0: the kernel died before any cell ran
        code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
        try:
            # the kernel's own stdout/stderr (a cell writing to fd 1) go nowhere: only the
            # worker's last line reaches the grader
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
            with client.setup_kernel(env=env, **quiet):
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
                return _died(crashed, gave_up=True)
            continue
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
    return _died(crashed, gave_up=False) if crashed else "completed"


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


def _died(crashed: list[int], gave_up: bool) -> str:
    if crashed == [0]:
        return "kernel died before its first cell: no answers"
    cells = ", ".join(str(n) for n in crashed)
    if gave_up:
        return f"kernel died (code cell {cells}): no answers"
    return f"kernel died (code cell {cells}; run again without it, other answers kept)"


def worker_main(timeout: int, kernel: str) -> int:
    """Inside the worker: run the notebook; the answers go to ``<folder>/<token>``. The token
    and the notebook's path arrive on stdin, one a line, so neither is on a command line
    another process could read."""
    import nbformat

    token = sys.stdin.readline().strip()
    path = sys.stdin.readline().rstrip("\n")
    folder = Path(path).resolve().parent
    notebook = nbformat.read(path, as_version=4)
    try:
        run = run_notebook(notebook, folder, folder / token, timeout, kernel)
    except Exception as err:
        run = f"could not run: {type(err).__name__}: {err}"
    print(f"run: {run}", flush=True)
    return 0


if __name__ == "__main__":  # the worker: python -m course_helpers.grading.worker --worker
    from course_helpers.__main__ import skip_unused_iri_checker

    skip_unused_iri_checker()
    _worker = argparse.ArgumentParser()
    _worker.add_argument("--worker", action="store_true", required=True)
    _worker.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT)
    _worker.add_argument("--kernel", default="python3")
    _args = _worker.parse_args()
    sys.exit(worker_main(_args.timeout, _args.kernel))
