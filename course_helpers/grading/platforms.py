"""Results in the formats of the autograding platforms instructors already use.

Both platforms run one container per submission, so the results describe one submission
(all the notebooks it holds), graded on one *assignment* (``--assignment``: one or more
lessons, e.g. ``01_tensors``): one test per exercise of the assignment, worth its best result
in any notebook of the submission. Copies of a notebook therefore add nothing, and another
lesson's notebook (renamed or not) earns nothing here: its exercises are not the
assignment's, and the output says they were not counted.

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

from course_helpers.errors import CourseError
from course_helpers.grading.classreport.model import build
from course_helpers.grading.grade import ExerciseGrade, NotebookGrade

FORMATS = ("gradescope", "prairielearn")
DEFAULT_PATHS = {
    "gradescope": "/autograder/results/results.json",
    "prairielearn": "/grade/results/results.json",
}


def assignment_exercises(names: str) -> list[str]:
    """The exercise ids of the lessons ``names`` names (comma-separated lesson stems such as
    ``01_tensors``, or their numbers, ``01``), in course order: those the lesson's exercise
    notebook checks (what a learner hands in; the lesson notebook's check-yourself questions
    are not graded), or, for a lesson without one (00), the lesson's own checks."""
    from course_helpers.grading.grade import SOLUTIONS, _solution_ids, load_catalogue

    catalogue = load_catalogue().values()
    lessons = list(dict.fromkeys(e.lesson for e in catalogue))
    wanted = [name.strip() for name in str(names).split(",") if name.strip()]
    chosen = []
    for name in wanted:
        match = [lesson for lesson in lessons if name in (lesson, lesson.split("_")[0])]
        if not match:
            raise CourseError(
                f"--assignment {name!r}: no lesson is called that; name one or more of "
                f"{', '.join(lessons)} (comma-separated), e.g. --assignment 01_tensors."
            )
        chosen += match
    if not chosen:
        raise CourseError("--assignment: name the lesson(s) the submission is graded on.")
    handed_in = {
        lesson: set(_solution_ids(str(SOLUTIONS / f"{lesson}.ipynb"))) for lesson in chosen
    }
    return [
        e.id
        for e in catalogue
        if e.lesson in chosen and (e.id in handed_in[e.lesson] or not handed_in[e.lesson])
    ]


def best_per_exercise(grades: list[NotebookGrade], ids: list[str] | None = None):
    """One (notebook name, grade) per exercise of ``ids`` (by default, every known exercise
    the notebooks were graded on, once): its best result in any of the notebooks."""
    graded = [(nb, e) for nb in grades for e in nb.exercises if e.known]
    ids = list(dict.fromkeys(e.exercise_id for _, e in graded)) if ids is None else ids
    best = []
    for exercise_id in ids:
        found = [(Path(nb.path).name, e) for nb, e in graded if e.exercise_id == exercise_id]
        if found:
            best.append(max(found, key=lambda pair: pair[1].points))
        else:
            missing = "No notebook of this submission checked it."
            best.append(("", ExerciseGrade(exercise_id, "not_attempted", missing, 0)))
    return best


def _summary(grades: list[NotebookGrade], ids: list[str] | None) -> str:
    lines = []
    for nb in grades:
        lines.append(f"{Path(nb.path).name}: {nb.score}/{nb.max_score} ({nb.run})")
        lines += [f"  needs review (a flag, not a verdict): {reason}" for reason in nb.review]
        if ids is not None:
            other = sorted({e.exercise_id for e in nb.exercises} - set(ids))
            if other:
                lines.append(f"  not counted (not exercises of this assignment): {len(other)}")
    return "\n".join(lines)


def _observed(e) -> dict:
    """What a Gradescope test stores about one exercise's attempts (see the docstring)."""
    met = [
        {"misconception": t["misconception"], "evidence": t["evidence"]}
        for t in e.tries
        if t.get("misconception")
    ]
    hints = {"highest_tier": e.hints, "solution_shown": e.solution_shown}
    return {"attempts": e.attempts, "misconceptions": met, "hints_reported": hints}


def _class_report(best):
    """The class report of the submission's graded result (one grade per exercise)."""
    return build([NotebookGrade("submission", "completed", [e for _, e in best])])


IMAGE_LIMIT = 600_000  # bytes of base64 picture at most: PrairieLearn takes 1 MB in all


def to_gradescope(
    grades: list[NotebookGrade], seconds: float = 0.0, ids: list[str] | None = None
) -> dict:
    """Gradescope's results for one submission graded on the exercises ``ids`` (see
    :func:`best_per_exercise`)."""
    best = best_per_exercise(grades, ids)
    tests = [
        {
            "score": e.points,
            "max_score": 1,
            "status": "passed" if e.points else "failed",
            "name": e.exercise_id,
            "number": str(number),
            "output": f"{e.status}: {e.message}" + (f" ({name})" if name else ""),
            "visibility": "visible",
            "extra_data": _observed(e),
        }
        for number, (name, e) in enumerate(best, start=1)
    ]
    return {
        "score": sum(e.points for _, e in best),
        "execution_time": round(seconds),
        "output": _summary(grades, ids) or "No notebook was found in the submission.",
        "visibility": "visible",
        "stdout_visibility": "hidden",  # the grader's own log, for instructors only
        "extra_data": {
            "needs_review": [r for nb in grades for r in nb.review],
            "class_summary": _class_report(best).summary(),
        },
        "tests": tests,
    }


def to_prairielearn(grades: list[NotebookGrade], ids: list[str] | None = None) -> dict:
    """PrairieLearn's results for one submission graded on the exercises ``ids`` (see
    :func:`best_per_exercise`)."""
    recognised = any(e.known and (ids is None or e.exercise_id in ids) for nb in grades
                     for e in nb.exercises)  # fmt: skip
    if not recognised:  # nothing recognised: not the learner's attempt lost, an invalid upload
        return {
            "gradable": False,
            "format_errors": [_summary(grades, ids) or "No exercise notebook was submitted."],
        }
    best = best_per_exercise(grades, ids)
    score = sum(e.points for _, e in best)
    report = _class_report(best)
    images = []
    if report.exercises:
        import base64

        from course_helpers.grading.classreport import figures

        picture = base64.b64encode(figures.png(figures.overview(report))).decode("ascii")
        if len(picture) <= IMAGE_LIMIT:
            images.append({"label": "Class summary", "url": f"data:image/png;base64,{picture}"})
    return {
        "gradable": True,
        "score": score / len(best),
        "images": images,
        "message": f"{score} of {len(best)} exercises passed.",
        "output": _summary(grades, ids),
        "tests": [
            {
                "name": e.exercise_id,
                "description": f"{name or 'no notebook'}: exercise {e.exercise_id}",
                "points": e.points,
                "max_points": 1,
                "message": e.status,
                "output": e.message,
            }
            for name, e in best
        ],
    }


def write_results(
    grades: list[NotebookGrade], form: str, path: str, seconds: float, ids=None
) -> None:
    """Write the platform's results file, making its folder (neither platform makes it).
    Written to a new file that then replaces the old one: a process that held the old one
    open cannot write into the new one."""
    import os

    if form == "gradescope":
        data = to_gradescope(grades, seconds, ids)
    else:
        data = to_prairielearn(grades, ids)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, target)
