"""Grading reports: the score table, JSON, JUnit XML, a CSV gradebook, the exit status."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from course_helpers.grading.grade import NotebookGrade


def safe_text(text: str, limit: int = 200) -> str:
    """``text`` on one line, without control characters (no forged rows, no ANSI codes):
    each is written as its escape (``\\n``, ``\\x1b``); cut to ``limit`` characters."""
    text = str(text)
    if text.isprintable() and len(text) <= limit:
        return text
    escaped = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    return escaped if len(escaped) <= limit else escaped[: limit - 3] + "..."


def _csv_cell(value):
    """A spreadsheet reads a cell starting with = + - @ (or a tab/CR) as a formula: such a
    cell gets a leading ``'``. Control characters and lone surrogates (a file name that is
    not UTF-8) are written as their escapes (``\\x1b``), as in the score table."""
    if isinstance(value, str):
        if not value.isprintable():
            value = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in value)
        if value[:1] in ("=", "+", "-", "@", "\t", "\r"):
            return "'" + value
    return value


def _xml_text(value) -> str:
    """``value`` with every character XML 1.0 cannot hold (control characters, lone
    surrogates, U+FFFE/U+FFFF) written as its escape: the report stays well-formed."""
    text = str(value)
    return "".join(
        c
        if c in "\t\n\r"
        or "\x20" <= c <= "\ud7ff"
        or "\ue000" <= c <= "\ufffd"
        or c >= "\U00010000"
        else ascii(c)[1:-1]
        for c in text
    )


def score_table(grades: list[NotebookGrade]) -> str:
    """A fixed-width per-exercise score table with one total line per notebook."""
    rows = [("notebook", "exercise", "status", "points")]
    for nb in grades:
        for e in nb.exercises:
            rows.append((safe_text(nb.path), safe_text(e.exercise_id), e.status, f"{e.points}/1"))
        if not nb.exercises:
            rows.append((safe_text(nb.path), "-", "no checks found", "0/0"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for nb in grades:
        lines.append(f"{safe_text(nb.path)}: {nb.score}/{nb.max_score} ({safe_text(nb.run)})")
        for e in nb.exercises:
            if e.attempts > 1:
                lines.append(
                    f"  {safe_text(e.exercise_id)}: {e.attempts} attempts, first {e.first_attempt}"
                )
        for reason in nb.review:
            lines.append(f"  NEEDS REVIEW (a flag, not a verdict): {safe_text(reason)}")
    return "\n".join(lines)


def to_json(
    grades: list[NotebookGrade], keys: list[str] | None = None, shard=None, key=None
) -> str:
    """The full report: every notebook and exercise, which shard of which split this run
    was (``grade merge`` reads these back; see ``grading.shards``), signed with ``key``
    (a :class:`course_helpers.grading.signing.Key`; a key of this call only if None).
    ``keys`` are the submissions' shard keys, by default their file names."""
    from course_helpers.grading.shards import report_header
    from course_helpers.grading.signing import run_key

    keys = keys if keys is not None else [Path(nb.path).name for nb in grades]
    data = {
        **report_header(shard),
        "notebooks": [
            {**asdict(nb), "key": name, "score": nb.score, "max_score": nb.max_score}
            for nb, name in zip(grades, keys, strict=True)
        ],
        "score": sum(nb.score for nb in grades),
        "max_score": sum(nb.max_score for nb in grades),
    }
    return json.dumps((key or run_key()).sign(data), indent=2)


def to_junit(grades: list[NotebookGrade]) -> str:
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name="course grading")
    x = _xml_text
    for nb in grades:
        failed = sum(1 for e in nb.exercises if e.status in ("failed", "not_attempted"))
        errors = sum(1 for e in nb.exercises if e.status in ("error", "rejected"))
        suite = ET.SubElement(
            root,
            "testsuite",
            name=x(nb.path),
            tests=str(len(nb.exercises)),
            failures=str(failed),
            errors=str(errors),
        )
        properties = ET.SubElement(suite, "properties")
        properties.append(ET.Element("property", name="run", value=x(nb.run)))
        for reason in nb.review:
            properties.append(ET.Element("property", name="needs_review", value=x(reason)))
        for e in nb.exercises:
            case = ET.SubElement(suite, "testcase", classname=x(nb.path), name=x(e.exercise_id))
            if e.status in ("error", "rejected"):
                ET.SubElement(case, "error", message=x(e.status)).text = x(e.message)
            elif e.status != "passed":
                ET.SubElement(case, "failure", message=x(e.status)).text = x(e.message)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def to_csv(grades: list[NotebookGrade]) -> str:
    """A gradebook: one row per notebook, one column per exercise (points), then totals."""
    import csv
    import io

    # a column for each exercise of the catalogue only: an unknown id (any text a learner
    # wrote) is counted in its notebook's score, never made a column of everyone's gradebook
    ids = list(dict.fromkeys(e.exercise_id for nb in grades for e in nb.exercises if e.known))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["notebook", *ids, "score", "max_score", "run", "needs_review"]
    writer.writerow([_csv_cell(v) for v in header])
    for nb in grades:
        points = {e.exercise_id: e.points for e in nb.exercises}
        unknown = [f"unknown exercise {e.exercise_id}" for e in nb.exercises if not e.known]
        row = [nb.path, *(points.get(i, "") for i in ids), nb.score, nb.max_score, nb.run]
        writer.writerow([_csv_cell(v) for v in row + ["; ".join(nb.review + unknown)]])
    return buffer.getvalue()


GRADER_FAILED = 3  # exit status: the grader could not grade (see :func:`grader_failure`)


def exit_status(grades: list[NotebookGrade]) -> int:
    """0 when every notebook ran to the end and every exercise passed; 1 when some did not
    (a verdict); :data:`GRADER_FAILED` when the grader itself failed on some notebook (its
    worker never started it: no verdict; see :func:`grader_failure`)."""
    if any(nb.grader_error for nb in grades):
        return GRADER_FAILED
    ok = all(
        nb.run == "completed" and nb.exercises and all(e.points for e in nb.exercises)
        for nb in grades
    )
    return 0 if ok else 1


def grader_failure(grades: list[NotebookGrade]) -> str:
    """The reason, when every notebook that reached a worker saw that worker fail before
    the notebook ran, the same way: the grader's setup is broken (e.g. the course cannot be
    imported where the worker runs), not a class of zeros. "" otherwise."""
    reached = [nb for nb in grades if nb.grader_error or nb.exercises]
    reasons = {nb.grader_error for nb in reached}
    if reached and len(reasons) == 1 and "" not in reasons:
        return reasons.pop()
    return ""
