"""Kernels for `pytest --nbval` forked from a process that has already imported torch.

Every notebook the suite runs starts a Jupyter kernel, and every fresh kernel spends about
3 s of CPU importing torch and ``torch._dynamo`` (the first ``torch.optim`` optimizer
imports it). With some forty kernels per run on a 2-core machine that is a large part of
the whole test command. ``ForkingProvisioner`` keeps one *template* process per pytest
process that has imported them once, and forks each kernel from it; the kernel then starts
exactly as ``python -m ipykernel_launcher -f <connection file>`` would, in the environment
and folder jupyter_client asked for.

It forks only where that is safe, and otherwise launches the ordinary way:
- Linux, no NVIDIA or AMD GPU device (a GPU machine gets fresh kernels, so CUDA is never
  touched before a fork), ``COURSE_FORK_KERNELS`` not set to ``0``;
- the template is single-threaded (``OMP_NUM_THREADS=1``, as ``make test`` sets);
- the command is the plain ipykernel launch with this Python (the grading sandbox's
  bubblewrap command is not), and the environment agrees with the template's on every
  variable read while modules are imported (``PYTHON*``, ``OMP_*``, ``TORCH*``, ...).

Its kernels talk over Unix sockets (ZeroMQ's ``ipc`` transport) in a folder of their own, not
over TCP: jupyter_client picks a TCP kernel's ports by asking the system for free ones and
letting them go, and any socket opened meanwhile (by another test, worker or lane) can take one
before the kernel binds it ("Address already in use", seen in a CI run). A socket file's name
cannot be taken that way.

The build (``python -m course_helpers build``), ``make lab`` and grading always use ordinary
kernels, so the stored outputs nbval compares against come from fresh processes: a difference a
forked kernel made would fail the suite. Installed by ``course_helpers.testing.pytest_plugin`` (so
``pytest --nbval notebooks solutions`` gets it too) and by the browser tests' JupyterLab.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

NAME = "course-forked-kernel"
SWITCH_ENV = "COURSE_FORK_KERNELS"
PRELOAD = ("torch", "torch._dynamo")
# Variables that modules read when they are imported: a kernel whose value differs from the
# template's would not see its own value, so it gets an ordinary launch instead.
IMPORT_TIME_PREFIXES = (
    "PYTHON", "OMP_", "KMP_", "GOMP", "MKL", "OPENBLAS", "TORCH", "PYTORCH", "CUDA", "NVIDIA",
    "HIP", "ROCM", "LD_", "MALLOC", "TRITON", "XLA",
)  # fmt: skip
# ... except these, which torch itself sets in os.environ once inductor is imported (so a
# test importing it would otherwise send every later kernel the slow way); read at run time.
RUN_TIME_ONLY = ("TORCHINDUCTOR_CACHE_DIR",)

# Runs in the template process (python -c). Requests and replies are JSON lines on two
# pipes whose descriptors come as argv[1:3]; stdin/stdout/stderr stay the pytest process's,
# so a forked kernel writes where an ordinary one would.
_TEMPLATE = r"""
import importlib, json, os, runpy, signal, sys, traceback

requests = os.fdopen(int(sys.argv[1]), "r")
replies = os.fdopen(int(sys.argv[2]), "w", buffering=1)
pipes = (int(sys.argv[1]), int(sys.argv[2]))
del sys.argv[1:]
for name in json.loads(os.environ["COURSE_FORK_PRELOAD"]):
    importlib.import_module(name)
replies.write(json.dumps({"threads": len(os.listdir("/proc/self/task"))}) + "\n")
kernels = {}


def become_kernel(request):
    os.setsid()  # its own process group, as jupyter_client's launch gives it
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    for fd, where in ((1, request["stdout"]), (2, request["stderr"])):
        if where == "devnull":
            os.dup2(null, fd)
    os.close(null)
    for fd in pipes:
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    # a fresh process seeds these from the OS; forked ones would share the template's seeds
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    if "torch" in sys.modules:
        sys.modules["torch"].seed()
    sys.argv = [request["argv"][2]] + request["argv"][3:]
    sys.path[0] = ""  # what -m puts first; ipykernel_launcher removes it
    code = 0
    try:
        runpy.run_module(request["argv"][2], run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


for line in requests:
    request = json.loads(line)
    if request["op"] == "fork":
        pid = os.fork()
        if pid == 0:
            become_kernel(request)
        kernels[pid] = None
        replies.write(json.dumps({"pid": pid}) + "\n")
    elif request["op"] == "poll":
        pid = request["pid"]
        if kernels.get(pid) is None:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done:
                kernels[pid] = os.waitstatus_to_exitcode(status)
        replies.write(json.dumps({"code": kernels.get(pid)}) + "\n")

for pid, code in kernels.items():  # the pytest process is gone: so are its kernels
    if code is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
"""


def enabled() -> bool:
    """Whether this machine forks test kernels (see the module docstring)."""
    if os.environ.get(SWITCH_ENV, "").strip().lower() in ("0", "off", "no", "false"):
        return False
    gpu_devices = glob.glob("/dev/nvidia[0-9]*") + glob.glob("/dev/kfd")
    return sys.platform == "linux" and not gpu_devices


_BASE_ENV: dict[str, str] = {}
_WARNED: set = set()  # what a warning has already been given for


class _Template:
    """The template process of this pytest process, started on first use."""

    _lock = threading.Lock()
    _instance: _Template | None = None

    def __init__(self) -> None:
        to_template, self._requests = os.pipe()
        self._replies_fd, from_template = os.pipe()
        # the environment at install(), not whatever a test has patched when the first
        # kernel starts: a template made then would send every later kernel the slow way
        self.env = dict(_BASE_ENV or os.environ)
        env = dict(self.env, COURSE_FORK_PRELOAD=json.dumps(PRELOAD))
        self.process = subprocess.Popen(
            [sys.executable, "-c", _TEMPLATE, str(to_template), str(from_template)],
            pass_fds=(to_template, from_template),
            stdin=subprocess.DEVNULL,
            env=env,
        )
        os.close(to_template)
        os.close(from_template)
        self._send = os.fdopen(self._requests, "w", buffering=1)
        self._receive = os.fdopen(self._replies_fd, "r")
        ready = self._receive.readline()
        self.usable = bool(ready) and json.loads(ready)["threads"] == 1

    @classmethod
    def get(cls) -> _Template:
        with cls._lock:
            if cls._instance is None or cls._instance.process.poll() is not None:
                cls._instance = cls()
            return cls._instance

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._send.write(json.dumps(request) + "\n")
            reply = self._receive.readline()
        if not reply:
            raise RuntimeError("the kernel template process exited")
        return json.loads(reply)

    def differences(self, env: dict[str, str]) -> list[str]:
        """The import-time variables whose value in ``env`` is not the template's."""
        keys = {k for k in (*env, *self.env) if k.startswith(IMPORT_TIME_PREFIXES)}
        return sorted(k for k in keys - set(RUN_TIME_ONLY) if env.get(k) != self.env.get(k))


class _ForkedKernel:
    """What jupyter_client needs of a ``Popen`` for a kernel the template forked."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, template: _Template) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._template = template

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._template.ask({"op": "poll", "pid": self.pid})["code"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
            time.sleep(0.02)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def _where(stream: Any) -> str | None:
    """'inherit' or 'devnull' for a stdout/stderr argument the fork can honour, else None."""
    if stream is None:
        return "inherit"
    if stream == subprocess.DEVNULL or getattr(stream, "name", None) == os.devnull:
        return "devnull"
    return None


# A Unix socket's path holds at most 107 bytes; a kernel's is <folder>/<kernel id>-<n>.
_SOCKET_PATH_MAX = 100
_SOCKET_FOLDER: list[str] = []  # made on first use, removed when the process exits


def _socket_folder() -> str:
    if not _SOCKET_FOLDER:
        import atexit
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="course-kernels-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _SOCKET_FOLDER.append(folder)
    return _SOCKET_FOLDER[0]


def _use_unix_sockets(km: Any) -> None:
    """Switch a kernel that would get TCP ports on this machine to socket files."""
    ports = ("shell_port", "iopub_port", "stdin_port", "hb_port", "control_port")
    if km.transport != "tcp" or any(getattr(km, name) for name in ports):
        return  # configured by hand, or a restart that keeps its connection
    if km.ip not in ("127.0.0.1", "localhost"):
        return
    name = os.path.join(_socket_folder(), km.kernel_id or os.urandom(8).hex())
    if len(f"{name}-99".encode()) > _SOCKET_PATH_MAX:
        return  # a temporary folder too deep for socket paths: TCP, as before
    km.transport, km.ip, km.cache_ports = "ipc", name, False


class ForkingProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, forking the kernel from the template when it can,
    its kernels on Unix sockets rather than TCP ports."""

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        if self.parent is not None:
            _use_unix_sockets(self.parent)
        return await super().pre_launch(**kwargs)

    async def launch_kernel(self, cmd: list[str], **kwargs: Any):
        template = _Template.get()
        env = kwargs.get("env") or dict(os.environ)
        stdout, stderr = _where(kwargs.get("stdout")), _where(kwargs.get("stderr"))
        plain_launch = (
            len(cmd) >= 3
            and os.path.realpath(cmd[0]) == os.path.realpath(sys.executable)
            and cmd[1:3] == ["-m", "ipykernel_launcher"]
        )
        if not template.usable and "threads" not in _WARNED:
            _WARNED.add("threads")
            warnings.warn(
                "fresh kernel processes, not forked ones: the template process runs more than "
                "one thread (set OMP_NUM_THREADS=1, as make test does)",
                stacklevel=2,
            )
        if not (template.usable and plain_launch and stdout and stderr):
            return await super().launch_kernel(cmd, **kwargs)
        differences = template.differences(env)
        if differences:
            if tuple(differences) not in _WARNED:
                _WARNED.add(tuple(differences))
                warnings.warn(
                    f"a fresh kernel process, not a forked one: {', '.join(differences)} "
                    "differs from the test run's environment",
                    stacklevel=2,
                )
            return await super().launch_kernel(cmd, **kwargs)
        request = {
            "op": "fork",
            "argv": cmd,
            "env": dict(env, JPY_PARENT_PID=str(os.getpid())),  # as jupyter_client's launch sets
            "cwd": str(kwargs.get("cwd") or os.getcwd()),
            "stdout": stdout,
            "stderr": stderr,
        }
        pid = template.ask(request)["pid"]
        self.process = _ForkedKernel(pid, template)
        self.pid = self.pgid = pid
        self.cwd = request["cwd"]
        return self.connection_info


def install() -> bool:
    """Make ``ForkingProvisioner`` this process's default; False where forking is off."""
    if not enabled():
        return False
    _BASE_ENV.update(os.environ)
    from importlib.metadata import EntryPoint

    from jupyter_client.provisioning.factory import KernelProvisionerFactory

    factory = KernelProvisionerFactory.instance()
    factory.provisioners[NAME] = EntryPoint(
        name=NAME, value=f"{__name__}:ForkingProvisioner", group=factory.GROUP_NAME
    )
    factory.default_provisioner_name = NAME
    return True
