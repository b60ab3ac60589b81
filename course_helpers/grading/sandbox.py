"""Run one submission's worker isolated: bubblewrap when it works here, resource limits always.

With ``bwrap`` (Debian package ``bubblewrap``) the worker runs in its own user namespace with
every capability dropped (so it holds none even when the grader runs as root: no remounts,
no ``setns``), and sees only what a kernel needs, read-only: the system's ``/usr`` (and the
``/bin``, ``/lib`` links to it), a few files of ``/etc``, Python's prefixes, the folders on
``sys.path`` and the course package (its lessons without references or solutions); no other
clone, no ``solutions/``, no git history, no submissions folder, no other work folder, and
nothing writable but two size-limited tmpfs: ``/tmp`` (which holds its work folder,
:data:`SANDBOX_WORK`) and ``/dev/shm``. The root and ``/dev`` are read-only. No network,
its own PID namespace: when it ends, every process it started ends with it. Without it, the
worker runs as a plain child in its own session (killed as a group afterwards; as root, with
no capabilities) and :func:`isolation` says what is not isolated. Limits (memory, CPU time,
file size) are set with ``setrlimit`` in the child before it starts, with or without
bubblewrap; the process limit counts the processes of one sandbox (its user namespace), and
where the grader may create control groups the whole notebook also shares one memory and
process budget (:mod:`course_helpers.grading.budget`).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

# Address space per process (RLIMIT_AS), MiB. It counts mappings, not memory in use: a CUDA
# build of torch maps over 3 GiB on import (2.14.1+cu130: VmPeak 3.26 GB, CPU build 0.65 GB).
DEFAULT_MEMORY_MB = 8192


DEFAULT_PROCESSES = 512  # per notebook (its sandbox or control group)
DEFAULT_DISK_MB = 1024  # each of the sandbox's tmpfs (/tmp with the work folder, /dev/shm)

SANDBOX_WORK = "/tmp/work"  # the notebook's working folder, inside the sandbox


@dataclass(frozen=True)
class Limits:
    memory_mb: int = DEFAULT_MEMORY_MB  # the notebook's memory (cgroup), each process's space
    cpu_s: int = 600  # CPU seconds per process
    processes: int = DEFAULT_PROCESSES  # per notebook (sandbox or cgroup); per user without either
    file_mb: int = 256  # largest file it may write
    disk_mb: int = DEFAULT_DISK_MB  # each tmpfs of the sandbox


@functools.lru_cache(maxsize=1)
def bwrap_works() -> bool:
    """Whether ``bwrap`` is installed and can create its namespaces here."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False
    try:
        true = str(Path(shutil.which("true") or "/usr/bin/true").resolve())  # under /usr
        probe = [exe, *_BASE, *_no_nested_userns(), *_system(), true]
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


_NAMESPACES = [
    "--unshare-user", "--cap-drop", "ALL",
    "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
    "--die-with-parent", "--new-session",
]  # fmt: skip

_BASE = [*_NAMESPACES, "--ro-bind", "/usr", "/usr", "--dev", "/dev", "--proc", "/proc"]


@functools.lru_cache(maxsize=1)
def _no_nested_userns() -> list[str]:
    """``--disable-userns`` where this bwrap has it (0.8 and later; Ubuntu 22.04 ships 0.6,
    which would otherwise fail every sandbox and fall back to none). Without it the kernel
    may still create a user namespace of its own, with capabilities only over itself."""
    try:
        text = subprocess.run(
            [shutil.which("bwrap") or "bwrap", "--help"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return ["--disable-userns"] if "--disable-userns" in text else []


# what a kernel reads from /etc (the loader's cache, names, time zone, fonts, certificates)
_ETC = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "passwd", "group",
    "nsswitch.conf", "hosts", "host.conf", "fonts", "ssl", "mime.types", "alternatives",
    "matplotlibrc", "jupyter",
)  # fmt: skip


def _system() -> list[str]:
    """``/bin``, ``/lib``... as the links to ``/usr`` they are (merged ``/usr``), or bound."""
    arguments = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/") / name
        if top.is_symlink():
            arguments += ["--symlink", str(top.readlink()), str(top)]
        elif top.is_dir():
            arguments += ["--ro-bind", str(top), str(top)]
    return arguments


def isolation(use_sandbox: bool = True) -> str:
    """One line saying how submissions are isolated (shown at the start of every batch)."""
    from course_helpers.grading import budget

    if use_sandbox and bwrap_works():
        return (
            "isolation: bubblewrap (no capabilities, only the system, Python and the course "
            "package visible and read-only, size-limited /tmp, /dev/shm and work folder, "
            "answer keys hidden, no network, own PID namespace, a process limit per sandbox) "
            f"plus memory/CPU/file-size limits; budget: {budget.describe()}"
        )
    return (
        "WARNING: NOT ISOLATED: bubblewrap (bwrap) is missing or cannot create namespaces here. "
        "Submissions run as plain processes of this user: they can read other submissions "
        "and the reference answers, reach the network, write anywhere this user may (the "
        "course package is checked and restored after each one; the Python environment is "
        "not), signal this user's processes (the grader included), and rewrite report files "
        "while they run. Only the memory/CPU/process/file-size limits, killing what each one "
        f"leaves behind, and this budget apply: {budget.describe()}. Grade with bubblewrap "
        "(or --jobs 1 on a throwaway machine) when submissions may attack each other."
    )


def command(
    argv: list[str], hide: list[Path], use_sandbox: bool = True, limits: Limits | None = None
) -> list[str]:
    """``argv`` wrapped in bubblewrap (when it works): only what a kernel needs visible and
    read-only (see the module doc), each folder of ``hide`` replaced by an empty one (should
    it lie inside a visible one), and nothing writable but a ``/tmp`` (holding the work
    folder :data:`SANDBOX_WORK`) and a ``/dev/shm`` of ``limits.disk_mb`` MiB each."""
    if not (use_sandbox and bwrap_works()):
        return argv
    size = str((limits or Limits()).disk_mb * 2**20)
    wrapped = [shutil.which("bwrap") or "bwrap", *_BASE, *_no_nested_userns(), *_system()]
    wrapped += ["--remount-ro", "/dev", "--size", size, "--tmpfs", "/dev/shm"]
    wrapped += ["--size", size, "--tmpfs", "/tmp", "--dir", SANDBOX_WORK]
    for name in _ETC:
        if (Path("/etc") / name).exists():
            wrapped += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for folder in code_folders():
        wrapped += ["--ro-bind", folder, folder]
    wrapped += answer_keys_hidden()
    for folder in hide:
        wrapped += ["--tmpfs", str(Path(folder).resolve())]
    wrapped += ["--chdir", SANDBOX_WORK, "--setenv", "HOME", SANDBOX_WORK, "--remount-ro", "/"]
    return wrapped + ["--", *argv]


def answer_keys_hidden() -> list[str]:
    """bubblewrap arguments that hide the answer keys from the submission: the lessons
    package is replaced by a copy without references or solutions (see
    :mod:`course_helpers.grading.redact`). The checkout around the package (``solutions/``,
    ``.git``) is never bound, so it is not there at all."""
    package = Path(__file__).resolve().parents[1]
    return ["--ro-bind", str(_redacted_lessons()), str(package / "lessons")]


_REDACTING = threading.Lock()
_REDACTED: list[Path] = []  # the copy, once written


def _redacted_lessons() -> Path:
    """The redacted copy, written once per grading process (removed when it exits); the
    grader's first notebooks start together (``--jobs``), so the others wait for it."""
    import atexit
    import tempfile

    from course_helpers.grading.redact import write_redacted_lessons

    with _REDACTING:
        if not _REDACTED:
            folder = Path(tempfile.mkdtemp(prefix="course-answer-keys-hidden-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            _REDACTED.append(write_redacted_lessons(folder / "lessons"))
        return _REDACTED[0]


def code_folders() -> list[str]:
    """Python's prefixes (the interpreter, the standard library, the virtualenv), its
    site-packages, the folders of ``PYTHONPATH`` and the course package, each where the
    grader sees it (as given and with links resolved). A folder that holds the course's
    checkout (its ``solutions/``) is never bound, only the package inside it."""
    import os
    import site
    import sys

    package = Path(__file__).resolve().parents[1]
    prefixes = (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix)
    extra = [*site.getsitepackages(), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    found: list[str] = []
    for folder in (*prefixes, *(p for p in extra if p), package):
        for form in (Path(folder).absolute(), Path(folder).resolve()):
            if form.is_dir() and form != Path("/") and str(form) not in found:
                if package.parent.is_relative_to(form) and form != package:
                    continue  # the checkout (or above): its answer keys stay outside
                if not form.is_relative_to("/usr"):
                    found.append(str(form))
    return found


def visible_folders() -> list[str]:
    """Every folder or file bound into the sandbox (``/usr``, the ``/bin``... links, the
    ``/etc`` files, :func:`code_folders`): what a graded kernel can read, as its owner."""
    shown = ["/usr", *code_folders()]
    shown += [str(Path("/etc") / name) for name in _ETC if (Path("/etc") / name).exists()]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        if (Path("/") / name).is_dir():
            shown += [str(Path("/") / name), str((Path("/") / name).resolve())]
    return list(dict.fromkeys(shown))


def preexec(limits: Limits, drop_capabilities: bool = False, sandboxed: bool = False, group=None):
    """A ``preexec_fn`` that moves the child into the notebook's control ``group`` (if any:
    :mod:`course_helpers.grading.budget`; it then holds ``limits.memory_mb`` for the whole
    notebook) and applies ``limits`` with ``resource.setrlimit`` (without a group, the memory
    limit is each process's address space).
    With ``drop_capabilities`` (a root grader without the sandbox), it also empties the
    capability bounding set, so the worker and its kernel run as a root with no
    capabilities: no permission bits ignored (other users' files, folders it does not own),
    no ``chown``, ``ptrace`` or mounts. The process limit is set here only without the
    sandbox and not as root (there it counts every process of this user); in the sandbox the
    worker sets it inside its own user namespace, where it counts that notebook's processes."""

    def apply() -> None:
        import resource

        if group is not None:
            group.join()
        if drop_capabilities:
            _drop_capabilities()
        per_user = not sandboxed and not drop_capabilities
        # with a control group, memory is counted there (pages, not mappings): each process
        # keeps the default address space, which a CUDA build of torch needs to import
        address_space = limits.memory_mb
        if group is not None:
            address_space = max(address_space, DEFAULT_MEMORY_MB)
        for name, value in (
            ("RLIMIT_AS", address_space * 2**20),
            ("RLIMIT_CPU", limits.cpu_s),
            ("RLIMIT_NPROC", limits.processes if per_user else 0),
            ("RLIMIT_FSIZE", limits.file_mb * 2**20),
            ("RLIMIT_CORE", 0),
        ):
            if name == "RLIMIT_NPROC" and not value:
                continue
            which = getattr(resource, name, None)
            if which is not None:
                try:
                    resource.setrlimit(which, (value, value))
                except (ValueError, OSError):
                    pass  # a hard limit already lower: keep it

    return apply


def _drop_capabilities() -> None:
    """Empty the capability bounding set (``PR_CAPBSET_DROP``): after ``exec`` even uid 0
    holds no capability."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        last = 63
    for capability in range(last + 1):
        libc.prctl(24, capability, 0, 0, 0)  # PR_CAPBSET_DROP
