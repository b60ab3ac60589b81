"""The setup cell the build puts first in every notebook (course_helpers/authoring/colab.py),
run in real kernels: outside a checkout it installs the course and keeps the runtime's torch,
numpy and ipywidgets; in a checkout it prints nothing.

"Outside a checkout" is built here without touching .venv/: a scratch venv (no pip of its
own) whose one .pth file puts a folder of links to .venv's packages on sys.path, minus the
course itself and minus torchviz (a small dependency the cell must then add, as on Colab).
The repository is a copy of this checkout (COURSE_REPOSITORY, which the cell honours); pip
gets no index, only a folder of wheels, so nothing is fetched: torchviz, and what
pyproject.toml's ``[build-system] requires`` names (setuptools>=77). pip builds the course with
build isolation, as a learner's pip does, so the build uses that setuptools and not whatever
the environment happens to hold (a Python 3.11 venv starts with setuptools 65.5.0, which cannot
build a PEP 639 license expression). The wheels are made from this environment's installed
distributions; the test extra pins a setuptools that satisfies the build (constraints.txt).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

import nbformat
import pytest

from course_helpers.authoring import colab

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(sysconfig.get_paths()["purelib"])
HIDDEN = ("course_helpers", "__editable__", "torchviz")  # what the scratch kernel lacks
KEPT = ("torch", "numpy", "ipywidgets")


def _setup_cell(path: Path) -> str:
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert colab.SETUP_TAG in cells[0].metadata.get("tags", []), f"{path.name}: no setup cell"
    return cells[0].source


def _wheel_of_installed(dist_name: str, folder: Path) -> Path:
    """A wheel built from an installed pure-Python distribution's files (its RECORD)."""
    dist = metadata.distribution(dist_name)
    wheel = folder / f"{dist_name}-{dist.version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in dist.files:
            if "__pycache__" in file.parts or file.name in ("INSTALLER", "REQUESTED"):
                continue
            archive.write(file.locate(), file.as_posix())
    return wheel


def _wheels_of_build_requirements(folder: Path) -> list[Path]:
    """Wheels of what pyproject.toml's build needs, made from this environment's installed
    distributions (a learner's pip downloads them into the isolated build environment)."""
    import tomllib
    from packaging.requirements import Requirement

    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    wheels = []
    for text in build:
        requirement = Requirement(text)
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            installed = None
        assert installed and requirement.specifier.contains(installed, prereleases=True), (
            f"pyproject.toml's build needs {text}; this environment has {requirement.name} "
            f"{installed or '(none)'}. Install the test extra with the lock: "
            "pip install -c requirements/constraints.txt -e '.[test]' (it pins one that fits)"
        )
        wheels.append(_wheel_of_installed(requirement.name, folder))
    return wheels


def _copy_of_checkout(target: Path) -> None:
    """The repository as this checkout has it: tracked and new files, not ignored ones."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(source.read_bytes())


class _Kernel:
    def __init__(self, python: Path, cwd: Path, env: dict[str, str], spec_dir: Path):
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager

        (spec_dir / "scratch").mkdir(parents=True)
        argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec_dir / "scratch" / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": argv,
                    "display_name": "scratch",
                    "language": "python",
                    # a fresh process: the test run's forking provisioner would fork it from
                    # .venv's python (both venvs' pythons resolve to the same interpreter)
                    "metadata": {"kernel_provisioner": {"provisioner_name": "local-provisioner"}},
                }
            )
        )
        specs = KernelSpecManager(kernel_dirs=[str(spec_dir)])
        self.km = KernelManager(kernel_name="scratch", kernel_spec_manager=specs)
        self.km.start_kernel(cwd=str(cwd), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code: str) -> tuple[str, list[dict]]:
        """Printed text, and the error/other outputs, of running ``code``."""
        text, others = [], []

        def hook(msg):
            kind = msg["msg_type"]
            if kind == "stream":
                text.append(msg["content"]["text"])
            elif kind in ("error", "display_data", "execute_result"):
                others.append(msg["content"])

        self.kc.execute_interactive(code, timeout=300, output_hook=hook)
        return "".join(text), others

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def test_in_a_checkout_the_setup_cell_prints_nothing(tmp_path):
    kernel = _Kernel(Path(sys.executable), ROOT / "notebooks", dict(os.environ), tmp_path)
    try:
        for path in (ROOT / "notebooks" / "03_shapes_and_views.ipynb",):
            printed, others = kernel.run(_setup_cell(path))
            assert (printed, others) == ("", []), (printed, others)
    finally:
        kernel.close()


@pytest.fixture
def outside(tmp_path):
    """A python with .venv's packages but neither the course nor torchviz importable."""
    links = tmp_path / "links"
    links.mkdir()
    for entry in SITE.iterdir():
        if not entry.name.startswith(HIDDEN) and entry.suffix != ".pth":
            (links / entry.name).symlink_to(entry)
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    scratch_site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (scratch_site / "links.pth").write_text(f"{links}\n")
    repository = tmp_path / "repository"
    _copy_of_checkout(repository)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel_of_installed("torchviz", wheels)
    _wheels_of_build_requirements(wheels)
    # pip as a learner's pip: none of this machine's pip settings (config files, PIP_*), so
    # the build is isolated and takes setuptools from the wheels folder only
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("PIP_")
    }
    env.update(
        COURSE_REPOSITORY=str(repository),
        COURSE_PROGRESS="off",
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_CACHE_DIR=str(tmp_path / "pip-cache"),
    )
    work = tmp_path / "work"
    work.mkdir()
    return python, scratch_site, work, env, tmp_path / "kernels"


def test_outside_a_checkout_the_setup_cell_installs_the_course_and_keeps_the_runtime(outside):
    python, scratch_site, work, env, specs = outside
    site_before = sorted(p.name for p in SITE.iterdir())
    kernel = _Kernel(python, work, env, specs)
    try:
        probe = "import importlib.util as u; print(u.find_spec('course_helpers'))"
        assert kernel.run(probe)[0].strip() == "None", "the course is importable already"
        versions = "from importlib.metadata import version as v; print({})".format(
            ", ".join(f"v({name!r})" for name in KEPT)
        )
        before = kernel.run(versions)[0]

        printed, others = kernel.run(_setup_cell(ROOT / "exercises" / "03_shapes_and_views.ipynb"))

        assert others == [], others
        lines = printed.strip().splitlines()
        assert 1 <= len(lines) <= 2, printed
        assert "installed course-helpers 0.1.0 from " + env["COURSE_REPOSITORY"] in printed
        assert "and torchviz 0.0.3" in printed
        for name, version in zip(KEPT, before.split(), strict=True):
            assert f"{name} {version}" in printed, (name, printed)
        assert kernel.run(versions)[0] == before
        where = "import course_helpers; print(course_helpers.__file__)"
        assert kernel.run(where)[0].startswith(str(scratch_site / "course_helpers"))
        check = 'from course_helpers import check\ncheck("03.column_grid", ...)'
        assert "Not attempted" in str(kernel.run(check)), "the course does not work there"
        # torch, numpy and ipywidgets were not installed into the scratch venv
        installed = {p.name.split("-")[0].lower() for p in scratch_site.iterdir()}
        assert installed.isdisjoint(KEPT), installed
        assert "torchviz" in installed
        # a second run of the cell, now that the course imports, prints nothing
        assert kernel.run(_setup_cell(ROOT / "notebooks" / "01_tensors.ipynb")) == ("", [])
    finally:
        kernel.close()
    assert sorted(p.name for p in SITE.iterdir()) == site_before, ".venv/ was changed"
