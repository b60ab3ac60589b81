"""Writing the class report's folder: the page, the JSON, the CSV tables, the overview PNG."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

PAGE, DATA, OVERVIEW = "index.html", "class-report.json", "overview.png"
TABLES = ("lessons.csv", "exercises.csv", "misconceptions.csv")
LEARNERS = "learners.csv"


def folder_problem(folder: str) -> str:
    """What stops the class report from being written into ``folder`` (it is created when
    missing), on one line; "" when nothing does. Checked before grading starts."""
    target = Path(folder)
    if target.exists() and not target.is_dir():
        return f"--class-report {folder}: is a file; name a folder (it is created if missing)"
    existing = next((p for p in [target, *target.parents] if p.exists()), Path("."))
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        return f"--class-report {folder}: cannot write into {existing} (not a writable folder)"
    return ""


def write(report, folder: str) -> list[Path]:
    """Write ``report`` (a ``ClassReport``) into ``folder``; the files written. ``OSError``
    when the folder cannot be written (the caller says so in one line)."""
    from course_helpers.grading.classreport import figures, page

    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    data = report.as_dict()
    made = figures.figures(report)
    written = {
        PAGE: page.render(report, {name: figures.svg(fig) for name, fig in made.items()}),
        DATA: json.dumps(data, indent=2, ensure_ascii=False) + "\n",
        "lessons.csv": stats_csv(data["lessons"]),
        "exercises.csv": stats_csv(data["exercises"]),
        "misconceptions.csv": _misconceptions_csv(data["exercises"]),
    }
    if report.learners is not None:
        written[LEARNERS] = _learners_csv(report.learners)
    paths = []
    for name, text in written.items():
        (target / name).write_text(text, encoding="utf-8")
        paths.append(target / name)
    (target / OVERVIEW).write_bytes(figures.png(figures.overview(report)))
    paths.append(target / OVERVIEW)
    if report.learners is None:  # a folder reused without the flag keeps no names
        (target / LEARNERS).unlink(missing_ok=True)
    return paths


def _rows_csv(head: list[str], rows: list[list]) -> str:
    from course_helpers.grading.reports import _csv_cell

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(head)
    writer.writerows([[_csv_cell(v) for v in row] for row in rows])
    return buffer.getvalue()


def stats_csv(items: list[dict]) -> str:
    if not items:
        return _rows_csv(["name"], [])
    scalar = [k for k, v in items[0].items() if not isinstance(v, (dict, list))]
    spread = [(k, sub) for k in ("attempts", "hint_tiers") for sub in items[0][k]]
    head = scalar + [f"{k}_{sub}" for k, sub in spread] + ["misconceptions"]
    rows = [
        [item[k] for k in scalar]
        + [item[k][sub] for k, sub in spread]
        + [len(item["misconceptions"])]
        for item in items
    ]
    return _rows_csv(head, rows)


def _misconceptions_csv(exercises: list[dict]) -> str:
    from course_helpers.checking.mistakes import EVIDENCE_STATES

    head = ["exercise_id", "lesson", "label", "answers", "share_of_wrong_answers", "notebooks"]
    head += ["notebooks_with_evidence", "overcome", "with_evidence", "values_only"]
    head += [f"evidence_{state}" for state in EVIDENCE_STATES] + ["most_told"]
    rows = []
    for exercise in exercises:
        for m in exercise["misconceptions"]:
            told = m["messages_seen"][0]["text"] if m["messages_seen"] else ""
            rows.append(
                [m[k] for k in head[:10]]
                + [m["evidence"].get(state, 0) for state in EVIDENCE_STATES]
                + [told]
            )
    return _rows_csv(head, rows)


def _learners_csv(learners: list[dict]) -> str:
    ids = list(dict.fromkeys(i for row in learners for i in row["exercises"]))
    head = ["notebook", "score", "max_score", "run"]
    head += [f"{i} {what}" for i in ids for what in ("status", "answers", "misconceptions")]
    rows = []
    for row in learners:
        cells = [row["key"], row["score"], row["max_score"], row["run"]]
        for i in ids:
            e = row["exercises"].get(i)
            cells += [e["status"], e["answers"], "; ".join(e["misconceptions"])] if e else [""] * 3
        rows.append(cells)
    return _rows_csv(head, rows)
