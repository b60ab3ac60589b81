"""The class report: what a graded class gets wrong, for its instructors.

``python -m course_helpers grade ... --class-report DIR`` (and ``grade merge ...
--class-report DIR``) writes, from the graded notebooks alone (no re-grading):

- ``index.html``: one self-contained page with the pictures inline, readable offline;
- ``class-report.json`` and ``lessons.csv``, ``exercises.csv``, ``misconceptions.csv``: the
  same figures for other tools;
- ``overview.png``: one picture of the whole report.

Per exercise and per lesson: pass rate, first-attempt pass rate, how many answers the
notebooks needed, the hint tiers the notebooks reported showing, and the typical mistakes
(catalogued misconceptions) diagnosed, with counts, share of wrong answers and how far the
evidence went (``checking.mistakes``); the class's top typical mistakes with what the
learners were told. Anonymous by default: counts, no names (``--class-report-learners``
adds a per-notebook table). Modules: ``observations`` (what the grader keeps per exercise),
``model`` (the figures), ``figures`` (the pictures), ``page`` (the HTML), ``files``.
"""

from __future__ import annotations

from course_helpers.errors import CourseError


def write_class_report(grades, folder: str, keys=None, *, learners: bool = False) -> list:
    """Build the class report of ``grades`` (``NotebookGrade`` objects) and write it into
    ``folder``; the files written. ``CourseError`` (one line) for a batch with no notebook
    or a folder that cannot be written."""
    from course_helpers.grading.classreport import files, model

    if not grades:
        raise CourseError(f"--class-report {folder}: no notebook was graded: nothing to report")
    report = model.build(grades, keys, learners=learners)
    try:
        return files.write(report, folder)
    except OSError as err:
        why = err.strerror or type(err).__name__
        raise CourseError(f"--class-report {folder}: could not write the report ({why})") from None
    except ImportError as err:  # the grader imports nothing once submissions have run
        raise CourseError(
            f"--class-report {folder}: could not draw the report ({err}); a grader bug, "
            "please report it"
        ) from None


def prepare_pictures() -> None:
    """Draw a small report once, in memory: every module the pictures and the page need is
    then imported (the grader imports nothing once a submission has run)."""
    from course_helpers.grading.classreport import figures, files, model, page
    from course_helpers.grading.grade import ExerciseGrade, NotebookGrade
    from course_helpers.lessons import catalog, for_exercise

    exercise = next(e for e in catalog() if for_exercise(e.id))
    label = for_exercise(exercise.id)[0].label
    tries = [{"status": "failed", "misconception": label, "evidence": "code", "said": label}]
    tries.append({"status": "passed"})
    grade = ExerciseGrade(exercise.id, "passed", "", 1, 2, "failed", tries=tries, hints=1)
    report = model.build([NotebookGrade("x", "completed", [grade])], ["x"], learners=True)
    made = figures.figures(report)
    page.render(report, {name: figures.svg(fig) for name, fig in made.items()})
    figures.png(figures.overview(report))
    files.stats_csv(report.as_dict()["exercises"])
