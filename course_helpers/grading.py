"""Headless grading of learners' exercise notebooks (for instructors).

``python -m course_helpers grade PATH... [--json FILE] [--junit FILE] [--timeout S]``
(a PATH may be a folder: its ``*.ipynb`` files are graded in name order).

Each notebook runs in a fresh kernel (nbclient) with a per-cell timeout; a cell that
raises does not stop the notebook. Inside the kernel, ``check`` only *records* each
answer (``COURSE_GRADING_DIR``); pass/fail is decided here, in this process, by judging
those records with a fresh import of the checker. So a notebook that redefines
``check``, monkeypatches torch, prints "passed" or edits its stored outputs gains
nothing: what counts is the answer its own code produced.

Scoring: one point per expected exercise. The expected exercises are those of the
``check("ID", ...)`` calls in the notebook's source *and* those checked in the course's own
solution notebook of the same lesson (``solutions/NN_topic.ipynb`` next to the package,
when that folder exists): the lesson is the notebook's file stem when it is a lesson stem,
and any lesson whose solution notebook shares a checked id with the notebook. So deleting a
check cell does not shrink the total: an exercise never checked (or deleted) scores 0 as
"not attempted".
When a cell times out or the kernel dies, the notebook stops there: exercises checked
before that point are graded, later ones score 0; the run goes on with the next notebook.

Limits: the reference answers ship with the course package, so a learner who reads them
can submit them; grading defends against tampering with the checker, not against copying.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course_helpers.checking import GRADING_ENV, STRICT_ENV, judge, load_submission
from course_helpers.checking import submission_path as _submission_path

DEFAULT_TIMEOUT = 60
SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"  # the course's own answers
_CHECK_CALL = re.compile(r"""\bcheck\(\s*(['"])([^'"\n]+)\1""")


@dataclass
class ExerciseGrade:
    exercise_id: str
    status: str
    message: str
    points: int


@dataclass
class NotebookGrade:
    path: str
    run: str  # "completed", "timed out", "kernel died", "could not run: ..."
    exercises: list[ExerciseGrade] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(e.points for e in self.exercises)

    @property
    def max_score(self) -> int:
        return len(self.exercises)


def exercise_ids_in(notebook) -> list[str]:
    """Exercise ids of the ``check("ID", ...)`` calls in the code cells, in order, once each.

    Calls inside comments or strings do not count (the cell is tokenized; a cell that is not
    plain Python, e.g. one with %magics, falls back to a text search).
    """
    found: dict[str, None] = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for exercise_id in _check_ids(cell.source):
                found.setdefault(exercise_id, None)
    return list(found)


def expected_ids(notebook, path: str, solutions: Path = SOLUTIONS) -> list[str]:
    """The exercises a notebook is graded on: its own checks, then the missing ones of the
    solution notebook of its lesson (see the module docstring)."""
    found = exercise_ids_in(notebook)
    expected = dict.fromkeys(found)
    if not Path(solutions).is_dir():
        return found
    stem = Path(path).stem
    for solution in sorted(Path(solutions).glob("*.ipynb")):
        ids = _solution_ids(str(solution))
        if solution.stem == stem or set(ids) & set(found):
            expected.update(dict.fromkeys(ids))
    return list(expected)


@functools.lru_cache(maxsize=32)
def _solution_ids(path: str) -> list[str]:
    import nbformat

    try:
        return exercise_ids_in(nbformat.read(path, as_version=4))
    except Exception:  # an unreadable solution adds nothing; the build check reports it
        return []


def _check_ids(source: str) -> list[str]:
    import ast
    import io
    import tokenize

    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [m.group(2).strip() for m in _CHECK_CALL.finditer(source)]
    ids = []
    for name, paren, text in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (name.type, name.string, paren.string) == (tokenize.NAME, "check", "("):
            if text.type == tokenize.STRING:
                try:
                    value = ast.literal_eval(text.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str):
                    ids.append(value.strip())
    return ids


def run_notebook(notebook, folder: Path, record_dir: Path, timeout: int, kernel: str) -> str:
    """Execute ``notebook`` in a fresh kernel that records answers in ``record_dir``."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    env = dict(os.environ)
    env.update({GRADING_ENV: str(record_dir), STRICT_ENV: "0", "COURSE_PROGRESS": "off"})
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name=kernel,
        allow_errors=True,
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(folder)}},
    )
    try:
        client.execute(env=env)
    except CellTimeoutError:
        return "timed out"
    except DeadKernelError:
        return "kernel died"
    return "completed"


def grade_notebook(
    path: str,
    *,
    timeout: int = DEFAULT_TIMEOUT,
    kernel: str = "python3",
    solutions: Path = SOLUTIONS,
):
    """Run one notebook and judge what it recorded. Never raises for a bad notebook.

    ``solutions``: the folder of the course's solution notebooks (see :func:`expected_ids`).
    """
    import nbformat

    from course_helpers.exercises import catalog

    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as err:
        return NotebookGrade(path, f"could not run: {type(err).__name__}: {err}")
    ids = expected_ids(notebook, path, solutions)
    with tempfile.TemporaryDirectory(prefix="course-grading-") as record_dir:
        try:
            run = run_notebook(
                notebook, Path(path).resolve().parent, Path(record_dir), timeout, kernel
            )
        except Exception as err:  # e.g. no such kernel: the notebook scores 0, the run goes on
            run = f"could not run: {type(err).__name__}: {err}"
        known = {e.id: e for e in catalog()}
        grades = [_grade_exercise(known.get(i), i, Path(record_dir)) for i in ids]
    return NotebookGrade(path, run, grades)


def _grade_exercise(exercise, exercise_id: str, record_dir: Path) -> ExerciseGrade:
    if exercise is None:
        return ExerciseGrade(exercise_id, "error", "There is no exercise with this id.", 0)
    path = _submission_path(record_dir, exercise.id)
    if not path.exists():
        return ExerciseGrade(exercise.id, "not_attempted", "No answer was checked.", 0)
    try:
        submission = load_submission(path)
    except Exception as err:
        return ExerciseGrade(
            exercise.id, "error", f"The recorded answer is unreadable ({type(err).__name__}).", 0
        )
    if not isinstance(submission, dict):
        return ExerciseGrade(exercise.id, "error", "The recorded answer is malformed.", 0)
    verdict = judge(exercise, submission)
    return ExerciseGrade(exercise.id, verdict.status, verdict.message, int(verdict.passed))


# --------------------------------------------------------------------------- reports


def score_table(grades: list[NotebookGrade]) -> str:
    """A fixed-width per-exercise score table with one total line per notebook."""
    rows = [("notebook", "exercise", "status", "points")]
    for nb in grades:
        for e in nb.exercises:
            rows.append((nb.path, e.exercise_id, e.status, f"{e.points}/1"))
        if not nb.exercises:
            rows.append((nb.path, "-", "no checks found", "0/0"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for nb in grades:
        lines.append(f"{nb.path}: {nb.score}/{nb.max_score} ({nb.run})")
    return "\n".join(lines)


def to_json(grades: list[NotebookGrade]) -> str:
    data = {
        "notebooks": [
            {**asdict(nb), "score": nb.score, "max_score": nb.max_score} for nb in grades
        ],
        "score": sum(nb.score for nb in grades),
        "max_score": sum(nb.max_score for nb in grades),
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def to_junit(grades: list[NotebookGrade]) -> str:
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name="course grading")
    for nb in grades:
        failed = sum(1 for e in nb.exercises if e.status in ("failed", "not_attempted"))
        errors = sum(1 for e in nb.exercises if e.status == "error")
        suite = ET.SubElement(
            root,
            "testsuite",
            name=nb.path,
            tests=str(len(nb.exercises)),
            failures=str(failed),
            errors=str(errors),
        )
        ET.SubElement(suite, "properties").append(ET.Element("property", name="run", value=nb.run))
        for e in nb.exercises:
            case = ET.SubElement(suite, "testcase", classname=nb.path, name=e.exercise_id)
            if e.status == "error":
                ET.SubElement(case, "error", message=e.status).text = e.message
            elif e.status != "passed":
                ET.SubElement(case, "failure", message=e.status).text = e.message
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Grade notebooks; exit status 1 when any exercise did not pass, 0 otherwise."""
    parser = argparse.ArgumentParser(
        prog="python -m course_helpers grade",
        description="Grade exercise notebooks in fresh kernels, judging answers outside them.",
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="exercise notebooks (.ipynb) or folders of them"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML")
    parser.add_argument(
        "--timeout",
        type=int,
        default=DEFAULT_TIMEOUT,
        help=f"seconds allowed per cell (default {DEFAULT_TIMEOUT})",
    )
    parser.add_argument("--kernel", default="python3", help="Jupyter kernel name (default python3)")
    args = parser.parse_args(argv)
    grades = []
    for path in notebook_paths(args.paths):
        print(f"grading {path} ...", file=sys.stderr, flush=True)
        grades.append(grade_notebook(path, timeout=args.timeout, kernel=args.kernel))
    print(score_table(grades))
    if args.json:
        Path(args.json).write_text(to_json(grades), encoding="utf-8")
    if args.junit:
        Path(args.junit).write_text(to_junit(grades), encoding="utf-8")
    return exit_status(grades)


def notebook_paths(paths: list[str]) -> list[str]:
    """The notebooks to grade: each path as given, a folder's ``*.ipynb`` files sorted."""
    found = []
    for path in paths:
        if Path(path).is_dir():
            found.extend(str(p) for p in sorted(Path(path).glob("*.ipynb")))
        else:
            found.append(path)
    return found


def exit_status(grades: list[NotebookGrade]) -> int:
    """0 when every notebook ran to the end and every exercise passed, else 1."""
    ok = all(nb.run == "completed" and all(e.points for e in nb.exercises) for nb in grades)
    return 0 if ok else 1
