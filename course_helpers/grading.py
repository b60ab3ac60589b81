"""Headless grading of learners' exercise notebooks (for instructors).

``python -m course_helpers grade PATH... [--jobs N] [--json F] [--junit F] [--csv F]
[--per-student DIR] [--first-attempt] [--timeout S] [--memory-mb M] [--no-sandbox]``
(a PATH may be a folder: its ``*.ipynb`` files are graded in name order).

Each notebook is copied into its own temporary folder and run there by a worker process
(``--worker``; isolated with bubblewrap where it works, resource-limited always: see
:mod:`course_helpers.sandbox`) in a fresh kernel with a per-cell timeout; a cell that raises
or times out does not stop the notebook. In the kernel, ``check`` keeps each answer in memory;
one extra cell sent after the notebook's own cells writes them into a folder with a secret
name. Pass/fail is decided here, with the catalogue and judge loaded before any submission ran,
after each recorded answer is validated (hand-made or inconsistent records are rejected).

Scoring: one point per expected exercise: the ``check("ID", ...)`` calls in the notebook and
those of the course's solution notebook of the same lesson (see :func:`expected_ids`); an
exercise never checked scores 0 as "not attempted". A notebook with no recognised exercise is
an error. Code that reads the references or touches the course's internals is flagged "needs
review" (:func:`suspicious_code`): the references live in the learner's kernel, so copying
one cannot be told from computing it. Threat model and guarantees: docs/grading.md.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import secrets
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course_helpers.checking import (
    GRADING_ENV,
    STRICT_ENV,
    SUBMISSION_FORMAT,
    judge,
    load_submission,
)
from course_helpers.records import invalid_reason

DEFAULT_TIMEOUT = 60
SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"  # the course's own answers
_CHECK_CALL = re.compile(r"""\bcheck\(\s*(['"])([^'"\n]+)\1""")


@dataclass
class ExerciseGrade:
    exercise_id: str
    status: str
    message: str
    points: int
    attempts: int = 0  # how many times check() ran for it
    first_attempt: str = ""  # the status of the first of them


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


_DUMP_CELL = (
    "import os as _os\n_os.makedirs({path!r})\n"
    "from course_helpers.checking import dump_for_grader as _dump\n_dump({path!r})"
)


MAX_RESTARTS = 2  # kernels a notebook may kill before the rest of it is given up


def run_notebook(notebook, folder: Path, record_dir: Path, timeout: int, kernel: str) -> str:
    """Execute ``notebook`` in a fresh kernel, then collect its answers into ``record_dir``.

    ``check`` keeps the answers in the kernel's memory; one extra cell, sent only after the
    notebook's own cells ran, writes them into ``record_dir``, a folder with a random name
    that this cell creates (so no earlier cell knows where it will be, or can pre-fill it).
    A cell that kills its kernel is skipped: a new kernel runs the notebook again without it
    (up to ``MAX_RESTARTS`` times), so the answers in the other cells still count.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    env = dict(os.environ)
    env.update({GRADING_ENV: "1", STRICT_ENV: "0", "COURSE_PROGRESS": "off"})
    source = nbformat.from_dict(notebook)  # a copy: the extra cell never reaches the caller
    source.cells.append(nbformat.v4.new_code_cell(_DUMP_CELL.format(path=str(record_dir))))
    crashed: list[int] = []  # numbers (from 1) of the code cells that killed a kernel
    while True:
        notebook = nbformat.from_dict(source)
        client = NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name=kernel,
            allow_errors=True,
            interrupt_on_timeout=True,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(folder)}},
        )
        running = 0  # 0: the kernel died before any cell ran
        code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
        try:
            with client.setup_kernel(env=env):
                for running, index in enumerate(code, start=1):
                    if running not in crashed:
                        client.execute_cell(notebook.cells[index], index)
        except CellTimeoutError:
            return "timed out"
        except DeadKernelError:
            crashed.append(running)
            if len(crashed) > MAX_RESTARTS or running in (0, len(code)):
                return _died(crashed, gave_up=True)
            continue
        break
    interrupted = any(
        output.get("ename") == "KeyboardInterrupt"
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
    if interrupted:
        return "timed out"
    return _died(crashed, gave_up=False) if crashed else "completed"


def _died(crashed: list[int], gave_up: bool) -> str:
    if crashed == [0]:
        return "kernel died before its first cell: no answers"
    cells = ", ".join(str(n) for n in crashed)
    if gave_up:
        return f"kernel died (code cell {cells}): no answers"
    return f"kernel died (code cell {cells}; run again without it, other answers kept)"


_SUSPECT_NAMES = {
    "reference": "reads an exercise's reference answer (.reference)",
    "build_reference": "reads an exercise's reference answer (.build_reference)",
    "COURSE_GRADING_DIR": "touches COURSE_GRADING_DIR",
    "modules": "touches sys.modules",
    "_grader_log": "touches the checker's answer log",
    "dump_for_grader": "touches the grader's answer channel",
    "collect": "touches course internals (collect)",
    "judge": "touches course internals (judge)",
    "getppid": "looks up its parent process",
    "kill": "sends signals to processes",
    "killpg": "sends signals to processes",
    "fork": "forks processes",
    "setsid": "detaches processes",
    "Popen": "starts other processes",
    "system": "starts other processes",
}
_COURSE_MODULES = ("course_helpers.checking", "course_helpers.exercises", "course_helpers.records")
# names honest code uses for its own variables (only `.reference` as an attribute is flagged)
_COMMON_NAMES = {"modules", "reference"}
# what the course's own exercise notebooks import from those modules (not internals)
_NOTEBOOK_HELPERS = {"course_helpers.exercises.lesson13.run_on_two_ranks"}
_TORCH_COMPARISONS = {"allclose", "equal", "isclose", "eq", "testing", "__eq__"}


def suspicious_code(notebook) -> list[str]:
    """Reasons (each once) to look at a notebook by hand: code cells that touch the course's
    internals, ``COURSE_GRADING_DIR``, ``sys.modules``, torch's comparisons or the references.
    A flag for a person to read, not a verdict: honest code can trip it."""
    import ast

    found: dict[str, None] = {}
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        source = "\n".join(
            "pass" if line.lstrip().startswith(("%", "!")) else line
            for line in cell.source.splitlines()
        )
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            reason = _suspect(node)
            if reason:
                found.setdefault(f"cell {number}: {reason}", None)
    return list(found)


def _suspect(node) -> str:
    import ast

    if isinstance(node, ast.Attribute) and node.attr in _SUSPECT_NAMES:
        return _SUSPECT_NAMES[node.attr]
    if isinstance(node, ast.Name) and node.id in _SUSPECT_NAMES and node.id not in _COMMON_NAMES:
        return _SUSPECT_NAMES[node.id]
    if isinstance(node, ast.Constant) and node.value == "COURSE_GRADING_DIR":
        return _SUSPECT_NAMES["COURSE_GRADING_DIR"]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if "course_helpers/" in node.value or "site-packages" in node.value:
            return "names a path inside the installed course package"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        module = getattr(node, "module", None) or ""
        names = [module] + [f"{module}.{a.name}" if module else a.name for a in node.names]
        if any(n.startswith(_COURSE_MODULES) and n not in _NOTEBOOK_HELPERS for n in names[1:]):
            return "imports course internals"
    targets = []
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("setattr", "delattr"):
        targets = node.args[:2]
    for target in targets:
        text = ast.unparse(target)
        if (
            text == "check"
            or text.startswith(("torch.", "course_helpers", "check."))
            or any(f".{name}" in text or text == name for name in _TORCH_COMPARISONS)
        ):
            return f"replaces {text} (a monkeypatch of torch or the checker)"
        if isinstance(target, ast.Constant) and target.value in _TORCH_COMPARISONS:
            return f"replaces {target.value} (a monkeypatch of torch)"
    return ""


def package_snapshot(root: Path | None = None) -> dict[Path, bytes]:
    """The bytes of every file of the course package, taken when grading starts."""
    root = Path(__file__).resolve().parent if root is None else root
    return {p: p.read_bytes() for p in sorted(root.rglob("*.py"))}


def restore_package(snapshot: dict[Path, bytes], root: Path | None = None) -> list[str]:
    """Put back any package file a submission changed, added or deleted; names them."""
    root = Path(__file__).resolve().parent if root is None else root
    changed = []
    for path in sorted(root.rglob("*.py")):
        if path not in snapshot:
            path.unlink()
            changed.append(f"added {path.name}")
    for path, data in snapshot.items():
        try:
            same = path.read_bytes() == data
        except OSError:
            same = False
        if not same:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            changed.append(f"changed {path.relative_to(root.parent)}")
    return changed


@functools.lru_cache(maxsize=1)
def _catalogue() -> dict:
    """The exercises and their references, loaded once, before any submission runs."""
    from course_helpers.exercises import catalog

    return {e.id: e for e in catalog()}


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
):
    """Run one notebook in its own worker process and judge what it recorded, here.

    Never raises for a bad notebook. ``solutions``: the folder of the course's solution
    notebooks (see :func:`expected_ids`). ``first_attempt``: grade each exercise's first
    checked answer instead of its last. ``limits``: :class:`course_helpers.sandbox.Limits`.
    ``hide``: folders the submission must not see (e.g. the other submissions).
    """
    import shutil

    import nbformat

    known = _catalogue()
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as err:
        return NotebookGrade(path, f"could not run: {type(err).__name__}: {err}")
    ids = expected_ids(notebook, path, solutions)
    flags = suspicious_code(notebook)
    if not ids:
        return NotebookGrade(path, "error: no recognised exercises in this notebook", [], flags)
    base = Path(tempfile.mkdtemp(prefix="course-grading-"))
    try:
        work = base / "work"
        work.mkdir()
        copy = work / Path(path).name
        shutil.copyfile(path, copy)
        token = secrets.token_hex(16)
        run = _run_worker(copy, work, token, timeout, kernel, limits, use_sandbox, hide or [])
        attempts, problem = _read_attempts(work / token)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    grades = [_grade_exercise(known.get(i), i, attempts, first_attempt) for i in ids]
    return NotebookGrade(path, run, grades, flags + ([problem] if problem else []))


def _run_worker(copy, work, token, timeout, kernel, limits, use_sandbox, hide) -> str:
    """Run the worker (see :func:`worker_main`) on ``copy``; its run status."""
    import signal
    import subprocess

    from course_helpers import sandbox

    argv = [sys.executable, "-m", "course_helpers.grading", "--worker", str(copy)]
    argv += ["--timeout", str(timeout), "--kernel", kernel]
    env = dict(os.environ)
    env.update(
        {
            "JUPYTER_RUNTIME_DIR": str(work / ".jupyter"),
            "IPYTHONDIR": str(work / ".ipython"),
            "MPLCONFIGDIR": str(work / ".matplotlib"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(work),
        }
    )
    env.pop(GRADING_ENV, None)
    cells = 1 + len(_code_cells(copy))
    process = subprocess.Popen(
        sandbox.command(argv, work, hide, use_sandbox),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=work,
        start_new_session=True,
        preexec_fn=sandbox.preexec(limits or sandbox.Limits()),
    )
    try:
        out, _ = process.communicate(
            token.encode() + b"\n", timeout=timeout * cells * (1 + MAX_RESTARTS) + 120
        )
    except subprocess.TimeoutExpired:
        out, status = b"", "timed out"
    else:
        status = ""
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # whatever it left behind in its session
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
    if status:
        return status
    lines = out.decode(errors="replace").strip().splitlines()
    if lines and lines[-1].startswith("run: "):
        return lines[-1].removeprefix("run: ")
    return f"kernel died (its worker ended with status {process.returncode})"


def _code_cells(path) -> list:
    import nbformat

    try:
        return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    except Exception:
        return []


def worker_main(path: str, timeout: int, kernel: str) -> int:
    """Inside the worker: run the notebook; the answers go to ``<folder>/<token>`` (the token
    arrives on stdin, so it is not on any command line a cell could read)."""
    import nbformat

    token = sys.stdin.readline().strip()
    folder = Path(path).resolve().parent
    notebook = nbformat.read(path, as_version=4)
    try:
        run = run_notebook(notebook, folder, folder / token, timeout, kernel)
    except Exception as err:
        run = f"could not run: {type(err).__name__}: {err}"
    print(f"run: {run}", flush=True)
    return 0


def _read_attempts(record_dir: Path) -> tuple[dict[str, list], str]:
    """Each exercise's submissions in order, and a problem with the log ("" when none)."""
    log = record_dir / "log.pt"
    if not log.exists():
        return {}, ""
    try:
        data = load_submission(log)
        items = data["attempts"]
        if data.get("format") != SUBMISSION_FORMAT or not isinstance(items, list):
            raise ValueError("unexpected layout")
    except Exception as err:
        return (
            {},
            f"the answer log is unreadable or malformed ({type(err).__name__}): nothing graded",
        )
    attempts: dict[str, list] = {}
    for item in items:
        if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
            attempts.setdefault(item[0], []).append(item[1])
    return attempts, ""


def _grade_exercise(exercise, exercise_id: str, attempts: dict, first: bool) -> ExerciseGrade:
    if exercise is None:
        return ExerciseGrade(exercise_id, "error", "There is no exercise with this id.", 0)
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
        attempts=len(tries),
        first_attempt=verdicts[0][0],
    )


def _judge_one(exercise, submission) -> tuple[str, str]:
    """(status, message) for one recorded submission, rejecting what collect never makes."""
    if not isinstance(submission, dict) or set(submission) - {
        "format",
        "exercise_id",
        "answer",
        "learner_record",
        "method",  # what the learner's code used (method checks), judged by judge()
    }:
        return "rejected", "The recorded answer is malformed (not a submission made by check)."
    if submission.get("learner_record"):
        return "rejected", "The answer is a hand-made record (a dict shaped like the checker's)."
    reason = invalid_reason(submission.get("answer"))
    if reason:
        return "rejected", f"The recorded answer was rejected: {reason}."
    verdict = judge(exercise, submission)
    return verdict.status, verdict.message


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
        for e in nb.exercises:
            if e.attempts > 1:
                lines.append(f"  {e.exercise_id}: {e.attempts} attempts, first {e.first_attempt}")
        for reason in nb.review:
            lines.append(f"  NEEDS REVIEW (a flag, not a verdict): {reason}")
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
        errors = sum(1 for e in nb.exercises if e.status in ("error", "rejected"))
        suite = ET.SubElement(
            root,
            "testsuite",
            name=nb.path,
            tests=str(len(nb.exercises)),
            failures=str(failed),
            errors=str(errors),
        )
        properties = ET.SubElement(suite, "properties")
        properties.append(ET.Element("property", name="run", value=nb.run))
        for reason in nb.review:
            properties.append(ET.Element("property", name="needs_review", value=reason))
        for e in nb.exercises:
            case = ET.SubElement(suite, "testcase", classname=nb.path, name=e.exercise_id)
            if e.status in ("error", "rejected"):
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
    parser.add_argument(
        "--first-attempt",
        action="store_true",
        help="grade each exercise's first checked answer (default: the last)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="submissions graded at once (default: the number of cores)",
    )
    parser.add_argument("--csv", metavar="FILE", help="also write a CSV gradebook")
    parser.add_argument(
        "--per-student", metavar="DIR", help="also write one JSON report per notebook into DIR"
    )
    parser.add_argument("--memory-mb", type=int, default=4096, help="memory limit per process")
    parser.add_argument(
        "--no-sandbox", action="store_true", help="do not use bubblewrap even where it works"
    )
    args = parser.parse_args(argv)
    return grade_batch(args)


def grade_batch(args) -> int:
    """Grade every notebook of ``args.paths`` (see :func:`main`), ``args.jobs`` at a time."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from course_helpers import sandbox

    _catalogue()  # the judge and references, loaded before any submission runs
    snapshot = package_snapshot()
    use_sandbox = not args.no_sandbox
    sandboxed = use_sandbox and sandbox.bwrap_works()
    print(sandbox.isolation(use_sandbox), file=sys.stderr, flush=True)
    paths = notebook_paths(args.paths)
    needed = [Path(__file__).resolve(), Path(sys.prefix).resolve(), Path(sys.executable).resolve()]
    hide = sorted(
        folder
        for folder in {Path(p).resolve().parent for p in paths}
        if not any(n.is_relative_to(folder) for n in needed)
    )
    limits = sandbox.Limits(memory_mb=args.memory_mb)
    jobs = max(1, args.jobs)

    def one(path: str) -> NotebookGrade:
        try:
            return grade_notebook(
                path,
                timeout=args.timeout,
                kernel=args.kernel,
                first_attempt=args.first_attempt,
                limits=limits,
                use_sandbox=use_sandbox,
                hide=hide,
            )
        except Exception as err:  # a grader bug costs this notebook, not the batch
            return NotebookGrade(path, f"could not run: {type(err).__name__}: {err}")

    results: dict[str, NotebookGrade] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(one, path): path for path in paths}
        for done, future in enumerate(as_completed(futures), start=1):
            grade = future.result()
            # sandboxed, the package is read-only to submissions: a change comes from outside
            # (e.g. an author editing it), so it is left alone
            changed = [] if sandboxed else restore_package(snapshot)
            if changed:
                who = "" if jobs == 1 else " (by this or a concurrent submission)"
                grade.review.append(f"course package changed{who}, restored: {', '.join(changed)}")
            results[futures[future]] = grade
            flag = "  NEEDS REVIEW" if grade.review else ""
            print(
                f"[{done}/{len(paths)}] {grade.path}: {grade.score}/{grade.max_score} "
                f"({grade.run}){flag}",
                file=sys.stderr,
                flush=True,
            )
    grades = [results[path] for path in paths]
    print(score_table(grades))
    if args.json:
        Path(args.json).write_text(to_json(grades), encoding="utf-8")
    if args.junit:
        Path(args.junit).write_text(to_junit(grades), encoding="utf-8")
    if args.csv:
        Path(args.csv).write_text(to_csv(grades), encoding="utf-8")
    if args.per_student:
        folder = Path(args.per_student)
        folder.mkdir(parents=True, exist_ok=True)
        for grade in grades:
            (folder / f"{Path(grade.path).stem}.json").write_text(
                to_json([grade]), encoding="utf-8"
            )
    return exit_status(grades)


def to_csv(grades: list[NotebookGrade]) -> str:
    """A gradebook: one row per notebook, one column per exercise (points), then totals."""
    import csv
    import io

    ids = list(dict.fromkeys(e.exercise_id for nb in grades for e in nb.exercises))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["notebook", *ids, "score", "max_score", "run", "needs_review"])
    for nb in grades:
        points = {e.exercise_id: e.points for e in nb.exercises}
        writer.writerow(
            [nb.path, *(points.get(i, "") for i in ids), nb.score, nb.max_score, nb.run]
            + ["; ".join(nb.review)]
        )
    return buffer.getvalue()


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
    ok = all(
        nb.run == "completed" and nb.exercises and all(e.points for e in nb.exercises)
        for nb in grades
    )
    return 0 if ok else 1


if __name__ == "__main__":  # the worker: python -m course_helpers.grading --worker NOTEBOOK
    from course_helpers.__main__ import skip_unused_iri_checker

    skip_unused_iri_checker()
    _worker = argparse.ArgumentParser()
    _worker.add_argument("--worker", required=True)
    _worker.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT)
    _worker.add_argument("--kernel", default="python3")
    _args = _worker.parse_args()
    sys.exit(worker_main(_args.worker, _args.timeout, _args.kernel))
