"""Finish installing the course where a notebook's setup cell put it (Colab, a fresh kernel).

Outside a checkout, the first code cell of every notebook (written by the build,
``course_helpers/authoring/colab.py``) runs ``pip install --no-deps`` on the course's
repository, so pip cannot replace the torch, numpy or ipywidgets the runtime ships, and then
calls :func:`finish_install`. That adds only the course's dependencies that are missing, with
every installed package pinned to the version it has, and says what it did in one line.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "course-helpers"
# what the runtime ships and the course must leave as it is (reported after the install)
KEPT = ("torch", "numpy", "ipywidgets")
# needed to run a front end, never imported in a kernel, and large: not installed here
FRONT_END_ONLY = {"jupyterlab"}
# a version pip accepts in a constraint (PEP 440); anything else is left unpinned
_VERSION = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9.]+)?$", re.I)


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _name(requirement: str) -> str:
    """The normalised package name of a requirement such as ``torch>=2.11,<2.15``."""
    return _key(re.split(r"[<>=!~ (\[;]", requirement.strip(), maxsplit=1)[0])


def _installed() -> dict[str, str]:
    """Every installed distribution (normalised name -> version)."""
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(_key(name), dist.version)
    return found


def missing_requirements(requires: list[str], installed: dict[str, str]) -> list[str]:
    """The requirement strings of ``requires`` (a distribution's Requires-Dist) whose package
    is not installed, leaving out extras and front-end-only packages."""
    missing = []
    for line in requires:
        requirement, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        name = _name(requirement)
        if name not in installed and name not in FRONT_END_ONLY:
            missing.append(requirement.strip())
    return missing


def pins(installed: dict[str, str]) -> str:
    """A pip constraints file holding every installed package at its installed version."""
    lines = [
        f"{name}=={version}"
        for name, version in sorted(installed.items())
        if name != DISTRIBUTION and _VERSION.match(version)
    ]
    return "\n".join(lines) + "\n"


def finish_install(source: str) -> str:
    """Install the course's missing dependencies without changing an installed package;
    print and return one line saying what was installed from ``source`` and what was kept."""
    from course_helpers.errors import CourseError

    before = _installed()
    missing = missing_requirements(metadata.requires(DISTRIBUTION) or [], before)
    if missing:
        with tempfile.TemporaryDirectory() as folder:
            constraints = Path(folder) / "installed.txt"
            constraints.write_text(pins(before))
            command = [sys.executable, "-m", "pip", "install", "--quiet", "-c", str(constraints)]
            done = subprocess.run(command + missing, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(pip printed nothing)"])[-1]
            raise CourseError(
                f"the course is installed, but pip could not add {', '.join(missing)}: {last} "
                f"Install them yourself (`pip install {' '.join(missing)}`), then restart "
                "the kernel and run this cell again."
            )
    after = _installed()
    added = [f"{_name(r)} {after.get(_name(r), '?')}" for r in missing]
    kept = [f"{name} {before[name]}" for name in KEPT if before.get(name) == after.get(name)]
    changed = [name for name in KEPT if name in before and before[name] != after.get(name)]
    line = (
        f"Set up the course for this kernel: installed {DISTRIBUTION} "
        f"{after.get(DISTRIBUTION, '?')} from {source}"
        + (f", and {', '.join(added)}" if added else "")
        + (f"; kept {', '.join(kept)} as they were." if kept else ".")
        + (f" Changed: {', '.join(changed)}." if changed else "")
    )
    print(line)
    return line
