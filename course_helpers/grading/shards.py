"""Grading on many machines: a stable split of the submissions into shards, and the merge.

``grade PATH... --shard I/N`` grades shard I of N (1 ≤ I ≤ N). A submission's shard depends
only on its *key*, its path relative to the PATH argument that found it, with that argument's
own name in front (``subs/alice.ipynb`` for ``grade /mnt/x/subs``, and
``submitted/alice/ps1/01_tensors.ipynb`` in nbgrader's layout; a notebook given as a file is
keyed by its file name). Shard = SHA-256 of the key, as a number, modulo N, plus 1. So every
submission lands in exactly one shard, and the split is the same on every machine, whatever
the mount point, the order of the listing, or which other submissions exist.

``grade merge RESULT.json...`` reads the ``--json`` reports of the shards, checks that each
was signed with the instructor's key (``grading.signing``) and that they are shards 1..N of
one split, each exactly once, with no submission in two of them, and writes the same reports
a single run would (``--json``, ``--csv``, ``--junit``, ``--results-format``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from course_helpers.errors import CourseError
from course_helpers.grading.classreport.observations import tries_from_json
from course_helpers.grading.grade import ExerciseGrade, NotebookGrade

# the ``--json`` report's format, written into every report and checked by the merge
REPORT_FORMAT = 3


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, key: str) -> bool:
        return shard_of(key, self.count) == self.index


def parse_shard(text: str) -> Shard:
    """``"I/N"`` → ``Shard(I, N)``; a clear ``CourseError`` for anything else."""
    index, slash, count = str(text).partition("/")
    try:
        shard = Shard(int(index), int(count))
    except ValueError:
        shard = None
    if not slash or shard is None or not 1 <= shard.index <= shard.count:
        raise CourseError(
            f"--shard {text!r} is not a shard: write I/N with 1 <= I <= N, e.g. --shard 2/8 "
            "(in a Kubernetes Indexed Job: $((JOB_COMPLETION_INDEX + 1))/N; in a SLURM array "
            "started with --array=1-N: ${SLURM_ARRAY_TASK_ID}/N)."
        )
    return shard


def shard_of(key: str, count: int) -> int:
    """The shard (1..count) that a submission with this key belongs to: from the key's bytes
    as on disk (a file name that is not UTF-8 holds lone surrogates once read by Python)."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()
    return int(digest, 16) % count + 1


def keyed_paths(paths: list[str]) -> list[tuple[str, str]]:
    """(path, key) for every notebook the PATH arguments name; a folder gives its ``*.ipynb``
    files, in its subfolders too (nbgrader's ``submitted/<student>/<assignment>/``), in
    name order, keyed ``<folder name>/<path below it>``. Hidden files and folders
    (``.ipynb_checkpoints``) are skipped, and links to folders are not followed."""
    found = []
    for path in paths:
        given = Path(path)
        if given.is_dir():
            name = given.resolve().name
            found.extend((str(given / rel), f"{name}/{rel}") for rel in _notebooks_below(given))
        else:
            found.append((path, given.name))
    return found


def _notebooks_below(folder: Path) -> list[str]:
    import os

    found = []
    for top, folders, files in os.walk(folder):  # never follows links to folders
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        relative = Path(top).relative_to(folder)
        found += [(relative / f).as_posix() for f in files if f.endswith(".ipynb") and f[:1] != "."]
    return sorted(found, key=lambda rel: rel.split("/"))


def repeated_key(keyed: list[tuple[str, str]]) -> str:
    """A text naming two submissions with the same key, or "" (each key must be unique:
    it names the submission in every report and decides its shard)."""
    seen: dict[str, str] = {}
    for path, key in keyed:
        if key in seen:
            return (
                f"{seen[key]} and {path} are both keyed {key}: give their folders instead "
                "(keys are the path below a folder argument) or rename one"
            )
        seen[key] = path
    return ""


# --------------------------------------------------------------------------- merge


@dataclass
class ShardReport:
    """One ``--json`` report read back: which shard it is, and its graded notebooks."""

    source: str
    shard: Shard
    grades: list[NotebookGrade]
    keys: list[str]


def report_header(shard: Shard | None) -> dict:
    """What a ``--json`` report says about the run, so that a merge can check it."""
    shard = shard or Shard(1, 1)
    return {"format": REPORT_FORMAT, "shard": {"index": shard.index, "count": shard.count}}


_STATUSES = ("passed", "failed", "not_attempted", "error", "rejected")


def read_report(path: str, key=None) -> ShardReport:
    """A ``--json`` report, validated, its signature checked with ``key`` (a
    :class:`course_helpers.grading.signing.Key`); ``CourseError`` naming the file and the
    problem."""
    from course_helpers.grading.signing import read_file

    too_deep = False
    try:
        data = json.loads(read_file(path, "grading report", 1024).decode("utf-8"))
    except RecursionError:
        data, too_deep = None, True
    except (ValueError, CourseError) as err:
        raise CourseError(f"{path}: not a readable JSON grading report ({err}).") from None
    if too_deep or _nested_deeper_than(data, MAX_DEPTH):  # the grader writes ~6 levels
        raise CourseError(
            f"{path}: not a grading report: it is nested too deeply (more than {MAX_DEPTH} "
            "levels; the grader never writes that)."
        )
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise CourseError(
            f"{path}: not a grading report of this version (format {REPORT_FORMAT}); write the "
            "shards' reports with 'python -m course_helpers grade ... --json FILE'."
        )
    if key is not None:
        problem = key.problem(data)
        if problem:
            raise CourseError(f"{path}: refused: {problem}.")
    try:
        shard = Shard(int(data["shard"]["index"]), int(data["shard"]["count"]))
        grades = [_notebook(nb) for nb in data["notebooks"]]
        keys = [str(nb["key"]) for nb in data["notebooks"]]
    except (KeyError, TypeError, ValueError) as err:
        raise CourseError(f"{path}: a malformed grading report ({err!r} is wrong).") from None
    return ShardReport(path, shard, grades, keys)


MAX_DEPTH = 32  # levels of lists and objects in a report (the grader writes about 6)


def _nested_deeper_than(data, limit: int) -> bool:
    """``data`` (parsed JSON) holds lists or objects more than ``limit`` levels deep; looked
    at without recursion, so any depth the parser accepted is answered."""
    todo = [(data, 1)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return True
            items = value.values() if isinstance(value, dict) else value
            todo.extend((item, depth + 1) for item in items)
    return False


def _notebook(nb: dict) -> NotebookGrade:
    """One notebook of a report, each field checked (a report holds what the grader wrote:
    one point per passed exercise, nothing else)."""
    from course_helpers.grading.grade import load_catalogue

    known = load_catalogue()
    exercises = []
    for e in nb["exercises"]:
        grade = ExerciseGrade(
            str(e["exercise_id"]),
            str(e["status"]),
            str(e["message"]),
            int(e["points"]),
            int(e["attempts"]),
            str(e["first_attempt"]),
            bool(e["known"]) and str(e["exercise_id"]) in known,
            str(e["misconception"]),
            int(e["hints"]),
            bool(e["solution_shown"]),
            tries_from_json(e["tries"]),
        )
        if grade.status not in _STATUSES or grade.points != int(grade.status == "passed"):
            raise ValueError(f"{grade.exercise_id}: {grade.points} points for {grade.status}")
        exercises.append(grade)
    review = [str(reason) for reason in nb["review"]]
    path, run, error = str(nb["path"]), str(nb["run"]), str(nb["grader_error"])
    return NotebookGrade(path, run, exercises, review, error)


def merge(reports: list[ShardReport]) -> tuple[list[NotebookGrade], list[str]]:
    """Every notebook of shards 1..N, in key order (the order of a single run's merge), and
    their keys. A missing, repeated or mixed-up shard is a ``CourseError`` that names it."""
    if not reports:
        raise CourseError("grade merge: name the shards' JSON reports to merge.")
    counts = sorted({r.shard.count for r in reports})
    if len(counts) > 1:
        listing = ", ".join(f"{r.source} ({r.shard})" for r in reports)
        raise CourseError(f"These reports come from different splits: {listing}.")
    count = counts[0]
    by_index: dict[int, list[str]] = {}
    for report in reports:
        by_index.setdefault(report.shard.index, []).append(report.source)
    repeated = {i: s for i, s in by_index.items() if len(s) > 1}
    if repeated:
        index, sources = sorted(repeated.items())[0]
        raise CourseError(f"Shard {index}/{count} appears more than once: {', '.join(sources)}.")
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        names = ", ".join(f"{i}/{count}" for i in missing)
        raise CourseError(f"Shard {names} is missing: grade it, then merge all {count}.")
    seen: dict[str, str] = {}
    merged = []
    for report in reports:
        for key, grade in zip(report.keys, report.grades, strict=True):
            if key in seen:
                raise CourseError(
                    f"{key} was graded in two shards ({seen[key]} and {report.source}): were "
                    "the shards run over different folders?"
                )
            if shard_of(key, count) != report.shard.index:
                raise CourseError(
                    f"{report.source}: {key} does not belong to shard {report.shard}; the "
                    "report was not made by --shard, or was edited."
                )
            seen[key] = report.source
            merged.append((key, grade))
    merged.sort(key=lambda pair: pair[0])
    return [g for _, g in merged], [k for k, _ in merged]
