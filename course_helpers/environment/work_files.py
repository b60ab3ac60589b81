"""Reading and writing notebooks in the learner's work folder without trusting what is there
(issue 37, item 12): only regular files are read (a FIFO would block the update forever),
nothing is read or written through a symbolic link or outside ``work/``, and a file that is
not a notebook gets a message naming the problem and the fix, never a traceback.

Also the fingerprint of a notebook's text (``text_hash``) that the update rules compare.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path

from course_helpers.errors import CourseError

MAX_BYTES = 64 * 2**20  # far above any course notebook (the largest is under 2 MB)
# an exercise or a check-yourself question: the cell that calls check("ID", ...)
CHECK_CALL = re.compile(r"""\bcheck\(\s*["']([\w.]+)["']""")


def source_of(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def answer_id(cell: dict) -> str | None:
    """The exercise id a code cell answers (its ``check("ID", ...)`` call), else None."""
    if cell.get("cell_type") != "code":
        return None
    found = CHECK_CALL.search(source_of(cell))
    return found.group(1) if found else None


def text_hash(nb: dict, answers_as_ids: bool = False) -> str:
    """A fingerprint of a notebook's text (cell types and sources), not of its outputs.
    ``answers_as_ids``: a cell that calls ``check("ID", ...)`` counts as its id only (where no
    other cell calls that id), so two notebooks that differ only in such answer cells get the
    same fingerprint."""
    cells = nb.get("cells", [])
    ids = [answer_id(cell) if answers_as_ids else None for cell in cells]
    digest = hashlib.sha256()
    for cell, found in zip(cells, ids, strict=True):
        once = found is not None and ids.count(found) == 1
        text = ["answer", found] if once else [cell.get("cell_type"), source_of(cell)]
        digest.update(json.dumps(text).encode())
    return digest.hexdigest()[:16]


def notebook_problem(nb) -> str | None:
    """What keeps ``nb`` (parsed JSON) from being a notebook the update can work on."""
    if not isinstance(nb, dict):
        return f"it holds a JSON {type(nb).__name__}, not a notebook object"
    if not isinstance(nb.get("cells", []), list):
        return "its 'cells' is not a list"
    if not isinstance(nb.get("metadata", {}), dict):
        return "its 'metadata' is not an object"
    course = nb.get("metadata", {}).get("course", {})
    if not isinstance(course, dict) or not all(isinstance(v, (str, dict)) for v in course.values()):
        return "its 'metadata.course' is not what the course writes there"
    for number, cell in enumerate(nb.get("cells", [])):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            return f"cell {number} is not a cell (no cell_type)"
        source = cell.get("source", "")
        lines = source if isinstance(source, list) else [source]
        if not all(isinstance(line, str) for line in lines):
            return f"cell {number}'s source is not text"
        if not isinstance(cell.get("metadata", {}), dict):
            return f"cell {number}'s metadata is not an object"
        if not isinstance(cell.get("outputs", []), list):
            return f"cell {number}'s outputs are not a list"
    return None


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def read_notebook(path: Path, fix: str) -> dict:
    """The notebook at ``path``: a regular file (not a link, a FIFO, a device or a folder),
    at most MAX_BYTES, JSON shaped like a notebook. Otherwise a CourseError that names the
    problem and ends with ``fix``."""
    try:
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode):
            raise CourseError(f"{path} is {_kind(mode)}, not a notebook file. Fix: {fix}")
        # O_NONBLOCK: should it become a FIFO after the check, opening it does not wait
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError as err:
        raise CourseError(f"{path} cannot be read ({err.strerror}). Fix: {fix}") from None
    if len(data) > MAX_BYTES:
        raise CourseError(f"{path} is larger than {MAX_BYTES // 2**20} MB. Fix: {fix}")
    try:
        nb = json.loads(data.decode("utf-8"))
    except ValueError as err:
        raise CourseError(f"{path} is not a readable notebook ({err}). Fix: {fix}") from None
    problem = notebook_problem(nb)
    if problem:
        raise CourseError(f"{path} is not a readable notebook ({problem}). Fix: {fix}")
    return nb


def check_target(work: Path, path: Path) -> None:
    """``path`` may be written: inside ``work``, no symbolic link on the way from ``work``
    down (``work`` included), and not a link or anything but a regular file itself."""
    try:
        parts = path.relative_to(work).parts
    except ValueError:
        raise CourseError(f"{path} is outside {work}: nothing is written there.") from None
    where = work
    for part in ("", *parts):
        where = where / part if part else where
        if where.is_symlink():
            raise CourseError(
                f"{where} is a symbolic link: the course writes its copies only into real "
                f"folders and files inside {work} (through a link it would write elsewhere). "
                f"Fix: move {where} away (keep what you need from what it points to), then "
                "run the command again."
            )
        if where.exists() and where != path and not where.is_dir():
            raise CourseError(f"{where} is not a folder. Fix: move it away, then run again.")
    if path.exists() and not path.is_file():
        mode = os.lstat(path).st_mode
        raise CourseError(
            f"{path} is {_kind(mode)}, where the course keeps a notebook. Fix: move it away, "
            "then run the command again."
        )


def write_notebook(work: Path, path: Path, nb: dict) -> None:
    """Write ``nb`` to ``path`` inside ``work`` (see ``write_text``)."""
    write_text(work, path, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def write_text(work: Path, path: Path, text: str) -> None:
    """Write ``text`` to ``path`` inside ``work`` (see ``check_target``): into a new file next
    to it, then renamed over it, so a link put there meanwhile is replaced, not followed."""
    check_target(work, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_target(work, path)  # the folders just made are real ones
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
