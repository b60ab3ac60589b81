"""``python -m course_helpers doctor``: an environment report to paste into a bug report."""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import platform
import shutil
import sys
from dataclasses import dataclass

# distribution name -> (needed by the course?, fix when missing)
PACKAGES = {
    "torch": (True, "pip install 'torch>=2.11,<2.15' (or run `make lab`)"),
    "numpy": (True, "pip install numpy"),
    "matplotlib": (True, "pip install matplotlib"),
    "ipywidgets": (True, "pip install 'ipywidgets>=7.7,<9'"),
    "jupyterlab": (True, "pip install jupyterlab"),
    "torchviz": (True, "pip install torchviz"),
    "graphviz": (True, "pip install graphviz (the Python package torchviz draws with)"),
    "platformdirs": (True, "pip install platformdirs (where your progress is stored)"),
    "psutil": (True, "pip install psutil (lesson 09 measures memory with it)"),
    "ipykernel": (True, "pip install ipykernel (the kernel that runs the notebooks)"),
    "nbformat": (True, "pip install nbformat"),
    "nbclient": (True, "pip install nbclient"),
    "nbval": (False, "pip install nbval (only needed to run the tests)"),
}


@dataclass
class Finding:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True

    def line(self) -> str:
        status = "OK     " if self.ok else ("PROBLEM" if self.required else "NOTE   ")
        text = f"[{status}] {self.name:<22} {self.detail}"
        if not self.ok and self.fix:
            text += f"\n          fix: {self.fix}"
        return text


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _widget_extension() -> Finding:
    # ipywidgets (7.7 as on Colab, or 8) gets its JupyterLab extension from the
    # jupyterlab_widgets package, installed as a prebuilt extension under
    # <prefix>/share/jupyter/labextensions. JupyterLab 4 needs its 3.x series, which renders
    # the widgets of ipywidgets 7 and 8 kernels; ipywidgets 7 asks only for >=1.0.
    from pathlib import Path

    version = _version("jupyterlab_widgets")
    candidates = [
        Path(p) / "share/jupyter/labextensions/@jupyter-widgets/jupyterlab-manager"
        for p in dict.fromkeys([sys.prefix, sys.base_prefix])
    ]
    found = next((c for c in candidates if (c / "package.json").exists()), None)
    wanted = _extension_requirement()
    lab = _version("jupyterlab")
    if version and found and lab and _major(lab) >= 4 and _major(version) < 3:
        return Finding(
            "widget extension",
            False,
            f"jupyterlab_widgets {version} is for JupyterLab 3, this is JupyterLab {lab}",
            "pip install 'jupyterlab_widgets>=3,<4' (it renders ipywidgets 7 and 8), then "
            "restart JupyterLab (until then widgets show 'Error displaying widget')",
        )
    if version and found and wanted and not _satisfies(version, wanted):
        return Finding(
            "widget extension",
            False,
            f"jupyterlab_widgets {version}, but ipywidgets {_version('ipywidgets')} needs "
            f"jupyterlab_widgets{wanted}",
            f"pip install 'jupyterlab_widgets{wanted}', then restart JupyterLab (a mismatch "
            "shows 'Error displaying widget')",
        )
    if version and found:
        return Finding("widget extension", True, f"jupyterlab_widgets {version} (prebuilt, found)")
    return Finding(
        "widget extension",
        False,
        "JupyterLab widget extension not found",
        "pip install 'jupyterlab_widgets>=3,<4' in the environment that runs JupyterLab, "
        "then restart JupyterLab (without it, widgets show 'Error displaying widget')",
    )


def _extension_requirement() -> str:
    """The jupyterlab_widgets version ipywidgets asks for, or "": "~=3.0.17" from
    ipywidgets 8's ``jupyterlab_widgets~=3.0.17``, ">=1.0.0" from 7.7's older form
    ``jupyterlab-widgets (>=1.0.0) ; python_version>="3.6"``."""
    import re

    try:
        requires = metadata.requires("ipywidgets") or []
    except metadata.PackageNotFoundError:
        return ""
    for line in requires:
        found = re.match(r"\s*jupyterlab[-_.]widgets\s*\(?([^;()]*)\)?\s*(;|$)", line, re.I)
        if found:
            return found.group(1).replace(" ", "")
    return ""


def _major(version: str) -> int:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def _satisfies(version: str, spec: str) -> bool:
    try:
        from packaging.specifiers import SpecifierSet

        return SpecifierSet(spec).contains(version, prereleases=True)
    except Exception:  # packaging missing or an unreadable spec
        return True  # cannot tell: do not report a problem we cannot name


def _ipywidgets_imports() -> Finding:
    """Import ipywidgets in a fresh interpreter: installed metadata alone can hide a broken
    install (the course's widgets then fall back to text)."""
    import subprocess

    try:
        done = subprocess.run(
            [sys.executable, "-c", "import ipywidgets"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as err:
        return Finding("ipywidgets import", False, f"could not be tried: {err}", required=False)
    if done.returncode == 0:
        return Finding("ipywidgets import", True, "imports cleanly")
    lines = done.stderr.strip().splitlines()
    return Finding(
        "ipywidgets import",
        False,
        lines[-1] if lines else f"exit code {done.returncode}",
        "pip install --force-reinstall 'ipywidgets>=7.7,<9' (until then checks and hints show as "
        "text, without buttons)",
    )


def findings() -> list[Finding]:
    """Every check the report makes, in report order."""
    result = [
        Finding(
            "python",
            sys.version_info >= (3, 11),
            platform.python_version(),
            "use Python 3.11 or newer",
        )
    ]
    colab = _on_colab()
    for dist, (required, fix) in PACKAGES.items():
        version = _version(dist)
        if colab and dist == "jupyterlab":
            required = False  # Colab runs its own front end
        if dist == "torch" and version:
            # torch's own string names the build (2.14.1+cu130, 2.13.0+cpu); the metadata of
            # PyPI's CUDA wheels says only 2.14.1
            import torch

            version = torch.__version__
        result.append(Finding(dist, version is not None, version or "not installed", fix, required))
    if _version("torch"):
        import torch

        from course_helpers.environment.device import available_devices, device_choice
        from course_helpers.errors import CourseError

        cuda = torch.cuda.is_available()
        cuda_detail = (
            f"available: {torch.cuda.get_device_name(0)} (CUDA {torch.version.cuda})"
            if cuda
            else f"not available (torch built with CUDA: {torch.version.cuda or 'no'})"
        )
        result.append(Finding("CUDA", True, cuda_detail, required=False))
        mps = getattr(torch.backends, "mps", None)
        mps_ok = bool(mps is not None and mps.is_available())
        result.append(
            Finding("Apple MPS", True, "available" if mps_ok else "not available", required=False)
        )
        try:
            name, reason = device_choice()
            result.append(Finding("course device", True, f"{name} ({reason})"))
        except CourseError as error:
            result.append(
                Finding(
                    "course device",
                    False,
                    str(error),
                    f"available: {', '.join(available_devices())}",
                )
            )
    from course_helpers.graphs.dot import GRAPHVIZ_ENV, graphviz_dot

    dot = graphviz_dot()
    off = shutil.which("dot") is not None and dot is None
    result.append(
        Finding(
            "graphviz dot",
            dot is not None,
            dot or (f"turned off by {GRAPHVIZ_ENV}" if off else "not found on PATH"),
            "sudo apt-get install graphviz | brew install graphviz | conda install -c conda-forge "
            "graphviz (graph pictures still work without it, in a simpler layout)",
            required=False,
        )
    )
    if _version("ipywidgets"):
        result.append(_ipywidgets_imports())
    result.append(_colab_widgets() if colab else _widget_extension())
    return result


def _on_colab() -> bool:
    """True in a Google Colab runtime (its ``google.colab`` package is there)."""
    import importlib.util

    try:
        return importlib.util.find_spec("google.colab") is not None
    except (ImportError, ValueError):
        return False


def _colab_widgets() -> Finding:
    """On Colab the front end is Colab's own: its default widget manager renders ipywidgets 7
    (the 7.7.1 Colab ships), not 8 (docs/learner-journey.md, "Where it runs")."""
    version = _version("ipywidgets") or ""
    if _major(version) == 7:
        return Finding("widget front end", True, f"Colab's, with ipywidgets {version}")
    return Finding(
        "widget front end",
        False,
        f"Colab's default widget manager renders ipywidgets 7, this has {version or 'none'}",
        "pip install 'ipywidgets>=7.7,<8', then restart the runtime (until then the Hint "
        "buttons, quiz menus and replay slider may not show; their text forms do)",
        required=False,
    )


def report() -> tuple[str, bool]:
    """The report text and whether everything the course needs is present."""
    items = findings()
    header = [
        "Tensors & Autograd course: environment report",
        f"platform: {platform.platform()}",
        f"python executable: {sys.executable}",
        "",
    ]
    ok = all(f.ok for f in items if f.required)
    footer = [
        "",
        "Everything the course needs is present."
        if ok
        else "Something the course needs is missing: see the PROBLEM lines above.",
    ]
    return "\n".join(header + [f.line() for f in items] + footer), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_helpers doctor", description="Print an environment report."
    )
    parser.parse_args(argv)
    text, ok = report()
    print(text)
    return 0 if ok else 1
