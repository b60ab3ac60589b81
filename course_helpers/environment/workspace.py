"""The learner's work folder, ``work/``: copies of the lessons, exercises and solutions that
the learner opens, runs, answers and saves, outside the files git tracks, so the course can be
updated with one command (``make update``) without touching the learner's answers
(docs/learner-journey.md, "Your work and course updates").

The copies are named so that a lesson, its exercises, its solutions and a new version never
look alike (``work_layout``); their links lead to each other. A copy's ``language_info`` is the
one this Python's kernel reports, so that opening it does not mark it modified. Each copy
remembers the text it was made from (``metadata.course``). An update replaces a copy whose
text the learner did not change with the course's new version, does the same for a copy
where the learner only typed answers and keeps those answers (``work_merge``), keeps any other
changed copy, and, if the course changed that notebook too, puts the new version next to it.
Nothing is read or written through a link, outside ``work/``, or from anything but a regular
file (``work_files``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

from course_helpers.environment.work_files import (
    check_target,
    read_notebook,
    text_hash,
    write_notebook,
    write_text,
)
from course_helpers.environment.work_layout import (
    LINKED,
    README,
    README_NOTE,
    WORK,
    course_notebooks,
    link_map,
    old_names,
    readme_copy,
    rewrite_notebook_links,
    work_path,
)
from course_helpers.environment.work_merge import find_version, remember, with_answers
from course_helpers.errors import CourseError

COPY_FIX = "move it away (keep what you need from it), then run `make lab` for a fresh copy."
COURSE_FIX = (
    "this is the course's own file: run `git status`, then `git checkout -- FILE` to restore it."
)


def kernel_language_info() -> dict | None:
    """The ``language_info`` this Python's kernel reports (ipykernel's), which JupyterLab writes
    into a notebook when its kernel starts: a copy that already holds it is not "modified"
    by merely being opened. None where ipykernel cannot be imported."""
    try:
        from ipykernel.ipkernel import IPythonKernel
    except Exception:  # no kernel here: the copy keeps the course's metadata
        return None
    return json.loads(json.dumps(IPythonKernel.language_info))


def make_copy(course: dict, folder: str, stem: str, links: dict[str, str]) -> dict:
    """The learner's copy of the course notebook ``folder/stem``: links rewritten to the
    copies, this kernel's ``language_info``, and what later updates compare with."""
    nb = copy.deepcopy(course)
    rewrite_notebook_links(nb, f"{folder}/{stem}.ipynb", work_path(folder, stem), links)
    metadata = nb.setdefault("metadata", {})
    language_info = kernel_language_info()
    if language_info:
        metadata["language_info"] = language_info
    metadata["course"] = {"copied_from": text_hash(course), **remember(nb)}
    return nb


def _work(root: Path) -> Path:
    work = root / WORK
    if work.is_symlink():
        raise CourseError(
            f"{work} is a symbolic link: the course keeps your copies in a real folder there "
            f"(through a link it would write elsewhere). Fix: move {work} away (your copies "
            f"are where it points to), make a folder {work}, move your copies into it, and "
            "run the command again."
        )
    return work


def _course(root: Path, folder: str, stem: str) -> dict:
    return read_notebook(
        root / folder / f"{stem}.ipynb", COURSE_FIX.replace("FILE", f"{folder}/{stem}.ipynb")
    )


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def migrate(root: Path, links: dict[str, str]) -> list[str]:
    """Copies made before the renaming (``work/notebooks/05_autograd_graphs.ipynb``, and the
    ``.updated.ipynb`` beside it) get their new names and links; what they remember is
    completed from the version they were made from (found in git's history) so that answers
    typed into them still travel with updates. Nothing is lost: the new file is written
    before the old one goes."""
    work, report = _work(root), []
    for name, linked in ((README, "../README.md"), ("solutions", "../solutions")):
        path = work / name
        if path.is_symlink() and os.readlink(path) == linked:
            path.unlink()  # made by an earlier version of this command: now copies
    for folder, stem in course_notebooks(root):
        for name, new in zip(old_names(stem), (False, True), strict=True):
            old, target = work / folder / name, root / work_path(folder, stem, new)
            if not os.path.lexists(old):
                continue
            if os.path.lexists(target):
                report.append(f"problem:  {_rel(root, old)} was not renamed: {target} exists")
                continue
            try:
                check_target(work, old)
                nb = read_notebook(old, COPY_FIX)
                recorded = nb.setdefault("metadata", {}).setdefault("course", {})
                made_from = recorded.get("copied_from")
                unchanged = text_hash(nb) == made_from
                rewrite_notebook_links(nb, f"{folder}/{stem}.ipynb", _rel(root, target), links)
                base = find_version(root, f"{folder}/{stem}.ipynb", made_from or "")
                if base is not None:
                    recorded.update(remember(make_copy(base, folder, stem, links)))
                elif unchanged:
                    recorded["text"] = text_hash(nb)
                write_notebook(work, target, nb)
                old.unlink()
            except CourseError as err:
                report.append(f"problem:  {err}")
                continue
            report.append(f"renamed:  {_rel(root, old)} -> {_rel(root, target)}")
    return report


def _links_and_readme(root: Path, links: dict[str, str]) -> list[str]:
    """Link the checkout's docs, CONTRIBUTING.md and LICENSE into work/, and write
    work/README.md (earlier versions linked it, and solutions/: ``migrate`` removes those)."""
    work = _work(root)
    work.mkdir(exist_ok=True)
    for name in LINKED:
        link = work / name
        if (root / name).exists() and not os.path.lexists(link):
            link.symlink_to(Path("..") / name, target_is_directory=(root / name).is_dir())
    readme = work / README
    if not (root / README).is_file():
        return []
    text = readme_copy(root, links)
    if os.path.lexists(readme):
        if readme.is_symlink() or not readme.is_file():
            return [f"problem:  {readme} is not the course's copy of {README}: left as it is"]
        current = readme.read_text(encoding="utf-8", errors="replace")
        if not current.startswith(README_NOTE) or current == text:
            return []  # a file of the learner's own, or up to date
    write_text(work, readme, text)
    return []


def fill(root: Path) -> list[str]:
    """``make lab``: give every course notebook that ``work/`` lacks a copy there (never
    overwriting a file), rename copies made before the renaming, link the rest. Returns one
    line per copy made or renamed, and per problem ("problem: ...")."""
    links = link_map(root)
    work = _work(root)
    report = migrate(root, links)
    for folder, stem in course_notebooks(root):
        target = root / work_path(folder, stem)
        if os.path.lexists(target):
            continue
        try:
            write_notebook(
                work, target, make_copy(_course(root, folder, stem), folder, stem, links)
            )
        except CourseError as err:
            report.append(f"problem:  {err}")
            continue
        report.append(_rel(root, target))
    return report + _links_and_readme(root, links)


def _refresh_one(root: Path, folder: str, stem: str, links: dict[str, str]) -> str | None:
    work = _work(root)
    target = root / work_path(folder, stem)
    course = _course(root, folder, stem)
    fresh = make_copy(course, folder, stem, links)
    if not os.path.lexists(target):
        write_notebook(work, target, fresh)
        return f"new:      {_rel(root, target)}"
    check_target(work, target)
    mine = read_notebook(target, COPY_FIX)
    recorded = mine.get("metadata", {}).get("course", {})
    if text_hash(course) == recorded.get("copied_from"):
        return None  # the course did not change this notebook
    side = root / work_path(folder, stem, new=True)
    if text_hash(mine) == recorded.get("text"):  # the learner only ran it: the new version
        write_notebook(work, target, fresh)
        return f"updated:  {_rel(root, target)}"
    merged = with_answers(mine, fresh)
    if merged is not None:  # only answers typed in: the new version, with those answers
        write_notebook(work, target, merged[0])
        _remove_side_copy(work, side, course)
        return f"updated:  {_rel(root, target)} (your answers kept: {', '.join(merged[1])})"
    if os.path.lexists(side):
        check_target(work, side)
        if text_hash(read_notebook(side, COPY_FIX)) == text_hash(fresh):
            return None  # said at an earlier update, and still true
    write_notebook(work, side, fresh)
    return (
        f"kept:     {_rel(root, target)} (you changed it; the course's new version is "
        f"{_rel(root, side)})"
    )


def _remove_side_copy(work: Path, side: Path, course: dict) -> None:
    """The new version written beside a copy at an earlier update, now merged into it: gone,
    unless the learner changed it."""
    if not os.path.lexists(side):
        return
    check_target(work, side)
    nb = read_notebook(side, COPY_FIX)
    if text_hash(nb) == nb.get("metadata", {}).get("course", {}).get("text"):
        side.unlink()


def refresh(root: Path) -> list[str]:
    """After the course changed: bring each copy up to date unless the learner changed more
    than its answers; returns one line per notebook that changed, and per problem ("problem:
    ..."; the other notebooks are still refreshed)."""
    links = link_map(root)
    report = migrate(root, links)
    for folder, stem in course_notebooks(root):
        try:
            line = _refresh_one(root, folder, stem, links)
        except CourseError as err:
            line = f"problem:  {err}"
        if line:
            report.append(line)
    return report + _links_and_readme(root, links)


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def pull(root: Path) -> str:
    """``make update``'s first half: pull the course (fast-forward only). Returns git's
    summary line."""
    if _git(root, "rev-parse", "--is-inside-work-tree").returncode != 0:
        raise CourseError(
            f"{root} is not a git checkout, so there is nothing to pull. Fix: run this in the "
            "folder you cloned the course into (or download the new version by hand)."
        )
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
    return pulled.stdout.strip().splitlines()[-1] if pulled.stdout.strip() else ""


def _print(lines: list[str]) -> int:
    for line in lines:
        print(line, file=sys.stderr if line.startswith("problem:") else sys.stdout)
    return 1 if any(line.startswith("problem:") for line in lines) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_helpers workspace",
        description=f"Fill the learner's work folder ({WORK}/), or update the course into it.",
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--update", action="store_true", help="git pull, then --refresh")
    what.add_argument(
        "--refresh", action="store_true", help=f"bring {WORK}/ up to date with the checkout"
    )
    parser.add_argument("--root", default=os.getcwd(), help="the course checkout (default: .)")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    if not (root / "notebooks").is_dir():
        print(f"{root} is not the course's folder (no notebooks/): run this from the checkout.")
        return 2
    try:
        if args.update:
            _work(root)
            print(pull(root))
            # the refresh runs in the code just pulled (a new version may lay work/ out anew)
            refresh_ = [sys.executable, "-m", "course_helpers", "workspace", "--refresh"]
            return subprocess.run([*refresh_, "--root", str(root)], check=False).returncode
        return _print(refresh(root) if args.refresh else fill(root))
    except CourseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
