"""A throwaway JupyterLab server for the browser tests.

It serves a *copy* of the course (so autosave never touches the repository), with its own
settings, config and runtime folders (no news pop-up, no token written next to the repo),
on a free loopback port, and exposes ``window.jupyterapp`` so tests can drive commands, in
JupyterLab (``url``) and, where the ``notebook`` package is installed, in Notebook 7
(``notebook_url``: the same server serves both).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSE_DIRS = ("notebooks", "exercises", "solutions")
# Debian's chromium-headless-shell where it is installed (.ci/run installs it), else the full
# chromium: the browser suite passed on both, and the headless shell used 381 s of CPU for it
# against 453 s (docs/benchmarks.md, "Chromium's headless shell"). COURSE_CHROMIUM names another.
CHROMIUMS = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")


def chromium_path(environ=os.environ, candidates=CHROMIUMS) -> str:
    """``COURSE_CHROMIUM`` where set, else the first of ``candidates`` that can run, else the
    last (the skip message names it)."""
    if environ.get("COURSE_CHROMIUM"):
        return environ["COURSE_CHROMIUM"]
    return next((c for c in candidates if os.access(c, os.X_OK)), candidates[-1])


CHROMIUM = chromium_path()
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = ROOT / "build" / "screenshots"
# Notebook 7 exposes window.jupyterapp too when asked (its tests drive commands the same way)
_NOTEBOOK_FLAGS = (
    ["--JupyterNotebookApp.expose_app_in_browser=True"]
    if importlib.util.find_spec("notebook")
    else []
)


class _PortTaken(Exception):
    """The server's port was taken between asking for it and binding it."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(
    settings_dir: Path, autosave_interval: int | None = None, make_lab: bool = False
) -> None:
    # JupyterLab 4: no "news" toast, no update check, no autosave surprises (unless a test asks
    # for autosave: then every `autosave_interval` seconds instead of JupyterLab's 120).
    # A server started with `make lab`'s command gets no news settings here: the course's own
    # .jupyter/ must switch the pop-up off, as it does for a learner (test_browser.py checks).
    autosave = {"autosave": False}
    if autosave_interval:
        autosave = {"autosave": True, "autosaveInterval": autosave_interval}
    overrides = {
        "@jupyterlab/docmanager-extension:plugin": autosave,
        # Keep every cell in the page: with windowing, cells far below the viewport are not
        # rendered, and "every widget rendered" could not be checked.
        "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    }
    if not make_lab:
        overrides["@jupyterlab/apputils-extension:notification"] = {
            "fetchNews": "false",
            "checkForUpdates": False,
        }
    for plugin, values in overrides.items():
        package, _, name = plugin.partition(":")
        path = settings_dir / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _fork_kernels_in(config_dir: Path) -> None:
    """Kernels this server starts are forked from a template that imported torch once
    (course_helpers.testing.forked_kernels), as nbval's are; `make lab` itself is left alone."""
    from course_helpers.testing import forked_kernels

    if forked_kernels.enabled():
        config_dir.mkdir(parents=True, exist_ok=True)
        (config_dir / "jupyter_server_config.py").write_text(
            "from course_helpers.testing import forked_kernels\nforked_kernels.install()\n"
        )


def make_lab_command(root: Path = ROOT, make_args: tuple[str, ...] = ()) -> list[str]:
    """The command `make lab` runs to start JupyterLab, as `make -n lab` prints it."""
    dry_run = subprocess.run(
        ["make", "-n", "-s", *make_args, "lab"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [line for line in dry_run.splitlines() if re.search(r"jupyter\S* lab\b", line)]
    if len(lines) != 1:
        raise RuntimeError(f"`make -n lab` should run JupyterLab once, it prints:\n{dry_run}")
    return shlex.split(lines[0])


def prepare_like_make_lab(root: Path = ROOT, make_args: tuple[str, ...] = ()) -> None:
    """Run what `make lab` runs before JupyterLab to fill the learner's work/ folder (its
    `course_helpers workspace` line, read from `make -n lab`)."""
    dry_run = subprocess.run(
        ["make", "-n", "-s", *make_args, "lab"], cwd=root, capture_output=True, text=True
    ).stdout
    lines = [line for line in dry_run.splitlines() if "course_helpers workspace" in line]
    if len(lines) != 1:
        raise RuntimeError(f"`make -n lab` should fill work/ once, it prints:\n{dry_run}")
    subprocess.run(lines[0], shell=True, cwd=root, check=True, capture_output=True)


class LabServer:
    """``make_lab=True``: the very command of ``make lab`` (``make_args`` added to make's),
    serving the checkout ``source`` itself (the repository unless told: autosave off, so
    nothing is written there but the work/ folder `make lab` fills, which git ignores);
    otherwise a copy of the course.
    ``autosave_interval``: JupyterLab's autosave on, every that many seconds."""

    def __init__(
        self,
        workdir: Path,
        source: Path = ROOT,
        make_lab: bool = False,
        autosave_interval: int | None = None,
        make_args: tuple[str, ...] = (),
    ):
        self.source = source
        self.workdir = workdir
        self.make_lab = make_lab
        self.autosave_interval = autosave_interval
        self.make_args = make_args
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.process: subprocess.Popen | None = None
        self.log = workdir / "jupyterlab.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, relative: str) -> str:
        # ?reset: start from an empty workspace, so tabs from earlier tests are not restored
        return f"{self.base_url}/lab/tree/{relative}?reset&token={self.token}"

    def notebook_url(self, relative: str) -> str:
        """``relative`` opened in Notebook 7 (the ``notebook`` package's front end)."""
        return f"{self.base_url}/notebooks/{relative}?token={self.token}"

    def start(self, timeout: float = 90) -> None:
        course = self.workdir / "course"
        if not self.make_lab:
            for folder in COURSE_DIRS:
                shutil.copytree(self.source / folder, course / folder)
        home = self.workdir / "home"
        # a HOME that exists: without one, IPython (which the server imports) takes a new
        # temporary folder for its settings each start and leaves it behind
        home.mkdir(parents=True, exist_ok=True)
        settings = self.workdir / "settings"
        _write_settings(settings, self.autosave_interval, self.make_lab)
        env = dict(os.environ)
        env.update(
            HOME=str(home),
            JUPYTER_CONFIG_DIR=str(self.workdir / "config"),
            JUPYTER_RUNTIME_DIR=str(self.workdir / "runtime"),
            JUPYTER_DATA_DIR=str(self.workdir / "data"),
            JUPYTERLAB_SETTINGS_DIR=str(settings),
            JUPYTERLAB_WORKSPACES_DIR=str(self.workdir / "workspaces"),
            COURSE_PROGRESS="off",
            COURSE_STRICT="0",
            OMP_NUM_THREADS="1",
            PYDEVD_DISABLE_FILE_VALIDATION="1",
            # as `make lab` does (see the Makefile): the course's Jupyter settings
            JUPYTER_CONFIG_PATH=str(ROOT / ".jupyter"),
        )
        if self.make_lab:
            prepare_like_make_lab(self.source, self.make_args)
        else:
            _fork_kernels_in(self.workdir / "config")
        # The port was free when free_port() asked; another process can take it before the
        # server binds it. The server would then serve on the next port while this one
        # waited on the asked one; with port_retries=0 it exits ("The port ... is already in
        # use") and starts again here on a port asked for anew.
        for _attempt in range(3):
            self.process = subprocess.Popen(
                self._command(course), cwd=self.source if self.make_lab else None, env=env,
                stdout=self.log.open("w"), stderr=subprocess.STDOUT,
            )  # fmt: skip
            try:
                self._wait(timeout)
                return
            except _PortTaken:
                self.port = free_port()
        raise RuntimeError(f"JupyterLab found its port taken three times; see {self.log}")

    def _command(self, course: Path) -> list[str]:
        private = [
            "--no-browser", f"--port={self.port}", "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={self.token}", "--allow-root",
            "--LabApp.news_url=None", "--LabApp.expose_app_in_browser=True",
            # no update check from a test server (make lab's own settings are tested)
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *_NOTEBOOK_FLAGS,
        ]  # fmt: skip
        if self.make_lab:
            return make_lab_command(self.source, self.make_args) + private
        return [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
            f"--port={self.port}", "--ServerApp.port_retries=0", "--ip=127.0.0.1",
            f"--ServerApp.token={self.token}",
            f"--ServerApp.root_dir={course}", "--LabApp.expose_app_in_browser=True",
            "--ServerApp.open_browser=False", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *_NOTEBOOK_FLAGS,
        ]  # fmt: skip

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                if "is already in use" in self.log.read_text():
                    raise _PortTaken(self.port)
                raise RuntimeError(
                    f"JupyterLab exited early; see {self.log}:\n{self.log.read_text()}"
                )
            try:
                urllib.request.urlopen(f"{self.base_url}/api/status?token={self.token}", timeout=2)
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"JupyterLab did not start within {timeout} s; see {self.log}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
