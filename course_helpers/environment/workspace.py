"""The learner's work folder, ``work/``: copies of the lessons and exercises that the learner
opens, runs, answers and saves, outside the files git tracks, so the course can be updated
with one command (``make update``) without touching the learner's answers
(docs/learner-journey.md, "Your work and course updates").

A copy's ``language_info`` is the one this Python's kernel reports, so that opening it does not
mark it modified. Each copy remembers the text it was made from
(``metadata.course.copied_from``, a hash of its
cells' types and sources). An update replaces a copy whose text the learner did not change
with the course's new version, keeps a copy the learner changed, and, if the course changed
that notebook too, puts the new version next to it as ``NAME.updated.ipynb``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from course_helpers.errors import CourseError

WORK = "work"
COPIED = ("notebooks", "exercises")  # the folders the learner works in
# what the README and the notebooks link to besides those: linked, not copied
LINKED = ("README.md", "CONTRIBUTING.md", "LICENSE", "docs", "solutions")


def text_hash(nb: dict) -> str:
    """A fingerprint of a notebook's text (cell types and sources), not of outputs."""
    digest = hashlib.sha256()
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        digest.update(json.dumps([cell.get("cell_type"), source]).encode())
    return digest.hexdigest()[:16]


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CourseError(
            f"{path} is not a readable notebook ({type(err).__name__}: {err}). Fix: move it "
            "away (keep what you need from it) and run `make lab` for a fresh copy."
        ) from None


def kernel_language_info() -> dict | None:
    """The ``language_info`` this Python's kernel reports (ipykernel's), which JupyterLab writes
    into a notebook when its kernel starts: a copy that already holds it is not "modified"
    by merely being opened. None where ipykernel cannot be imported."""
    try:
        from ipykernel.ipkernel import IPythonKernel
    except Exception:  # no kernel here: the copy keeps the course's metadata
        return None
    return json.loads(json.dumps(IPythonKernel.language_info))


def _copy(source: Path, target: Path) -> None:
    nb = _read(source)
    metadata = nb.setdefault("metadata", {})
    metadata.setdefault("course", {})["copied_from"] = text_hash(nb)
    language_info = kernel_language_info()
    if language_info:
        metadata["language_info"] = language_info
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def fill(root: Path) -> list[str]:
    """Copy every lesson and exercise notebook that ``work/`` lacks; link the rest. Returns
    the copies made (paths relative to ``root``). Never overwrites a learner's file."""
    work = root / WORK
    made = []
    for folder in COPIED:
        for source in sorted((root / folder).glob("*.ipynb")):
            target = work / folder / source.name
            if not target.exists():
                _copy(source, target)
                made.append(str(target.relative_to(root)))
    for name in LINKED:
        link = work / name
        if (root / name).exists() and not link.exists() and not link.is_symlink():
            link.symlink_to(Path("..") / name, target_is_directory=(root / name).is_dir())
    return made


def refresh(root: Path) -> list[str]:
    """After the course changed: bring each copy up to date unless the learner changed its
    text; returns one line per notebook that changed."""
    work = root / WORK
    report = []
    for folder in COPIED:
        for source in sorted((root / folder).glob("*.ipynb")):
            target = work / folder / source.name
            rel = f"{WORK}/{folder}/{source.name}"
            if not target.exists():
                _copy(source, target)
                report.append(f"new:      {rel}")
                continue
            course, mine = _read(source), _read(target)
            base = mine.get("metadata", {}).get("course", {}).get("copied_from")
            if text_hash(course) == base:
                continue  # the course did not change this notebook
            if text_hash(mine) == base:  # the learner only ran it: take the new version
                _copy(source, target)
                report.append(f"updated:  {rel}")
            else:
                side = target.with_name(source.stem + ".updated.ipynb")
                if side.exists() and text_hash(_read(side)) == text_hash(course):
                    continue  # said at an earlier update, and still true
                _copy(source, side)
                report.append(
                    f"kept:     {rel} (you changed it; the course's new version is "
                    f"{side.relative_to(root)})"
                )
    return report


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def update(root: Path) -> list[str]:
    """``make update``: pull the course (fast-forward only), then refresh ``work/``."""
    if _git(root, "rev-parse", "--is-inside-work-tree").returncode != 0:
        raise CourseError(
            f"{root} is not a git checkout, so there is nothing to pull. Fix: run this in the "
            "folder you cloned the course into (or download the new version by hand)."
        )
    fill(root)  # a learner who never ran `make lab` since the last update
    changed = _git(root, "status", "--porcelain", "--untracked-files=no").stdout.splitlines()
    if changed:
        files = "\n  ".join(line[3:] for line in changed)
        raise CourseError(
            "files the course tracks were changed here, so the update would not apply cleanly:"
            f"\n  {files}\nYour own work belongs in {WORK}/ (make lab opens it). Fix: copy "
            f"anything you want to keep from those files into {WORK}/, then run "
            "`git checkout -- .` and `make update` again."
        )
    pulled = _git(root, "pull", "--ff-only")
    if pulled.returncode != 0:
        raise CourseError(
            f"`git pull --ff-only` failed:\n{pulled.stderr.strip()}\nFix: check your network "
            "and that you made no commits of your own on this branch (`git status`)."
        )
    return [pulled.stdout.strip().splitlines()[-1] if pulled.stdout.strip() else ""] + refresh(root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_helpers workspace",
        description=f"Fill the learner's work folder ({WORK}/), or update the course into it.",
    )
    parser.add_argument("--update", action="store_true", help="git pull, then refresh work/")
    parser.add_argument("--root", default=os.getcwd(), help="the course checkout (default: .)")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    if not (root / "notebooks").is_dir():
        print(f"{root} is not the course's folder (no notebooks/): run this from the checkout.")
        return 2
    try:
        lines = update(root) if args.update else fill(root)
    except CourseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    for line in lines:
        if line:
            print(line)
    return 0
