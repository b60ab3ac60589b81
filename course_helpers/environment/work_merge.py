"""Bringing the course's new version of a notebook to a learner who only answered in it
(issue 36, item 4): answering a lesson's "Check yourself" questions (or an exercise) changes
only the cells that call ``check("ID", ...)``; such a copy is updated like an untouched one,
with the learner's answer cells (their text and outputs) put into the new version.

What a copy remembers of the version it was made from (``metadata.course``, written when the
copy is made): ``answers_text``, the fingerprint of its text with every answer cell counted as
its id only, and per answer id the fingerprint of the answer cell and of the question right
above it. The answers move only where the new version still asks the same: the same id in one
cell, that cell and the Markdown cell above it unchanged. Anything else the learner changed
(a cell added, a sentence edited) keeps the copy as it is, with the new version beside it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
from pathlib import Path

from course_helpers.environment.work_files import (
    answer_id,
    notebook_problem,
    source_of,
    text_hash,
)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _question(cells: list, index: int) -> str:
    """The Markdown cell right above cell ``index`` (its question), or ""."""
    for cell in reversed(cells[:index]):
        if cell.get("cell_type") == "markdown":
            return source_of(cell)
    return ""


def answer_cells(nb: dict) -> dict[str, int]:
    """Answer id -> the index of the one cell that calls ``check`` with it (ids that two
    cells call are left out: an answer cannot be placed by such an id)."""
    found: dict[str, list[int]] = {}
    for index, cell in enumerate(nb.get("cells", [])):
        exercise = answer_id(cell)
        if exercise:
            found.setdefault(exercise, []).append(index)
    return {exercise: at[0] for exercise, at in found.items() if len(at) == 1}


def remember(nb: dict) -> dict:
    """What a fresh copy ``nb`` records about itself for later updates (see the module)."""
    cells = nb.get("cells", [])
    return {
        "text": text_hash(nb),
        "answers_text": text_hash(nb, answers_as_ids=True),
        "answers": {
            exercise: f"{_hash(source_of(cells[i]))}:{_hash(_question(cells, i))}"
            for exercise, i in answer_cells(nb).items()
        },
    }


def with_answers(mine: dict, fresh: dict) -> tuple[dict, list[str]] | None:
    """``fresh`` (a copy of the course's new version) with the answers the learner typed
    into ``mine``, or None when ``mine`` changed more than its answers, or the new version
    no longer asks one of the questions answered. Returns (notebook, ids of the answers)."""
    recorded = mine.get("metadata", {}).get("course", {})
    answers = recorded.get("answers")
    if not isinstance(answers, dict) or "answers_text" not in recorded:
        return None  # a copy made before answers were recorded
    if text_hash(mine, answers_as_ids=True) != recorded["answers_text"]:
        return None  # a change outside the answer cells
    mine_cells, new_cells = mine["cells"], fresh["cells"]
    placed = answer_cells(fresh)
    merged = copy.deepcopy(fresh)
    moved = []
    for exercise, index in answer_cells(mine).items():
        cell = mine_cells[index]
        before = answers.get(exercise)
        if not isinstance(before, str) or _hash(source_of(cell)) == before.split(":")[0]:
            continue  # not answered (the cell as it was made)
        target = placed.get(exercise)
        if target is None:
            return None  # the new version has no such question (or two cells ask it)
        same = f"{_hash(source_of(new_cells[target]))}:{_hash(_question(new_cells, target))}"
        if same != before:
            return None  # the question or its cell changed: the answer may not fit
        answer = copy.deepcopy(cell)
        if "id" in new_cells[target]:
            answer["id"] = new_cells[target]["id"]
        merged["cells"][target] = answer
        moved.append(exercise)
    if not moved:  # the text differs, yet no answer differs: nothing may be dropped unseen
        return None
    return merged, moved


def find_version(root: Path, tracked: str, wanted: str, limit: int = 200) -> dict | None:
    """The version of ``tracked`` (a course notebook, relative to the checkout) whose text
    fingerprint is ``wanted``: the checkout's own, or one from git's history of that file
    (the last ``limit`` commits that changed it). None where none matches or git has none."""
    try:
        current = json.loads((root / tracked).read_text(encoding="utf-8"))
        if notebook_problem(current) is None and text_hash(current) == wanted:
            return current
        log = subprocess.run(
            ["git", "log", f"-n{limit}", "--format=%H", "--", tracked],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    for commit in log.stdout.split() if log.returncode == 0 else ():
        shown = subprocess.run(
            ["git", "show", f"{commit}:{tracked}"], cwd=root, capture_output=True, timeout=60
        )
        try:
            nb = json.loads(shown.stdout)
        except ValueError:
            continue
        if notebook_problem(nb) is None and text_hash(nb) == wanted:
            return nb
    return None
