"""Results in the formats of the autograding platforms instructors already use.

Both platforms run one container per submission, so the results describe one submission
(all the notebooks it holds): one test per graded exercise.

- **Gradescope** (``--results-format gradescope``, default file
  ``/autograder/results/results.json``): the fields of Gradescope's autograder
  specification, "Output format": ``score``, ``execution_time``, ``output``,
  ``visibility``, ``stdout_visibility``, ``extra_data`` and ``tests``, each test with
  ``score``, ``max_score``, ``status``, ``name``, ``number``, ``output`` and
  ``visibility``.
- **PrairieLearn** (``--results-format prairielearn``, default file
  ``/grade/results/results.json``): the fields of PrairieLearn's external grading
  documentation, "Grading results": ``gradable``, ``score`` (a fraction in [0, 1]),
  ``message``, ``output`` and ``tests``, each test with ``name``, ``description``,
  ``points``, ``max_points``, ``message`` and ``output``.

A notebook flagged "needs review" is said so in the submission's output; the score is
unchanged (a flag is not a verdict, see docs/grading.md).

The class summary (``grading.classreport``) goes where each format has room for it:
Gradescope's ``extra_data`` ("extra data to be stored", not shown to the learner) holds its
figures, and each test's ``extra_data`` the typical mistakes diagnosed in that exercise and
the hints the notebook reported; PrairieLearn's ``images`` (pictures shown with the results,
within its 1 MB limit) holds its overview picture.
"""

from __future__ import annotations

import json
from pathlib import Path

from course_helpers.grading.classreport.model import build
from course_helpers.grading.grade import NotebookGrade

FORMATS = ("gradescope", "prairielearn")
DEFAULT_PATHS = {
    "gradescope": "/autograder/results/results.json",
    "prairielearn": "/grade/results/results.json",
}


def _summary(grades: list[NotebookGrade]) -> str:
    lines = []
    for nb in grades:
        lines.append(f"{Path(nb.path).name}: {nb.score}/{nb.max_score} ({nb.run})")
        lines += [f"  needs review (a flag, not a verdict): {reason}" for reason in nb.review]
    return "\n".join(lines)


def _tests(grades: list[NotebookGrade]) -> list[tuple[NotebookGrade, object]]:
    return [(nb, e) for nb in grades for e in nb.exercises]


def _observed(e) -> dict:
    """What a Gradescope test stores about one exercise's attempts (see the docstring)."""
    met = [
        {"misconception": t["misconception"], "evidence": t["evidence"]}
        for t in e.tries
        if t.get("misconception")
    ]
    return {"attempts": e.attempts, "misconceptions": met, "hints_reported": list(e.hints)}


IMAGE_LIMIT = 600_000  # bytes of base64 picture at most: PrairieLearn takes 1 MB in all


def to_gradescope(grades: list[NotebookGrade], seconds: float = 0.0) -> dict:
    tests = [
        {
            "score": e.points,
            "max_score": 1,
            "status": "passed" if e.points else "failed",
            "name": e.exercise_id,
            "number": str(number),
            "output": f"{e.status}: {e.message}",
            "visibility": "visible",
            "extra_data": _observed(e),
        }
        for number, (_, e) in enumerate(_tests(grades), start=1)
    ]
    return {
        "score": sum(nb.score for nb in grades),
        "execution_time": round(seconds),
        "output": _summary(grades) or "No notebook was found in the submission.",
        "visibility": "visible",
        "stdout_visibility": "hidden",  # the grader's own log, for instructors only
        "extra_data": {
            "needs_review": [r for nb in grades for r in nb.review],
            "class_summary": build(grades).summary(),
        },
        "tests": tests,
    }


def to_prairielearn(grades: list[NotebookGrade]) -> dict:
    total = sum(nb.max_score for nb in grades)
    if not total:  # nothing recognised: not the learner's attempt lost, an invalid upload
        return {
            "gradable": False,
            "format_errors": [_summary(grades) or "No exercise notebook was submitted."],
        }
    report = build(grades)
    images = []
    if report.exercises:
        import base64

        from course_helpers.grading.classreport import figures

        picture = base64.b64encode(figures.png(figures.overview(report))).decode("ascii")
        if len(picture) <= IMAGE_LIMIT:
            images.append({"label": "Class summary", "url": f"data:image/png;base64,{picture}"})
    return {
        "gradable": True,
        "score": sum(nb.score for nb in grades) / total,
        "images": images,
        "message": f"{sum(nb.score for nb in grades)} of {total} exercises passed.",
        "output": _summary(grades),
        "tests": [
            {
                "name": e.exercise_id,
                "description": f"{Path(nb.path).name}: exercise {e.exercise_id}",
                "points": e.points,
                "max_points": 1,
                "message": e.status,
                "output": e.message,
            }
            for nb, e in _tests(grades)
        ],
    }


def write_results(grades: list[NotebookGrade], form: str, path: str, seconds: float) -> None:
    """Write the platform's results file, making its folder (neither platform makes it)."""
    data = to_gradescope(grades, seconds) if form == "gradescope" else to_prairielearn(grades)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
