"""Judging with a time and a memory limit per notebook, in processes forked from a judge
server, with everything passed through file descriptors, never through a folder.

Judging reads the answers a kernel sent and runs ``judge`` on each record: work a crafted
log can make slow (many forged attempts) or large (a view whose copy is huge). A thread
cannot be stopped, so each notebook is judged in a process of its own, with an address-space
limit (``memory_mb`` above what it inherits), killed when it runs over its time limit: only
that notebook is lost. Those processes are forked from a server that is itself forked from
the grader once, after everything was imported, the references built and judging warmed up
(:func:`course_helpers.grading.grade.prepare`), before any submission ran and before the
grader starts threads. From then on the server and its children refuse every import
(:func:`refuse_imports`): nothing a submission could have written is ever run by them.

The answers reach a judging process in a ``memfd`` (a file in no folder) and its result
comes back through a pipe, as JSON: no file a kernel could swap, and no ``pickle`` of
anything a kernel could have written.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import json
import os
import resource
import select
import signal
import sys
import threading
import time
from multiprocessing.reduction import recv_handle, send_handle

DEFAULT_JUDGE_TIMEOUT = 60  # seconds to judge one notebook's recorded answers
DEFAULT_JUDGE_MEMORY_MB = 2048  # address space a judging process may add to what it inherits
MAX_RESULT_BYTES = 16 * 2**20  # a judging result larger than this is refused


class JudgingTimedOut(Exception):
    """The notebook's judging ran over its limit and was stopped."""


class JudgingFailed(Exception):
    """The judging process ended without a result (it crashed, ran out of memory, or was
    killed)."""


class LateImport(ImportError):
    """A module that was not imported before the first submission ran."""


class _RefuseImports(importlib.abc.MetaPathFinder):
    """Refuses to import any module not imported yet (built-in ones excepted)."""

    refused: list[str] = []

    def find_spec(self, fullname, path, target=None):
        if fullname in sys.builtin_module_names:
            return None
        self.refused.append(fullname)
        raise LateImport(
            f"{fullname} was not imported before the first submission ran, and the grader "
            "imports nothing after that (a submission may have written it): a grader bug, "
            "please report it",
            name=fullname,
        )


_GUARD = _RefuseImports()


def refuse_imports(on: bool = True) -> None:
    """From now on (``on``), this process imports no module it has not imported yet."""
    if on and _GUARD not in sys.meta_path:
        sys.meta_path.insert(0, _GUARD)
    elif not on and _GUARD in sys.meta_path:
        sys.meta_path.remove(_GUARD)


def refused_imports() -> list[str]:
    """The modules refused so far in this process (see :func:`refuse_imports`)."""
    return list(_GUARD.refused)


class JudgeServer:
    """Forks, on request, a process that calls ``target(answers, *args)`` (``target`` is given
    here and never sent; ``answers`` is the bytes handed to :meth:`run`) and returns its
    JSON-ready result (:meth:`run`)."""

    def __init__(self, target, memory_mb: int = DEFAULT_JUDGE_MEMORY_MB):
        import multiprocessing

        here, there = multiprocessing.Pipe(duplex=True)
        context = multiprocessing.get_context("fork")
        self._server = context.Process(
            target=_serve, args=(there, here, target, memory_mb), daemon=True
        )
        self._server.start()
        there.close()
        self._pipe = here
        self._lock = threading.Lock()

    def run(self, answers: bytes, args: tuple, limit: float):
        """``target(answers, *args)`` in a fresh process: its result, decoded from JSON;
        :class:`JudgingTimedOut` after ``limit`` seconds (the process is killed),
        :class:`JudgingFailed` if it ends without a whole result."""
        memory = os.memfd_create("course-answers", os.MFD_CLOEXEC)
        readable, writable = os.pipe()
        try:
            _write_all(memory, answers)
            os.lseek(memory, 0, os.SEEK_SET)
            with self._lock:
                self._pipe.send(("judge", args))
                send_handle(self._pipe, memory, self._server.pid)
                send_handle(self._pipe, writable, self._server.pid)
                pid = self._pipe.recv()
        finally:
            os.close(memory)
            os.close(writable)
        try:
            data, ended = _read_until(readable, time.monotonic() + limit)
            if not ended:
                os.kill(pid, signal.SIGKILL)  # not yet reaped, so it is still that process
                raise JudgingTimedOut(f"over {limit:g} s")
            try:
                answer = json.loads(data)
            except ValueError:
                raise JudgingFailed(
                    "the judging process ended without a result (it may have run out of its memory)"
                ) from None
            if not isinstance(answer, dict) or "result" not in answer:
                raise JudgingFailed(str(answer.get("failed") if isinstance(answer, dict) else ""))
            return answer["result"]
        finally:
            os.close(readable)
            with self._lock:
                self._pipe.send(("reap", pid))

    def close(self) -> None:
        """Stop the server: it ends when its end of the pipe closes."""
        self._pipe.close()
        self._server.join(timeout=10)
        if self._server.is_alive():
            self._server.kill()
            self._server.join()

    @property
    def exitcode(self):
        return self._server.exitcode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _write_all(handle: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view) :]


def _read_until(handle: int, deadline: float) -> tuple[bytes, bool]:
    """What arrives on ``handle`` until its end (True) or ``deadline`` (False); at most
    :data:`MAX_RESULT_BYTES` are kept (a longer result is no valid result)."""
    data = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(data), False
        if not select.select([handle], [], [], left)[0]:
            continue
        chunk = os.read(handle, 1 << 16)
        if not chunk:
            return bytes(data), True
        if len(data) <= MAX_RESULT_BYTES:
            data += chunk


def _serve(pipe, grader_end, target, memory_mb: int) -> None:
    """The server: one thread, forking a process per request and reaping it when told."""
    grader_end.close()  # else the server would hold its own pipe open and never see its end
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the grader, which ends this
    refuse_imports()
    while True:
        try:
            request = pipe.recv()
            if request[0] == "reap":
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(request[1], 0)
                continue
            memory, result = recv_handle(pipe), recv_handle(pipe)
        except (EOFError, OSError):
            return
        pid = os.fork()
        if pid == 0:
            _judge_child(pipe, target, request[1], memory, result, memory_mb)
        os.close(memory)
        os.close(result)
        pipe.send(pid)


def _judge_child(pipe, target, args, memory: int, result: int, memory_mb: int) -> None:
    """In the forked process: limit its memory, run ``target``, write the JSON, exit."""
    status = 1
    try:
        pipe.close()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _limit_memory(memory_mb)
        try:
            with os.fdopen(memory, "rb") as file:
                answers = file.read()
            data = json.dumps({"result": target(answers, *args)}).encode()
        except Exception as err:  # said in the notebook's report, not a traceback here
            data = json.dumps({"failed": f"{type(err).__name__}: {err}"[:2000]}).encode()
        _write_all(result, data)
        status = 0
    finally:
        os._exit(status)


def _limit_memory(memory_mb: int) -> None:
    """Cap this process's address space at what it has now plus ``memory_mb``."""
    try:
        status = open("/proc/self/status").read()
        size = next(int(line.split()[1]) for line in status.splitlines() if line[:7] == "VmSize:")
    except (OSError, StopIteration, ValueError):
        return
    limit = size * 1024 + memory_mb * 2**20
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
