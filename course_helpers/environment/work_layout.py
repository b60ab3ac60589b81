"""Where each course notebook lives in the learner's work folder, and the links that lead there.

A lesson, its exercises, its solutions and the course's new version of a changed copy must
never look alike, in a tab or in the file browser, which shows about 14 characters of a name
at its default width (issue 36, item 3). So the copies in ``work/`` are renamed, the part that
tells them apart right after the lesson's number (the folders stay those of the checkout):

    notebooks/05_autograd_graphs.ipynb  ->  work/notebooks/05_lesson_autograd_graphs.ipynb
    exercises/05_autograd_graphs.ipynb  ->  work/exercises/05_exercises_autograd_graphs.ipynb
    solutions/05_autograd_graphs.ipynb  ->  work/solutions/05_solutions_autograd_graphs.ipynb
    the course's new version beside a copy the learner changed: 05_new_lesson_autograd_graphs...

The tracked files keep their names (the grader, the build and the published links use them);
every relative link in a copy, and in ``work/README.md`` (a copy of the README), is rewritten
to the copies, so lesson -> exercises, lesson 00 -> its siblings and the course map open the
learner's copies.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

WORK = "work"
COPIED = ("notebooks", "exercises", "solutions")  # every notebook here gets a copy in work/
ROLE = {"notebooks": "lesson", "exercises": "exercises", "solutions": "solutions"}
LINKED = ("CONTRIBUTING.md", "LICENSE", "docs")  # linked into work/, not copied
README = "README.md"  # copied into work/ with its links rewritten
# a Markdown link's target, or an HTML link's
LINK = re.compile(r"""(\]\(|href=")([^)"\s]+)""")


def work_name(folder: str, stem: str, new: bool = False) -> str:
    """The copy's file name: the lesson's number, then what it is, then the topic."""
    role = ("new_" if new else "") + ROLE[folder]
    number, _, topic = stem.partition("_")
    if number.isdigit() and topic:
        return f"{number}_{role}_{topic}.ipynb"
    return f"{role}_{stem}.ipynb"


def work_path(folder: str, stem: str, new: bool = False) -> str:
    """The copy's path, relative to the checkout."""
    return f"{WORK}/{folder}/{work_name(folder, stem, new)}"


def old_names(stem: str) -> tuple[str, str]:
    """The names a copy and the course's new version beside it had before the renaming
    (the folders were the same): moved to the new names by ``make lab``."""
    return f"{stem}.ipynb", f"{stem}.updated.ipynb"


def course_notebooks(root: Path) -> list[tuple[str, str]]:
    """(folder, stem) of every notebook the course has a copy of in work/."""
    return [
        (folder, source.stem)
        for folder in COPIED
        for source in sorted((root / folder).glob("*.ipynb"))
    ]


def link_map(root: Path) -> dict[str, str]:
    """Tracked notebook -> its copy, both relative to the checkout."""
    return {f"{f}/{stem}.ipynb": work_path(f, stem) for f, stem in course_notebooks(root)}


def rewrite_links(text: str, source: str, target: str, links: dict[str, str]) -> str:
    """The relative links of ``text``, written in the tracked file ``source``, for its copy
    at ``target`` (paths relative to the checkout): a link to a course notebook leads to that
    notebook's copy, a link to README.md or a linked folder to work/'s, any other file of the
    checkout to the checkout's own."""

    def moved(match: re.Match) -> str:
        link = match.group(2)
        if "://" in link or link.startswith(("#", "/", "mailto:")):
            return match.group(0)
        path, mark, rest = _split(link)
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
        if resolved.startswith("..") or not path:
            return match.group(0)
        if resolved in links:
            resolved = links[resolved]
        elif resolved.split("/")[0] in (*LINKED, README):
            resolved = f"{WORK}/{resolved}"
        new = posixpath.relpath(resolved, posixpath.dirname(target) or ".")
        return match.group(1) + new + mark + rest

    return LINK.sub(moved, text)


def _split(link: str) -> tuple[str, str, str]:
    """``path#fragment`` (or ``path?query``) -> (path, mark, rest)."""
    found = re.search(r"[#?]", link)
    if not found:
        return link, "", ""
    return link[: found.start()], link[found.start()], link[found.start() + 1 :]


def rewrite_notebook_links(nb: dict, source: str, target: str, links: dict[str, str]) -> None:
    """Rewrite, in place, the links of ``nb``'s Markdown cells (see ``rewrite_links``)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        text = cell.get("source", "")
        if isinstance(text, list):
            cell["source"] = [rewrite_links(line, source, target, links) for line in text]
        else:
            cell["source"] = rewrite_links(text, source, target, links)


README_NOTE = (
    "<!-- work/README.md: a copy of the course's README.md whose links open your copies in "
    "work/. make lab and make update write it again; keep your own notes elsewhere. -->\n"
)


def readme_copy(root: Path, links: dict[str, str]) -> str:
    """``work/README.md``: the README, its links leading to the copies."""
    text = (root / README).read_text(encoding="utf-8")
    return README_NOTE + rewrite_links(text, README, f"{WORK}/{README}", links)
