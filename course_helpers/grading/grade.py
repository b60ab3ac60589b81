"""Grade one notebook: which exercises it is graded on, run it in a sandboxed worker, and
judge the answers it recorded with the full catalogue, outside the sandbox."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import GRADING_ENV, read_grader_log
from course_helpers.grading.judging import DEFAULT_JUDGE_TIMEOUT
from course_helpers.grading.tampering import suspicious_code
from course_helpers.grading.worker import DEFAULT_TIMEOUT, MAX_RESTARTS
from course_helpers.records import invalid_reason

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"  # the course's own answers


_CHECK_CALL = re.compile(r"""\bcheck\(\s*(['"])([^'"\n]+)\1""")


@dataclass
class ExerciseGrade:
    exercise_id: str
    status: str
    message: str
    points: int
    attempts: int = 0  # how many times check() ran for it
    first_attempt: str = ""  # the status of the first of them
    known: bool = True  # False: no exercise has this id (it is shown escaped, see below)


@dataclass
class NotebookGrade:
    path: str
    run: str  # "completed", "timed out", "kernel died (...)", "could not run: ..."
    exercises: list[ExerciseGrade] = field(default_factory=list)
    review: list[str] = field(default_factory=list)  # reasons to look at it ("needs review")

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


@functools.lru_cache(maxsize=1)
def load_catalogue() -> dict:
    """The exercises and their references, loaded once, before any submission runs."""
    from course_helpers.lessons import catalog

    return {e.id: e for e in catalog()}


_NOT_FOR_THE_GRADER = ("__main__", "pytest_plugin", ".authoring", ".testing")


def preload() -> None:
    """Import every module the grader may need, before any submission runs: a module first
    imported later would be read from a package (or ``__pycache__``) a submission may have
    changed by then. Also loads the catalogue (:func:`load_catalogue`)."""
    import importlib

    for name in ("csv", "json", "xml.etree.ElementTree", "nbformat", "signal", "subprocess"):
        importlib.import_module(name)
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        parts = ("course_helpers", *path.relative_to(package).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not any(part in name for part in _NOT_FOR_THE_GRADER):
            importlib.import_module(name)
    load_catalogue()


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
):
    """Run one notebook in its own worker process and judge what it recorded, here.

    Never raises for a bad notebook. ``solutions``: the folder of the course's solution
    notebooks (see :func:`expected_ids`). ``first_attempt``: grade each exercise's first
    checked answer instead of its last. ``limits``: :class:`course_helpers.grading.sandbox.Limits`.
    ``hide``: folders the submission must not see (e.g. the other submissions).
    ``judge_server``: a :class:`course_helpers.grading.judging.JudgeServer`; the answers are
    then judged in a process of their own, stopped after ``judge_timeout`` seconds (without
    one, here, with no limit).
    """
    import shutil

    import nbformat

    load_catalogue()
    data, refused = read_submission(path)
    if refused:
        return NotebookGrade(path, f"refused: {refused}")
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as err:
        return NotebookGrade(path, f"could not run: {type(err).__name__}: {err}")
    ids = expected_ids(notebook, path, solutions)
    flags = suspicious_code(notebook)
    if not ids:
        return NotebookGrade(path, "error: no recognised exercises in this notebook", [], flags)
    base = Path(tempfile.mkdtemp(prefix="course-grading-"))
    try:
        work = base / secrets.token_hex(16)  # unguessable, in a folder no submission can list
        work.mkdir(mode=0o700)
        copy = work / Path(path).name
        copy.write_bytes(data)  # the bytes checked above, not the path again
        _unlistable(base)
        token = secrets.token_hex(16)
        run = _run_worker(copy, work, token, timeout, kernel, limits, use_sandbox, hide or [])
        args = (work / token, ids, first_attempt)
        if judge_server is None:
            grades, problem = judge_records(*args)
        else:
            from course_helpers.grading.judging import JudgingFailed, JudgingTimedOut

            try:
                grades, problem = judge_server.run(args, judge_timeout)
            except (JudgingTimedOut, JudgingFailed) as err:
                return _not_judged(path, run, ids, flags, err, judge_timeout)
    finally:
        with contextlib.suppress(OSError):  # listable again, for its owner to remove it
            os.chmod(base, 0o700)
        shutil.rmtree(base, ignore_errors=True)  # as soon as its answers are judged
    return NotebookGrade(path, run, grades, flags + ([problem] if problem else []))


NOBODY = 65534  # the owner of the folders around work folders when the grader is root


def _unlistable(folder: Path) -> None:
    """Make ``folder`` (around one work folder) impossible to list for a submission: mode
    0311 (its owner may create and enter, nobody may read it); when the grader is root it is
    also given to ``nobody``, since a kernel without the sandbox is a root process whose
    capabilities are dropped (:func:`course_helpers.grading.sandbox.preexec`), and an
    owner could list it again with ``chmod``."""
    os.chmod(folder, 0o311)
    if os.geteuid() == 0:
        os.chown(folder, NOBODY, NOBODY)


def judge_records(record_dir: Path, ids: list[str], first_attempt: bool):
    """The grades of ``ids`` from the answer log in ``record_dir``, and a problem with the
    log ("" when none). Run in a judging process of its own (see ``grading.judging``)."""
    known = load_catalogue()
    attempts, problem = _read_attempts(record_dir)
    return [_grade_exercise(known.get(i), i, attempts, first_attempt) for i in ids], problem


def _not_judged(path, run, ids, flags, err, limit) -> NotebookGrade:
    """The grade of a notebook whose judging was stopped or failed: no answer counts."""
    from course_helpers.grading.judging import JudgingTimedOut

    if isinstance(err, JudgingTimedOut):
        what = f"judging timed out (over {limit:g} s for this notebook's recorded answers)"
    else:
        what = f"judging failed ({err})"
    message = f"Not graded: {what}; a person should look at this notebook."
    known = load_catalogue()  # an unknown id is shown escaped, as always
    grades = [
        ExerciseGrade(i, "error", message, 0) if i in known else _grade_exercise(None, i, {}, 0)
        for i in ids
    ]
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


def notebook_limit(timeout: int, cells: int) -> int:
    """Seconds a whole notebook may take: each cell its timeout, a re-run for each allowed
    kernel restart, plus start-up, but never more than 10 cell timeouts or 10 minutes
    (whichever is longer): a cell that holds its worker cannot hold it for long."""
    return min(timeout * cells * (1 + MAX_RESTARTS) + 120, max(10 * timeout, 600))


OUTPUT_KEPT = 64 * 1024  # bytes of a worker's output the grader keeps (the end of it)


def _keep_tail(stream, tail: bytearray) -> None:
    """Read ``stream`` to its end, keeping only its last :data:`OUTPUT_KEPT` bytes."""
    while True:
        try:
            chunk = stream.read1(65536)
        except (OSError, ValueError):
            return
        if not chunk:
            return
        tail += chunk
        if len(tail) > OUTPUT_KEPT:
            del tail[: len(tail) - OUTPUT_KEPT]


def _run_worker(copy, work, token, timeout, kernel, limits, use_sandbox, hide) -> str:
    """Run the worker (see :func:`worker_main`) on ``copy``; its run status."""
    import signal
    import subprocess

    from course_helpers.grading import sandbox

    # the notebook's path comes on stdin with the token: no command line shows the folder
    argv = [sys.executable, "-m", "course_helpers.grading.worker", "--worker"]
    argv += ["--timeout", str(timeout), "--kernel", kernel]
    env = kernel_environment(work)
    cells = 1 + len(_code_cells(copy))
    root_unsandboxed = os.geteuid() == 0 and not (use_sandbox and sandbox.bwrap_works())
    process = subprocess.Popen(
        sandbox.command(argv, work, hide, use_sandbox),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=work,
        start_new_session=True,
        preexec_fn=sandbox.preexec(limits or sandbox.Limits(), root_unsandboxed),
    )
    tail = bytearray()  # the end of the worker's output only, however much it writes
    reader = threading.Thread(target=_keep_tail, args=(process.stdout, tail), daemon=True)
    reader.start()
    status = ""
    try:
        try:
            process.stdin.write(f"{token}\n{copy}\n".encode())
            process.stdin.close()
        except OSError:
            pass
        process.wait(timeout=notebook_limit(timeout, cells))
    except subprocess.TimeoutExpired:
        status = "timed out (the notebook's time limit; no answers)"
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # whatever it left behind in its session
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        reader.join(timeout=10)
    out = bytes(tail)
    if status:
        return status
    lines = out.decode(errors="replace").strip().splitlines()
    if lines and lines[-1].startswith("run: "):
        return lines[-1].removeprefix("run: ")
    return f"kernel died (its worker ended with status {process.returncode})"


# what a kernel may inherit from the grader: never the rest (tokens, passwords, keys)
ENV_ALLOWED = (
    "PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "LD_LIBRARY_PATH",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
    "COURSE_DEVICE",
)  # fmt: skip


def kernel_environment(work: Path) -> dict[str, str]:
    """The environment of a worker and its kernel: the names of :data:`ENV_ALLOWED` (and
    ``LC_*``) taken from the grader's, the rest set here; nothing else of the grader's."""
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOWED or k.startswith("LC_")}
    env.update(
        {
            "JUPYTER_RUNTIME_DIR": str(work / ".jupyter"),
            "IPYTHONDIR": str(work / ".ipython"),
            "MPLCONFIGDIR": str(work / ".matplotlib"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(work),
            "COURSE_PROGRESS": "off",
        }
    )
    env.pop(GRADING_ENV, None)
    return env


def _code_cells(path) -> list:
    import nbformat

    try:
        return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    except Exception:
        return []


def _read_attempts(record_dir: Path) -> tuple[dict[str, list], str]:
    """Each exercise's submissions in order, and a problem with the log ("" when none)."""
    log = record_dir / "log.pt"
    if not log.exists():
        return {}, ""
    try:
        items = read_grader_log(log)
    except Exception as err:
        return (
            {},
            f"the answer log is unreadable or malformed ({type(err).__name__}): nothing graded",
        )
    attempts: dict[str, list] = {}
    for exercise_id, submission in items:
        attempts.setdefault(exercise_id, []).append(submission)
    return attempts, ""


def _grade_exercise(exercise, exercise_id: str, attempts: dict, first: bool) -> ExerciseGrade:
    if exercise is None:  # any text a learner wrote: escaped, never a row or column of its own
        shown = ascii(exercise_id)[1:-1]
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        message = "There is no exercise with this id."
        return ExerciseGrade(shown, "error", message, 0, known=False)
    tries = attempts.get(exercise.id, [])
    if not tries:
        return ExerciseGrade(exercise.id, "not_attempted", "No answer was checked.", 0)
    verdicts = [_judge_one(exercise, s) for s in tries]
    chosen = verdicts[0] if first else verdicts[-1]
    return ExerciseGrade(
        exercise.id,
        chosen[0],
        chosen[1],
        int(chosen[0] == "passed"),
        attempts=_distinct_attempts(tries, verdicts),
        first_attempt=verdicts[0][0],
    )


def _distinct_attempts(tries: list, verdicts: list) -> int:
    """Attempts as the learner's progress counts them: an answer checked again right after
    itself, with the same verdict (a cell run twice), is one attempt."""
    from course_helpers.checking.progress import answer_fingerprint

    count, last = 0, None
    for submission, (status, _) in zip(tries, verdicts, strict=True):
        valid = status != "rejected" and isinstance(submission, dict)
        key = (answer_fingerprint(submission), status) if valid else None
        if key is None or not key[0] or key != last:
            count += 1
        last = key
    return count


def _judge_one(exercise, submission) -> tuple[str, str]:
    """(status, message) for one recorded submission, rejecting what collect never makes."""
    if isinstance(submission, str):  # it could not be saved or loaded: only it is lost
        return "rejected", f"This recorded answer is {submission}: it could not be judged."
    if not isinstance(submission, dict) or set(submission) - {
        "format",
        "exercise_id",
        "answer",
        "learner_record",
        "method",  # what the learner's code used (method checks), judged by judge()
        "code",  # the answer's code as text: the evidence a named mistake needs
        "notebook",  # what the notebook left switched when check ran (gradient recording)
    }:
        return "rejected", "The recorded answer is malformed (not a submission made by check)."
    if submission.get("learner_record"):
        return "rejected", "The answer is a hand-made record (a dict shaped like the checker's)."
    reason = invalid_reason(submission.get("answer"))
    if reason:
        return "rejected", f"The recorded answer was rejected: {reason}."
    verdict = judge(exercise, submission)
    return verdict.status, verdict.message
