"""What the build writes so that a notebook also works outside a checkout (Colab, a fresh
VS Code kernel): an "Open in Colab" link and a setup cell right after each notebook's title,
and the Colab links of the README's course map.

All of it comes from one address, ``[project.urls] Repository`` in pyproject.toml: a fork
changes it there and runs the build. The setup cell installs the course from that
repository's ``main`` branch (or from ``COURSE_REPOSITORY``, any path or address pip accepts)
when ``course_helpers`` cannot be imported; in a checkout it does nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

from course_helpers.errors import CourseError

ROOT = Path(__file__).resolve().parents[2]  # the checkout whose pyproject.toml names it
BRANCH = "main"
LINK_TAG = "course-colab-link"
SETUP_TAG = "course-setup"
COLAB = "https://colab.research.google.com/github/{slug}/blob/{branch}/{path}"
_GITHUB = re.compile(r"^https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?/?$")

SETUP_CELL = """\
# @title Course setup (outside a checkout it installs the course) { display-mode: "form" }
import importlib.util

if importlib.util.find_spec("course_helpers") is None:  # not a checkout: Colab, a new kernel
    import importlib
    import os
    import subprocess
    import sys

    default = "{archive}"
    source = os.environ.get("COURSE_REPOSITORY") or default  # a path also works (tests do)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", source]
    if subprocess.run(pip, check=False).returncode != 0:
        raise RuntimeError(f"could not install the course from {source}: see pip's message")
    importlib.invalidate_caches()
    from course_helpers.environment.install import finish_install

    finish_install(source)  # adds what is missing; torch, numpy, ipywidgets stay as they are"""

LINK_CELL = (
    "[Open in Colab]({url}) · Outside a checkout of the course (Colab, a new VS Code kernel)"
    " the next cell installs it; in a checkout it does nothing."
)


def repository(root: Path | None = None) -> str:
    """The course's repository address, from pyproject.toml's [project.urls] Repository."""
    import tomllib

    urls = tomllib.loads(((root or ROOT) / "pyproject.toml").read_text())["project"].get("urls", {})
    address = urls.get("Repository", "")
    if not _GITHUB.match(address):
        raise CourseError(
            f"pyproject.toml's [project.urls] Repository is {address!r}: the build needs a "
            "GitHub address such as https://github.com/OWNER/REPO (Colab opens notebooks "
            "from GitHub). Set it to your repository, then run the build again."
        )
    return address.rstrip("/").removesuffix(".git")


def colab_url(path: str, root: Path | None = None) -> str:
    """Where Colab opens ``path`` (relative to the repository root) from GitHub."""
    slug = _GITHUB.match(repository(root)).group(1)
    return COLAB.format(slug=slug, branch=BRANCH, path=path)


def archive_url(root: Path | None = None) -> str:
    """What the setup cell installs: the ``main`` branch as a zip (pip needs no git for it)."""
    return f"{repository(root)}/archive/refs/heads/{BRANCH}.zip"


def setup_cell_source(root: Path | None = None) -> str:
    return SETUP_CELL.replace("{archive}", archive_url(root))


def _generated(cell) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return LINK_TAG in tags or SETUP_TAG in tags


def refresh(nb, path: str, root: Path | None = None) -> bool:
    """Put the link and setup cells for ``path`` right after the title cell of ``nb`` (in
    place), replacing older ones; return whether anything changed."""
    import nbformat

    link = nbformat.v4.new_markdown_cell(
        LINK_CELL.format(url=colab_url(path, root)), metadata={"tags": [LINK_TAG]}
    )
    setup = nbformat.v4.new_code_cell(
        setup_cell_source(root),  # folded in JupyterLab (source_hidden), a form in Colab
        metadata={"tags": [SETUP_TAG], "jupyter": {"source_hidden": True}},
    )
    placed = nb.cells[1:3]
    if [(c.cell_type, c.source, _generated(c)) for c in placed] == [
        ("markdown", link.source, True),
        ("code", setup.source, True),
    ] and not any(_generated(c) for c in nb.cells[3:]):
        return False
    others = [c for c in nb.cells if not _generated(c)]
    nb.cells = others[:1] + [link, setup] + others[1:]
    return True


_MAP_LINK = re.compile(r"\]\(((?:notebooks|exercises)/[\w.-]+\.ipynb)\)")
_COLAB_HEADER = "Open in Colab"


def refresh_readme(text: str, root: Path | None = None) -> str:
    """The README with its course map's last column, "Open in Colab", written from the
    lesson and exercise links of each row (the relative links stay, for JupyterLab)."""
    lines = text.split("\n")
    if "## Course map" not in lines:
        return text  # nothing to link
    start = lines.index("## Course map")
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("|"))
    end = next((i for i in range(first, len(lines)) if not lines[i].startswith("|")), len(lines))
    has_column = _cells(lines[first])[-1] == _COLAB_HEADER
    for number in range(first, end):
        cells = _cells(lines[number])[: -1 if has_column else None]
        if number == first:
            extra = _COLAB_HEADER
        elif set("".join(cells)) <= set("-: "):
            extra = "---"
        else:
            paths = _MAP_LINK.findall(" | ".join(cells))
            extra = " · ".join(
                f"[{'lesson' if p.startswith('notebooks/') else 'exercises'}]({colab_url(p, root)})"
                for p in paths
            )
        joined = "|".join(cells + [extra]) if extra == "---" else " | ".join(cells + [extra])
        lines[number] = f"|{joined}|" if extra == "---" else f"| {joined} |"
    return "\n".join(lines)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]
