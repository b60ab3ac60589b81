"""Run a script in several local processes, each given what ``torchrun --standalone`` gives.

``torchrun`` starts an agent process and one worker per rank, and each of them imports
torch: about 5 s of CPU for a two-rank launch, paid again at every launch. On Linux this
launcher keeps one *template* process per kernel that has imported torch and
torch.distributed once, and forks the ranks from it. Every rank gets the environment
torchrun gives its workers (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``GROUP_WORLD_SIZE``, ``ROLE_RANK``,
``ROLE_WORLD_SIZE``, ``ROLE_NAME``, ``MASTER_ADDR``, ``MASTER_PORT``,
``TORCHELASTIC_USE_AGENT_STORE``; not the other ``TORCHELASTIC_*`` ones, which describe
torchrun's agent) and runs the script as ``__main__``
with ``sys.argv = [script, *args]``;
when one rank fails the others are stopped, as torchrun stops them. As torchrun's agent does,
the launcher hosts the ranks' store (a ``TCPStore`` at ``MASTER_ADDR:MASTER_PORT``, in a
process forked for the launch) and sets ``TORCHELASTIC_USE_AGENT_STORE=True``, so every rank
is its client: the port is bound before any rank starts, and a rank that ends early does not
take the store from the others. The ranks and the store die with the template, which an
interrupted launch kills. Elsewhere (macOS, Windows, where forking a process that imported
torch is not safe) it runs torchrun itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Runs in the template process (python -c); a request and its reply are one JSON line each.
_TEMPLATE = r"""
import ctypes, datetime, json, os, runpy, signal, sys, time, traceback

# what rank scripts import; torch._dynamo is what torch.optim's first optimizer imports
import torch, torch._dynamo, torch.distributed, torch.nn.parallel  # noqa: E401
import torch.utils.data.distributed  # noqa: F401

requests, replies = sys.stdin, sys.stdout
template = os.getpid()
STORE_START_LIMIT = 10  # seconds the store may take to start (it connects to itself)


# A process forked here dies with the template (which the kernel kills when a launch is
# interrupted): the ranks no longer need the store once they have met, so nothing else
# would stop them.
def die_with_template():
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != template:  # it died before the line above
        os._exit(1)


# Forks the process that hosts this launch's store, as torchrun's agent hosts it. It lives
# until the template closes its end of a pipe (after the launch) or exits. Returns its pid,
# its port (None if it could not start: then the first line of its error) and the
# template's end of that pipe.
def start_store(timeout):
    port_r, port_w = os.pipe()
    life_r, life_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            die_with_template()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.close(port_r)
            os.close(life_w)
            try:
                store = torch.distributed.TCPStore(
                    "localhost", 0, is_master=True, wait_for_workers=False,
                    timeout=datetime.timedelta(seconds=min(timeout, STORE_START_LIMIT)),
                )
            except Exception as error:
                first = (str(error).strip().splitlines() or [type(error).__name__])[0]
                os.write(port_w, f"error {first}\n".encode())
            else:
                os.write(port_w, f"{store.port}\n".encode())
                os.close(port_w)
                os.read(life_r, 1)  # returns when the template closes its end or exits
        finally:
            os._exit(0)
    os.close(port_w)
    os.close(life_r)
    with os.fdopen(port_r) as port_pipe:
        line = port_pipe.readline().strip()
    if line.isdigit():
        return pid, int(line), None, life_w
    return pid, None, line.removeprefix("error ") or "it exited", life_w


def run_rank(request, rank, port, store_life):
    try:
        die_with_template()
        os.close(store_life)  # only the template keeps the store alive
        log = os.open(request["logs"][rank], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        os.chdir(request["cwd"])
        n = request["nproc"]
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ.update(
            RANK=str(rank), LOCAL_RANK=str(rank), GROUP_RANK="0", ROLE_RANK=str(rank),
            WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n), ROLE_WORLD_SIZE=str(n),
            GROUP_WORLD_SIZE="1", ROLE_NAME="default",
            MASTER_ADDR="localhost", MASTER_PORT=str(port),
            TORCHELASTIC_USE_AGENT_STORE="True",
        )
        sys.argv = [request["script"], *request["args"]]
        sys.path[0] = os.path.dirname(os.path.abspath(request["script"]))
        runpy.run_path(request["script"], run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


for line in requests:
    request = json.loads(line)
    store, port, error, store_life = start_store(request["timeout"])
    if port is None:
        os.waitpid(store, 0)
        os.close(store_life)
        replies.write(json.dumps({"store_error": error}) + "\n")
        replies.flush()
        continue
    pids = []
    for rank in range(request["nproc"]):
        pid = os.fork()
        if pid == 0:
            run_rank(request, rank, port, store_life)
        pids.append(pid)
    codes = [None] * len(pids)
    deadline = time.monotonic() + request["timeout"]
    stopping = timed_out = False
    while None in codes:
        for i, pid in enumerate(pids):
            if codes[i] is None:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    codes[i] = os.waitstatus_to_exitcode(status)
        failed = any(code not in (None, 0) for code in codes)
        timed_out = timed_out or (None in codes and time.monotonic() > deadline)
        if (failed or timed_out) and not stopping and None in codes:
            stopping = True  # as torchrun does: one rank failed, stop the others
            for i, pid in enumerate(pids):
                if codes[i] is None:
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
    os.close(store_life)
    os.kill(store, signal.SIGKILL)  # whatever it is doing: the launch is over
    os.waitpid(store, 0)
    replies.write(json.dumps({"codes": codes, "timed_out": timed_out}) + "\n")
    replies.flush()
"""


@dataclass
class Launch:
    """How a launch ended: each rank's exit code (rank order) and log file."""

    codes: list[int]
    logs: list[Path]
    timed_out: bool

    @property
    def ok(self) -> bool:
        return not self.timed_out and all(code == 0 for code in self.codes)


class StoreFailed(RuntimeError):
    """The store the ranks meet through could not start (no rank was started)."""


class _Template:
    process: subprocess.Popen | None = None


def _template(env: dict[str, str]) -> subprocess.Popen:
    process = _Template.process
    if process is None or process.poll() is not None:
        process = subprocess.Popen(
            [sys.executable, "-c", _TEMPLATE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        _Template.process = process
    return process


def _stop_template() -> None:
    process, _Template.process = _Template.process, None
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()


def forks() -> bool:
    """Whether ranks are forked from a template here (else torchrun runs them)."""
    return sys.platform == "linux" and os.environ.get("COURSE_RANKS_BY", "") != "torchrun"


def launch(script: Path, args: list[str], nproc: int = 2, timeout: float = 120) -> Launch:
    """Run ``script`` with ``args`` in ``nproc`` processes, each logging to ``rank<N>.log``."""
    script = Path(script)
    logs = [script.parent / f"rank{rank}.log" for rank in range(nproc)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if not forks():
        return _torchrun(script, args, nproc, timeout, env, logs)
    request = {
        "script": str(script),
        "args": [str(a) for a in args],
        "nproc": nproc,
        "timeout": timeout,
        "cwd": os.getcwd(),
        "env": env,
        "logs": [str(log) for log in logs],
    }
    return _launch_forked(request, env, logs)


def _launch_forked(request: dict, env: dict[str, str], logs: list[Path]) -> Launch:
    process = _template(env)
    try:
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        reply = process.stdout.readline()
    except BaseException:  # an interrupt while the ranks run: stop them with their template
        _stop_template()
        raise
    if not reply:
        _stop_template()
        raise RuntimeError(
            "The process that starts the ranks exited unexpectedly (killed, or out of "
            "memory), and its ranks with it: run the cell again to start a fresh one."
        )
    answer = json.loads(reply)
    if "store_error" in answer:
        why = answer["store_error"].rstrip(".")
        raise StoreFailed(
            "The ranks could not meet: their store (a torch.distributed.TCPStore on "
            f"localhost) did not start: {why}. Check that this machine's loopback network "
            "(localhost) works, then run the cell again."
        )
    return Launch(codes=answer["codes"], logs=logs, timed_out=answer["timed_out"])


def _torchrun(script, args, nproc, timeout, env, logs) -> Launch:
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone",
        f"--nproc_per_node={nproc}", str(script), *map(str, args),
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return Launch(codes=[-9] * nproc, logs=logs, timed_out=True)
    for log in logs:
        log.write_text(done.stderr)
    return Launch(codes=[done.returncode] * nproc, logs=logs, timed_out=False)
