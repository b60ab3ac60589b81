"""One resource budget per notebook: a control group holding every process it starts.

Per-process limits (``setrlimit``) multiply: each forked child gets the full address space,
and pages written to a tmpfs or to shared memory belong to no process at all. Where the
grader may create control groups (as root, with the cgroup v1 ``memory`` and ``pids``
hierarchies, or a cgroup v2 folder whose ``memory`` and ``pids`` controllers are enabled for
its children), each notebook's worker, kernel and everything they start run in a group of
their own, created for that notebook: ``memory`` counts all their pages (anonymous, tmpfs,
``/dev/shm``, ``memfd``, page cache) against ``--memory-mb``, and ``pids`` counts their
processes against the process limit, and, where the ``cpu`` controller is there too, ``cpu``
gives each notebook's group the same share of the processors whatever number of processes it
runs (40 busy children of one notebook made an honest notebook beside it time out). When the
notebook is done, every process still in
the group is killed, detached ones included, and the group removed.

Where no control group can be made (a normal user, or a container whose ``/sys/fs/cgroup`` is
read-only), :func:`available` says so and the sandbox's own limits apply (see
``grading.sandbox``): size-limited tmpfs, a process limit per user namespace, and the
address space per process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_FS = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Hierarchy:
    """Where this process's groups live: cgroup v2 (one folder) or v1 (one per controller)."""

    version: int
    memory: Path  # the folder new groups are made in, for memory (v2: for both)
    pids: Path
    cpu: Path | None = None  # ... for an equal share of the processors, where there is one


@functools.lru_cache(maxsize=1)
def available() -> Hierarchy | None:
    """The hierarchy this process may create per-notebook groups in, or None."""
    for found in (_v2(), _v1()):
        if found is not None and _can_create(found):
            return found
    return None


def describe() -> str:
    """A few words for the isolation line: what the budget per notebook is made of."""
    found = available()
    if found is None:
        return "no control group (the limits are per process and per sandbox)"
    shared = ", an equal share of the processors" if found.cpu is not None else ""
    return (
        f"a cgroup v{found.version} per notebook (memory, tmpfs and processes counted "
        f"together{shared})"
    )


def _own_groups() -> dict[str, str]:
    """controller (or "" for v2) -> this process's group path, from /proc/self/cgroup."""
    groups = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            groups[name] = path
    return groups


def _v2() -> Hierarchy | None:
    if not (CGROUP_FS / "cgroup.controllers").is_file():
        return None  # not a unified (v2-only) mount
    own = _own_groups().get("")
    if own is None:
        return None
    folder = CGROUP_FS / own.lstrip("/")
    try:
        enabled = (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    if {"memory", "pids"} <= set(enabled):
        return Hierarchy(2, folder, folder, folder if "cpu" in enabled else None)
    return None


def _v1() -> Hierarchy | None:
    own = _own_groups()
    folders = {}
    for name in ("memory", "pids"):
        if name not in own or not (CGROUP_FS / name / "cgroup.procs").is_file():
            return None
        folders[name] = CGROUP_FS / name / own[name].lstrip("/")
    cpu = None
    if "cpu" in own and (CGROUP_FS / "cpu" / "cgroup.procs").is_file():
        cpu = CGROUP_FS / "cpu" / own["cpu"].lstrip("/")
    return Hierarchy(1, folders["memory"], folders["pids"], cpu)


def _can_create(found: Hierarchy) -> bool:
    """Whether a group can be made there, and a process started in it."""
    import subprocess

    try:
        group = NotebookGroup(found, 256, 16)
    except OSError:
        return False
    try:
        true = "/bin/true" if Path("/bin/true").exists() else "/usr/bin/true"
        done = subprocess.run([true], preexec_fn=group.join, check=False, timeout=30)
        return done.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        group.close()


class NotebookGroup:
    """The control group(s) of one notebook. Create, :meth:`join` from the child before it
    starts the worker, :meth:`close` when the notebook is done."""

    def __init__(self, found: Hierarchy, memory_mb: int, processes: int):
        name = f"course-grading-{secrets.token_hex(8)}"
        self.version = found.version
        self.memory_mb = memory_mb
        self.folders = list(dict.fromkeys([found.memory / name, found.pids / name]))
        for folder in self.folders:
            folder.mkdir()
        if found.cpu is not None and found.cpu / name not in self.folders:
            with contextlib.suppress(OSError):  # no share of its own: the limits still hold
                (found.cpu / name).mkdir()
                self.folders.append(found.cpu / name)
        limit = str(memory_mb * 2**20)
        memory, pids = found.memory / name, found.pids / name
        if self.version == 2:
            _write(memory / "memory.max", limit)
            _write(memory / "memory.swap.max", "0", missing_ok=True)
        else:
            _write(memory / "memory.limit_in_bytes", limit)
            _write(memory / "memory.memsw.limit_in_bytes", limit, missing_ok=True)
        _write(pids / "pids.max", str(processes))
        self._memory = memory
        self._procs = [folder / "cgroup.procs" for folder in self.folders]

    def join(self) -> None:
        """Move the calling process into the group (from ``preexec_fn``: its children
        inherit it)."""
        for procs in self._procs:
            with open(procs, "w") as file:
                file.write(str(os.getpid()))

    def oom_kills(self) -> int:
        """How many processes the kernel killed for running the group out of memory."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            text = (self._memory / name).read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def close(self) -> None:
        """Kill every process left in the group (detached ones too), then remove it."""
        kill = self.folders[0] / "cgroup.kill"
        if self.version == 2 and kill.exists():
            with contextlib.suppress(OSError):
                _write(kill, "1")
        for _ in range(200):
            pids = self._members()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        for folder in self.folders:
            for _ in range(200):  # an exiting process may still be listed for a moment
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)

    def _members(self) -> list[int]:
        found: set[int] = set()
        for procs in self._procs:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in procs.read_text().split())
        return sorted(found)


def _write(path: Path, value: str, missing_ok: bool = False) -> None:
    try:
        with open(path, "w") as file:
            file.write(value)
    except FileNotFoundError:
        if not missing_ok:
            raise


def notebook_group(memory_mb: int, processes: int) -> NotebookGroup | None:
    """A new group for one notebook, or None where none can be made here."""
    found = available()
    if found is None:
        return None
    try:
        return NotebookGroup(found, memory_mb, processes)
    except OSError:
        return None
