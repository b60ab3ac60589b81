"""Grading on many machines: a stable split of the submissions into shards, and the merge.

``grade PATH... --shard I/N`` grades shard I of N (1 ≤ I ≤ N). A submission's shard depends
only on its *key*, its path relative to the PATH argument that found it, with that argument's
own name in front (``subs/alice.ipynb`` for ``grade /mnt/x/subs``; a notebook given as a file
is keyed by its file name). Shard = SHA-256 of the key, as a number, modulo N, plus 1. So every
submission lands in exactly one shard, and the split is the same on every machine, whatever
the mount point, the order of the listing, or which other submissions exist.

``grade merge RESULT.json...`` reads the ``--json`` reports of the shards, checks that they
are shards 1..N of one split, each exactly once, with no submission in two of them, and writes
the same reports a single run would (``--json``, ``--csv``, ``--junit``, ``--results-format``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from course_helpers.errors import CourseError
from course_helpers.grading.classreport.observations import hints_from_json, tries_from_json
from course_helpers.grading.grade import ExerciseGrade, NotebookGrade

# the ``--json`` report's format, written into every report and checked by the merge
REPORT_FORMAT = 2


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
    """The shard (1..count) that a submission with this key belongs to."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
    return int(digest, 16) % count + 1


def keyed_paths(paths: list[str]) -> list[tuple[str, str]]:
    """(path, key) for every notebook the PATH arguments name; a folder gives its ``*.ipynb``
    files in name order, keyed ``<folder name>/<file name>``."""
    found = []
    for path in paths:
        given = Path(path)
        if given.is_dir():
            name = given.resolve().name
            found.extend((str(p), f"{name}/{p.name}") for p in sorted(given.glob("*.ipynb")))
        else:
            found.append((path, given.name))
    return found


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


def read_report(path: str) -> ShardReport:
    """A ``--json`` report, validated; ``CourseError`` naming the file and the problem."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CourseError(f"{path}: not a readable JSON grading report ({err}).") from None
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise CourseError(
            f"{path}: not a grading report of this version (format {REPORT_FORMAT}); write the "
            "shards' reports with 'python -m course_helpers grade ... --json FILE'."
        )
    try:
        shard = Shard(int(data["shard"]["index"]), int(data["shard"]["count"]))
        grades, keys = [], []
        for nb in data["notebooks"]:
            exercises = [
                ExerciseGrade(
                    str(e["exercise_id"]),
                    str(e["status"]),
                    str(e["message"]),
                    int(e["points"]),
                    int(e.get("attempts", 0)),
                    str(e.get("first_attempt", "")),
                    tries=tries_from_json(e.get("tries")),
                    hints=hints_from_json(e.get("hints")),
                )
                for e in nb["exercises"]
            ]
            grades.append(
                NotebookGrade(str(nb["path"]), str(nb["run"]), exercises, list(nb["review"]))
            )
            keys.append(str(nb["key"]))
    except (KeyError, TypeError, ValueError) as err:
        raise CourseError(f"{path}: a malformed grading report ({err!r} is wrong).") from None
    return ShardReport(path, shard, grades, keys)


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
