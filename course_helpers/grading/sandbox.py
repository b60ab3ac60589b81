"""Run one submission's worker isolated: bubblewrap when it works here, resource limits always.

With ``bwrap`` (Debian package ``bubblewrap``) the worker sees the whole file system
read-only, a private ``/tmp``, only its own writable work folder, no submissions folder, no
answer keys (the lessons package without references or solutions, no ``solutions/``
notebooks, no git history), no network, and its own PID namespace:
when it ends, every process it started ends with it. Without it, the worker runs as a plain
child in its own session (killed as a group afterwards) and :func:`isolation` says what is
not isolated. Limits (memory, CPU time, processes, file size) are set with ``setrlimit`` in
the child before it starts, with or without bubblewrap.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 4096  # address space per process
    cpu_s: int = 600  # CPU seconds per process
    processes: int = 512  # per user (not enforced for root)
    file_mb: int = 256  # largest file it may write


@functools.lru_cache(maxsize=1)
def bwrap_works() -> bool:
    """Whether ``bwrap`` is installed and can create its namespaces here."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False
    try:
        done = subprocess.run([exe, *_BASE, "true"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


_BASE = [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/tmp",
    "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
    "--die-with-parent", "--new-session",
]  # fmt: skip


def isolation(use_sandbox: bool = True) -> str:
    """One line saying how submissions are isolated (shown at the start of every batch)."""
    if use_sandbox and bwrap_works():
        return (
            "isolation: bubblewrap (read-only file system, own /tmp and work folder, answer keys "
            "hidden, no network, own PID namespace) plus memory/CPU/process/file-size limits"
        )
    return (
        "WARNING: NOT ISOLATED: bubblewrap (bwrap) is missing or cannot create namespaces here. "
        "Submissions run as plain processes of this user: they can read other submissions "
        "and the reference answers, "
        "reach the network, write anywhere this user may (the course package is checked and "
        "restored after each one), and signal this user's processes. Only the memory/CPU/"
        "process/file-size limits and killing each one's process group apply."
    )


def command(argv: list[str], work: Path, hide: list[Path], use_sandbox: bool = True) -> list[str]:
    """``argv`` wrapped in bubblewrap (when it works), with ``work`` its only writable folder
    and each folder of ``hide`` replaced by an empty one."""
    if not (use_sandbox and bwrap_works()):
        return argv
    wrapped = [shutil.which("bwrap") or "bwrap", *_BASE]
    for folder in _code_under_tmp():
        wrapped += ["--ro-bind", folder, folder]
    wrapped += answer_keys_hidden()
    for folder in hide:
        wrapped += ["--tmpfs", str(Path(folder).resolve())]
    work = str(Path(work).resolve())
    wrapped += ["--bind", work, work, "--chdir", work, "--setenv", "HOME", work]
    return wrapped + ["--", *argv]


def answer_keys_hidden() -> list[str]:
    """bubblewrap arguments that hide the answer keys from the submission: the lessons
    package is replaced by a copy without references or solutions (see
    :mod:`course_helpers.grading.redact`), and the checkout's ``solutions/`` notebooks and its git
    history (which holds every version of both) by empty folders."""
    package = Path(__file__).resolve().parents[1]
    arguments = ["--ro-bind", str(_redacted_lessons()), str(package / "lessons")]
    checkout = package.parent
    if (checkout / "solutions").is_dir():
        arguments += ["--tmpfs", str(checkout / "solutions")]
    git = checkout / ".git"
    if git.is_dir():
        arguments += ["--tmpfs", str(git)]
    elif git.exists():  # a worktree's .git file names where its history is
        arguments += ["--ro-bind", "/dev/null", str(git)]
    return arguments


@functools.lru_cache(maxsize=1)
def _redacted_lessons() -> Path:
    """The redacted copy, written once per grading process (removed when it exits)."""
    import atexit
    import tempfile

    from course_helpers.grading.redact import write_redacted_lessons

    folder = Path(tempfile.mkdtemp(prefix="course-answer-keys-hidden-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return write_redacted_lessons(folder / "lessons")


def _code_under_tmp() -> list[str]:
    """Python and the course package when they live under ``/tmp`` (a clone there, a venv
    there): the private ``/tmp`` would hide them, so they are bound back read-only."""
    import sys

    package_root = Path(__file__).resolve().parents[2]
    found = []
    for folder in (sys.prefix, sys.exec_prefix, sys.base_prefix, package_root):
        for form in (Path(folder).absolute(), Path(folder).resolve()):
            under = form.is_relative_to("/tmp") and form != Path("/tmp")
            if under and form.is_dir() and str(form) not in found:
                found.append(str(form))
    return found


def preexec(limits: Limits):
    """A ``preexec_fn`` that applies ``limits`` with ``resource.setrlimit``."""

    def apply() -> None:
        import resource

        for name, value in (
            ("RLIMIT_AS", limits.memory_mb * 2**20),
            ("RLIMIT_CPU", limits.cpu_s),
            ("RLIMIT_NPROC", limits.processes),
            ("RLIMIT_FSIZE", limits.file_mb * 2**20),
            ("RLIMIT_CORE", 0),
        ):
            which = getattr(resource, name, None)
            if which is not None:
                try:
                    resource.setrlimit(which, (value, value))
                except (ValueError, OSError):
                    pass  # a hard limit already lower: keep it

    return apply
