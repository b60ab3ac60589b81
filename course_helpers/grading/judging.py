"""Judging with a time limit per notebook, in processes forked from a judge server.

Judging reads the answer log a kernel wrote and runs ``judge`` on each record: work a crafted
log can make slow (many forged attempts, each just under the record budget). A thread
cannot be stopped, so each notebook is judged in a process of its own, killed when it runs
over its limit: only that notebook is lost. Those processes are forked from a server that is
itself forked from the grader once, after everything was imported and the catalogue loaded
(:func:`course_helpers.grading.grade.preload`), before any submission ran and before the
grader starts threads: so no judging process imports anything a submission could have
written, and none is forked from a process with threads.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import tempfile
import threading
import time
from pathlib import Path

DEFAULT_JUDGE_TIMEOUT = 60  # seconds to judge one notebook's recorded answers


class JudgingTimedOut(Exception):
    """The notebook's judging ran over its limit and was stopped."""


class JudgingFailed(Exception):
    """The judging process ended without a result (it crashed, or was killed)."""


class JudgeServer:
    """Forks, on request, a process that calls ``target(*args)`` (the function given here,
    never sent over a pipe) and hands its picklable result back (:meth:`run`)."""

    def __init__(self, target):
        import multiprocessing

        self._results = Path(tempfile.mkdtemp(prefix="course-judging-"))  # mode 0700
        here, there = multiprocessing.Pipe(duplex=True)
        context = multiprocessing.get_context("fork")
        self._server = context.Process(target=_serve, args=(there, target), daemon=True)
        self._server.start()
        there.close()
        self._pipe = here
        self._lock = threading.Lock()

    def run(self, args: tuple, limit: float):
        """``target(*args)`` in a fresh process; :class:`JudgingTimedOut` after ``limit``
        seconds (the process is killed), :class:`JudgingFailed` if it ends without a result."""
        result = self._results / f"{os.urandom(8).hex()}.pickle"
        with self._lock:
            self._pipe.send(("judge", args, str(result)))
            pid = self._pipe.recv()
        try:
            if not _wait(pid, result, limit):
                os.kill(pid, signal.SIGKILL)  # not yet reaped, so it is still that process
                raise JudgingTimedOut(f"over {limit:g} s")
            try:
                return pickle.loads(result.read_bytes())
            except FileNotFoundError:
                raise JudgingFailed("the judging process ended without a result") from None
        finally:
            with self._lock:
                self._pipe.send(("reap", pid))
            result.unlink(missing_ok=True)

    def close(self) -> None:
        import shutil

        self._pipe.close()  # the server ends at the end of its pipe
        self._server.join(timeout=10)
        if self._server.is_alive():
            self._server.kill()
        shutil.rmtree(self._results, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _wait(pid: int, result: Path, limit: float) -> bool:
    """Whether process ``pid`` (a child of the server, reaped only when told) ended within
    ``limit`` seconds."""
    deadline = time.monotonic() + limit
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # Linux before 5.3: look every 10 ms
        while time.monotonic() < deadline:
            if result.exists() or _ended(pid):
                return True
            time.sleep(0.01)
        return _ended(pid)
    try:
        return bool(select.select([handle], [], [], max(0.0, deadline - time.monotonic()))[0])
    finally:
        os.close(handle)


def _ended(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (OSError, IndexError):
        return True


def _serve(pipe, target) -> None:
    """The server: one thread, forking a process per request and reaping it when told."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the grader, which ends this
    while True:
        try:
            request = pipe.recv()
        except (EOFError, OSError):
            return
        if request[0] == "reap":
            try:
                os.waitpid(request[1], 0)
            except ChildProcessError:
                pass
            continue
        _, args, result = request
        pid = os.fork()
        if pid == 0:
            _judge_child(pipe, target, args, result)
        pipe.send(pid)


def _judge_child(pipe, target, args, result: str) -> None:
    """In the forked process: run ``target``, write its result atomically, exit."""
    status = 1
    try:
        pipe.close()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        data = pickle.dumps(target(*args))
        partial = f"{result}.part"
        with open(partial, "wb") as file:
            file.write(data)
        os.replace(partial, result)
        status = 0
    finally:
        os._exit(status)
