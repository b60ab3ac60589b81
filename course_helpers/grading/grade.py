"""Grade one notebook: which exercises it is graded on, run it in a sandboxed worker, and
judge the answers it sent with the full catalogue, outside the sandbox."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import read_grader_log
from course_helpers.grading.judging import DEFAULT_JUDGE_TIMEOUT, refused_imports
from course_helpers.grading.tampering import suspicious_code
from course_helpers.grading.worker import DEFAULT_TIMEOUT
from course_helpers.records import MAX_RECORD_NODES, invalid_reason

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"  # the course's own answers


_CHECK_CALL = re.compile(r"""\bcheck\(\s*(['"])([^'"\n]+)\1""")


@dataclass
class ExerciseGrade:
    exercise_id: str
    status: str
    message: str
    points: int
    attempts: int = 0  # distinct answers checked (the same one re-checked counts once)
    first_attempt: str = ""  # the status of the first of them
    known: bool = True  # False: no exercise has this id (it is shown escaped, see below)
    misconception: str = ""  # the catalogued mistake the graded answer is ("" for none)
    hints: int = 0  # the highest hint tier shown while graded (as the kernel said)
    solution_shown: bool = False  # the solution was asked for while graded (ditto)
    # each counted attempt as judged here: its status, and the misconception it was diagnosed
    # as, its evidence state and what was said of it (grading.classreport.observations)
    tries: list = field(default_factory=list)


@dataclass
class NotebookGrade:
    path: str
    run: str  # "completed", "timed out", "kernel died (...)", "could not run: ..."
    exercises: list[ExerciseGrade] = field(default_factory=list)
    review: list[str] = field(default_factory=list)  # reasons to look at it ("needs review")
    grader_error: str = ""  # the grader's own failure (its worker never started): not graded

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


def expected_ids(notebook, path: str, solutions: Path = SOLUTIONS, also=()) -> list[str]:
    """The exercises a notebook is graded on: its own checks, then the missing ones of the
    solution notebook of its lesson (see the module docstring), then those of ``also`` (the
    assignment a platform grades it on)."""
    found = exercise_ids_in(notebook)
    expected = dict.fromkeys(found)
    expected.update(dict.fromkeys(also))
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
    import io
    import tokenize

    from course_helpers.checking import syntax_trees

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
                    value = syntax_trees.literal(text.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str):
                    ids.append(value.strip())
    return ids


@functools.lru_cache(maxsize=1)
def load_catalogue() -> dict:
    """The exercises and their references, loaded once, before any submission runs."""
    from course_helpers.lessons import catalog

    return {e.id: e for e in catalog()}


_NOT_FOR_THE_GRADER = ("__main__", "pytest_plugin", ".authoring", ".testing")

# what the grader and its judging processes use besides the course package
_STANDARD = (
    "csv", "ctypes", "hashlib", "hmac", "json", "multiprocessing.reduction", "resource",
    "secrets", "signal", "subprocess", "xml.etree.ElementTree", "concurrent.futures",
    "concurrent.futures.thread", "nbformat", "nbformat.v4", "warnings",
)  # fmt: skip


def preload() -> None:
    """Import every module the grader may need, before any submission runs: a module first
    imported later would be read from a package (or ``__pycache__``) a submission may have
    changed by then. Also loads the catalogue (:func:`load_catalogue`)."""
    import importlib

    for name in _STANDARD:
        importlib.import_module(name)
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        parts = ("course_helpers", *path.relative_to(package).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not any(part in name for part in _NOT_FOR_THE_GRADER):
            importlib.import_module(name)
    load_catalogue()


def prepare(ids) -> None:
    """Before any submission runs: :func:`preload`, then, for each exercise of ``ids``, build
    its reference and its catalogued wrong answers, send them through the answer channel's
    encoding and judge them all (:func:`judge_answers`), as a notebook's answers are judged.
    Judging then imports nothing more (torch and the lessons import parts of themselves on
    first use) and rebuilds nothing: the judging processes, forked after this, refuse every
    import (``grading.judging``)."""
    import warnings

    from course_helpers.checking.submissions import collect, encode_frame
    from course_helpers.lessons import for_exercise
    from course_helpers.lessons.model import fresh_rng

    preload()
    known = load_catalogue()
    wanted = [i for i in dict.fromkeys(ids) if i in known]
    frames = [encode_frame({"exercise_id": "?", "unsaved": "unreadable"})]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for exercise in (known[i] for i in wanted):
            builders = [lambda e=exercise: e.reference]
            builders += [m.build_answer for m in for_exercise(exercise.id)]
            for build in builders:
                try:
                    submission = collect(exercise, fresh_rng(build))
                except Exception:  # a builder the kernel would run, not the grader's concern
                    continue
                frames.append(encode_frame({"exercise_id": exercise.id, "submission": submission}))
                frames.append(encode_frame({"exercise_id": exercise.id, "hint": 1}))
        for first in (False, True):
            judge_answers(b"".join(frames), wanted, first)


def grade_notebook(
    path: str,
    *,
    timeout: int = DEFAULT_TIMEOUT,
    kernel: str = "python3",
    solutions: Path = SOLUTIONS,
    first_attempt: bool = False,
    limits=None,
    use_sandbox: bool = True,
    hide: list[Path] | None = None,
    judge_server=None,
    judge_timeout: float = DEFAULT_JUDGE_TIMEOUT,
    assignment: list[str] | tuple = (),
):
    """Run one notebook in its own worker process and judge the answers it sent.

    Never raises for a bad notebook. ``solutions``: the folder of the course's solution
    notebooks (see :func:`expected_ids`). ``first_attempt``: grade each exercise's first
    checked answer instead of its last. ``limits``: :class:`course_helpers.grading.sandbox.Limits`.
    ``hide``: folders the submission must not see (e.g. the other submissions).
    ``judge_server``: a :class:`course_helpers.grading.judging.JudgeServer`; the answers are
    then judged in a process of their own, stopped after ``judge_timeout`` seconds (without
    one, here, with no limit). ``assignment``: exercises it is graded on in any case.
    """
    import nbformat

    from course_helpers.grading import sandbox
    from course_helpers.grading.running import run_worker

    load_catalogue()
    data, refused = read_submission(path)
    if refused:
        return NotebookGrade(path, f"refused: {refused}")
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as err:
        return NotebookGrade(path, f"could not run: {type(err).__name__}: {err}")
    ids = expected_ids(notebook, path, solutions, assignment)
    flags = suspicious_code(notebook)
    if not ids:
        return NotebookGrade(path, "error: no recognised exercises in this notebook", [], flags)
    cells = 1 + sum(1 for c in notebook.cells if c.cell_type == "code")
    worker = run_worker(
        data,
        Path(path).name,
        cells=cells,
        timeout=timeout,
        kernel=kernel,
        limits=limits or sandbox.Limits(),
        use_sandbox=use_sandbox,
        hide=hide or [],
    )
    if not worker.started:  # nothing of the notebook ran: the grader's own failure
        why = f"not graded: the grader's worker failed before the notebook ran ({worker.run})"
        grades = _all_errors(ids, f"{why}; this is not a verdict on the notebook.")
        return NotebookGrade(path, worker.run, grades, flags, grader_error=worker.run)
    args = (ids, first_attempt)
    if judge_server is None:
        result = judge_answers(worker.answers, *args)
    else:
        from course_helpers.grading.judging import JudgingFailed, JudgingTimedOut

        try:
            result = judge_server.run(worker.answers, args, judge_timeout)
        except (JudgingTimedOut, JudgingFailed) as err:
            return _not_judged(path, worker.run, ids, flags, err, judge_timeout)
    try:
        grades, problem = _decode(result, ids)
    except (KeyError, TypeError, ValueError) as err:
        from course_helpers.grading.judging import JudgingFailed

        failed = JudgingFailed(f"its result was malformed: {err!r}")
        return _not_judged(path, worker.run, ids, flags, failed, judge_timeout)
    problems = [*worker.problems, *([problem] if problem else [])]
    return NotebookGrade(path, worker.run, grades, flags + problems)


def judge_answers(answers: bytes, ids: list[str], first_attempt: bool) -> dict:
    """The grades of ``ids`` from the answer frames a notebook's kernels sent, and a problem
    with them ("" when none), as plain JSON data. Run in a judging process of its own (see
    ``grading.judging``)."""
    known = load_catalogue()
    attempts, hints, problem = _read_attempts(answers)
    grades = [_grade_exercise(known.get(i), i, attempts, first_attempt, hints) for i in ids]
    refused = refused_imports()
    if refused:  # judging wanted a module nobody imported before submissions ran
        problem = "; ".join(
            [*([problem] if problem else []), f"the grader refused to import {refused[0]} "
             "while judging (a grader bug, please report it): verdicts may be errors"]
        )  # fmt: skip
    return {"grades": [asdict(g) for g in grades], "problem": problem}


_FIELDS = {f.name: f.type for f in fields(ExerciseGrade)}


def _decode(result: dict, ids: list[str]) -> tuple[list[ExerciseGrade], str]:
    """:func:`judge_answers`' result back as grades, checked field by field."""
    from course_helpers.grading.classreport.observations import tries_from_json

    types = {"str": str, "int": int, "bool": bool, "list": list}
    grades = []
    for item, exercise_id in zip(result["grades"], ids, strict=True):
        if set(item) != set(_FIELDS):
            raise ValueError(f"fields {sorted(item)}")
        for name, kind in _FIELDS.items():
            if type(item[name]) is not types[kind]:
                raise TypeError(f"{name} is {type(item[name]).__name__}")
        grade = ExerciseGrade(**{**item, "tries": tries_from_json(item["tries"])})
        if grade.known and grade.exercise_id != exercise_id:
            raise ValueError(f"{grade.exercise_id} for {exercise_id}")
        grades.append(grade)
    problem = result["problem"]
    if not isinstance(problem, str):
        raise TypeError("problem")
    return grades, problem


def _all_errors(ids: list[str], message: str) -> list[ExerciseGrade]:
    known = load_catalogue()  # an unknown id is shown escaped, as always
    return [
        ExerciseGrade(i, "error", message, 0) if i in known else _grade_exercise(None, i, {}, 0)
        for i in ids
    ]


def _not_judged(path, run, ids, flags, err, limit) -> NotebookGrade:
    """The grade of a notebook whose judging was stopped or failed: no answer counts."""
    from course_helpers.grading.judging import JudgingTimedOut

    if isinstance(err, JudgingTimedOut):
        what = f"judging timed out (over {limit:g} s for this notebook's recorded answers)"
    else:
        what = f"judging failed ({err})"
    message = f"Not graded: {what}; a person should look at this notebook."
    grades = _all_errors(ids, message)
    return NotebookGrade(path, f"{what}: no answer graded", grades, [*flags, what])


MAX_NOTEBOOK_MB = 20  # a submission larger than this is refused


def read_submission(path: str, limit_mb: int = MAX_NOTEBOOK_MB) -> tuple[bytes, str]:
    """The bytes of a submitted notebook, or why it is refused: a symbolic link (it could
    name the answer key or another learner's file), anything but a regular file, or more
    than ``limit_mb`` MiB. Opened once without following links, so the file checked is the
    file read."""
    import stat

    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        if Path(path).is_symlink():
            return b"", "a symbolic link, not a notebook file (submit the file itself)"
        return b"", f"cannot be opened ({err.strerror})"
    with os.fdopen(handle, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            return b"", "not a regular file (submit the notebook file itself)"
        data = file.read(limit_mb * 2**20 + 1)
    if len(data) > limit_mb * 2**20:
        return b"", f"larger than {limit_mb} MiB (clear the outputs and submit it again)"
    return data, ""


def _read_attempts(answers: bytes) -> tuple[dict[str, list], dict, str]:
    """Each exercise's submissions in order, the hints shown, and a problem with the frames
    ("" when none)."""
    try:
        items, hints = read_grader_log(answers)
    except Exception as err:
        problem = f"the answers sent are malformed ({type(err).__name__}): nothing graded"
        return {}, {}, problem
    attempts: dict[str, list] = {}
    for exercise_id, submission in items:
        attempts.setdefault(exercise_id, []).append(submission)
    return attempts, hints, ""


def _grade_exercise(
    exercise, exercise_id: str, attempts: dict, first: bool, hints: dict | None = None
) -> ExerciseGrade:
    if exercise is None:  # any text a learner wrote: escaped, never a row or column of its own
        shown = ascii(exercise_id)[1:-1]
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        message = "There is no exercise with this id."
        return ExerciseGrade(shown, "error", message, 0, known=False)
    tier, solution = (hints or {}).get(exercise.id, (0, False))
    tier = min(tier, len(exercise.hints))  # a kernel may claim any tier; none past the last
    tries = attempts.get(exercise.id, [])
    if not tries:
        return ExerciseGrade(
            exercise.id, "not_attempted", "No answer was checked.", 0,
            hints=tier, solution_shown=solution,
        )  # fmt: skip
    from course_helpers.grading.classreport.observations import observe

    verdicts = [_verdict(exercise, s) for s in tries]
    index = 0 if first else len(tries) - 1
    status, message, label = verdicts[index]
    counted = _distinct_attempts(tries, verdicts)
    return ExerciseGrade(
        exercise.id,
        status,
        message,
        int(status == "passed"),
        attempts=len(counted),
        first_attempt=verdicts[0][0],
        misconception=label,  # as the judge diagnosed it (what the learner was told)
        hints=tier,
        solution_shown=solution,
        tries=observe(exercise.id, [tries[i] for i in counted], [verdicts[i] for i in counted]),
    )


def _distinct_attempts(tries: list, verdicts: list) -> list[int]:
    """The attempts as the learner's progress counts them (their indices): an answer checked
    again right after itself, with the same verdict (a cell run twice), is one attempt."""
    from course_helpers.checking.progress import answer_fingerprint

    counted, last = [], None
    for index, (submission, (status, *_)) in enumerate(zip(tries, verdicts, strict=True)):
        valid = status != "rejected" and isinstance(submission, dict)
        key = (answer_fingerprint(submission), status) if valid else None
        if key is None or not key[0] or key != last:
            counted.append(index)
        last = key
    return counted


MAX_PAYLOAD_MB = 64  # tensor data one recorded answer may hold, in all


def payload_problem(record) -> str:
    """Why the tensors of an answer record are not what ``describe`` makes, or "": each
    payload must own its data (contiguous, over storage at least as large as it, so never a
    stride-0 view whose copy would be huge), and all of them together at most
    :data:`MAX_PAYLOAD_MB` MiB. Walks at most ``MAX_RECORD_NODES`` parts."""
    import torch

    todo, seen, total = [record], 0, 0
    while todo:
        value = todo.pop()
        seen += 1
        if seen > MAX_RECORD_NODES:
            return f"it has more than {MAX_RECORD_NODES} parts"
        if isinstance(value, dict):  # its keys too (a tensor can be a key), text excepted
            todo.extend(key for key in value if not isinstance(key, str))
            todo.extend(value.values())
        elif isinstance(value, (list, tuple)):
            todo.extend(value)
        elif isinstance(value, torch.Tensor):
            size = value.numel() * value.element_size()
            stored = value.untyped_storage().nbytes() if value.layout == torch.strided else 0
            if not value.is_contiguous() or stored < size + value.storage_offset() * (
                value.element_size()
            ):
                return (
                    f"a tensor payload of {value.numel()} elements is a view over "
                    f"{stored} bytes of storage (describe() always copies its data)"
                )
            total += size
            if total > MAX_PAYLOAD_MB * 2**20:
                return f"its tensors hold more than {MAX_PAYLOAD_MB} MiB"
    return ""


def _judge_one(exercise, submission) -> tuple[str, str]:
    """(status, message) for one recorded submission, rejecting what collect never makes."""
    return _verdict(exercise, submission)[:2]


def _verdict(exercise, submission) -> tuple[str, str, str]:
    """:func:`_judge_one`, and the label of the misconception the judge diagnosed ("")."""
    if isinstance(submission, str):  # it could not be saved or loaded: only it is lost
        return "rejected", f"This recorded answer is {submission}: it could not be judged.", ""
    if not isinstance(submission, dict) or set(submission) - {
        "format",
        "exercise_id",
        "answer",
        "learner_record",
        "method",  # what the learner's code used (method checks), judged by judge()
        "code",  # the answer's code as text: the evidence a named mistake needs
        "notebook",  # what the notebook left switched when check ran (gradient recording)
    }:
        return "rejected", "The recorded answer is malformed (not a submission made by check).", ""
    if submission.get("learner_record"):
        why = "The answer is a hand-made record (a dict shaped like the checker's)."
        return "rejected", why, ""
    reason = invalid_reason(submission.get("answer")) or payload_problem(submission)
    if reason:
        return "rejected", f"The recorded answer was rejected: {reason}.", ""
    verdict = judge(exercise, submission)
    return verdict.status, verdict.message, verdict.misconception
