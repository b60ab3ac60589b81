"""Headless grading of learners' exercise notebooks (for instructors).

``python -m course_helpers grade PATH... [--jobs N] [--json F] [--junit F] [--csv F]
[--per-student DIR] [--first-attempt] [--timeout S] [--judge-timeout S] [--memory-mb M]
[--disk-mb D] [--processes P] [--no-sandbox] [--shard I/N] [--key-file K]
[--results-format gradescope|prairielearn --assignment LESSON [--results F]]``
(a PATH may be a folder: its ``*.ipynb`` files, in subfolders too, are graded in name
order), and ``python -m course_helpers grade merge REPORT... --key-file K [--json F]
[--csv F] [--junit F]`` for the reports of shards (:mod:`course_helpers.grading.shards`).
Both take ``--class-report DIR [--class-report-learners]``: what the class gets wrong, for
instructors (:mod:`course_helpers.grading.classreport`).

Each notebook is run by a worker process (``grading.worker``; isolated with bubblewrap where
it works, within one resource budget per notebook: see :mod:`course_helpers.grading.sandbox`
and :mod:`course_helpers.grading.budget`) in a fresh kernel with a per-cell timeout; a cell
that raises or times out does not stop the notebook. In the kernel, ``check`` sends each
answer to the worker as it is made. Pass/fail is decided here, in judging processes forked
before any submission ran (:mod:`course_helpers.grading.judging`), after each recorded
answer is validated (hand-made or inconsistent records are rejected).

Scoring: one point per expected exercise: the ``check("ID", ...)`` calls in the notebook and
those of the course's solution notebook of the same lesson (see ``grade.expected_ids``); an
exercise never checked scores 0 as "not attempted". A notebook with no recognised exercise is
an error. Code that reads the references or touches the course's internals is flagged "needs
review" (``tampering.suspicious_code``). Threat model and guarantees: docs/grading.md.
Exit status: 0 all passed, 1 some did not (a verdict), 2 a bad command line or merge, 3 the
grader itself failed (``reports.GRADER_FAILED``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from course_helpers.errors import CourseError
from course_helpers.grading.judging import DEFAULT_JUDGE_MEMORY_MB, DEFAULT_JUDGE_TIMEOUT
from course_helpers.grading.platforms import DEFAULT_PATHS, FORMATS, assignment_exercises
from course_helpers.grading.reports import exit_status, score_table
from course_helpers.grading.sandbox import DEFAULT_DISK_MB, DEFAULT_MEMORY_MB, DEFAULT_PROCESSES
from course_helpers.grading.shards import keyed_paths, merge, parse_shard, read_report, repeated_key
from course_helpers.grading.signing import KEY_ENV, load_key
from course_helpers.grading.worker import DEFAULT_TIMEOUT

MAX_SECONDS = 86400  # the longest timeout accepted: a day
MAX_MB = 2**20  # the largest memory or disk size accepted: 1 TiB


def main(argv: list[str] | None = None) -> int:
    """Grade notebooks; see the module docstring for the exit status.
    ``grade merge REPORT...`` merges the reports of shards instead (see ``grading.shards``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        return merge_main(argv[1:])
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
        "--per-student",
        metavar="DIR",
        help="also write one JSON report per notebook into DIR (DIR/<its path below PATH>.json)",
    )
    parser.add_argument(
        "--memory-mb",
        type=int,
        default=DEFAULT_MEMORY_MB,
        help="memory per notebook where control groups can be made (all its processes and "
        f"tmpfs together), else address space per process, MiB (default {DEFAULT_MEMORY_MB})",
    )
    parser.add_argument(
        "--disk-mb",
        type=int,
        default=DEFAULT_DISK_MB,
        help="size of the sandbox's /tmp (with the work folder) and of its /dev/shm, MiB "
        f"(default {DEFAULT_DISK_MB})",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=DEFAULT_PROCESSES,
        help="processes per notebook, in the sandbox or its control group (default "
        f"{DEFAULT_PROCESSES}; without either, per user)",
    )
    parser.add_argument(
        "--judge-timeout",
        type=float,
        default=DEFAULT_JUDGE_TIMEOUT,
        help="seconds allowed to judge one notebook's recorded answers "
        f"(default {DEFAULT_JUDGE_TIMEOUT})",
    )
    parser.add_argument(
        "--judge-memory-mb",
        type=int,
        default=DEFAULT_JUDGE_MEMORY_MB,
        help=f"memory a notebook's judging may use, MiB (default {DEFAULT_JUDGE_MEMORY_MB})",
    )
    parser.add_argument(
        "--no-sandbox", action="store_true", help="do not use bubblewrap even where it works"
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="grade only shard I of N (a stable split: docs/grading.md); merge with 'grade merge'",
    )
    _add_report_options(parser)
    args = parser.parse_args(argv)
    try:
        args.shard = parse_shard(args.shard) if args.shard else None
    except CourseError as err:
        parser.error(str(err))
    problem = argument_problem(args)
    if problem:
        parser.error(problem)  # exit status 2, before anything is graded
    from course_helpers.grading.batch import grade_batch

    return grade_batch(args)


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key-file",
        metavar="K",
        default=os.environ.get(KEY_ENV) or None,
        help="the instructor's key that signs the --json reports and that 'grade merge' checks "
        f"(made if missing; default ${KEY_ENV}; without one, reports cannot be merged)",
    )
    parser.add_argument(
        "--results-format",
        choices=FORMATS,
        help="also write the results for this autograding platform (one submission)",
    )
    parser.add_argument(
        "--assignment",
        metavar="LESSON",
        help="with --results-format: the lesson(s) graded, e.g. 01_tensors (comma-separated); "
        "each of their exercises counts once, at its best result in the submission",
    )
    parser.add_argument(
        "--results",
        metavar="FILE",
        help="where --results-format writes (default: the platform's own path)",
    )
    parser.add_argument(
        "--class-report",
        metavar="DIR",
        help="also write the class report into DIR: pictures (index.html), JSON and CSV",
    )
    parser.add_argument(
        "--class-report-learners",
        action="store_true",
        help="name each notebook in the class report (default: counts only, no names)",
    )


def merge_main(argv: list[str]) -> int:
    """``grade merge REPORT...``: the reports of shards 1..N, merged into one run's reports."""
    parser = argparse.ArgumentParser(
        prog="python -m course_helpers grade merge",
        description="Merge the --json reports of 'grade --shard I/N' runs into one run's reports.",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="the shards' --json files")
    parser.add_argument("--json", metavar="FILE", help="write the merged results as JSON")
    parser.add_argument("--junit", metavar="FILE", help="write the merged results as JUnit XML")
    parser.add_argument("--csv", metavar="FILE", help="write a merged CSV gradebook")
    _add_report_options(parser)
    args = parser.parse_args(argv)
    args.per_student = None
    if not args.key_file:
        parser.error(
            f"name the key the shards were graded with: --key-file K (or ${KEY_ENV}); "
            "reports signed by no key of yours are not merged"
        )
    problem = output_problem(args)
    if problem:
        parser.error(problem)
    try:
        key = load_key(args.key_file, create=False)
        grades, keys = merge([read_report(path, key) for path in args.reports])
    except CourseError as err:
        print(f"grade merge: {err}", file=sys.stderr)
        return 2
    from course_helpers.grading.batch import write_reports

    print(score_table(grades))
    if write_reports(args, grades, keys, key, seconds=0.0):
        return 2
    return exit_status(grades)


def argument_problem(args) -> str:
    """What is wrong with the command line (checked before grading starts), or ""."""
    for name, value, limit in (
        ("--timeout", args.timeout, MAX_SECONDS),
        ("--judge-timeout", args.judge_timeout, MAX_SECONDS),
        ("--memory-mb", args.memory_mb, MAX_MB),
        ("--disk-mb", args.disk_mb, MAX_MB),
        ("--processes", args.processes, 2**22),
        ("--judge-memory-mb", args.judge_memory_mb, MAX_MB),
    ):
        if not value > 0:  # NaN too
            return f"{name} must be a positive number, not {value}"
        if not (math.isfinite(value) and value <= limit):
            return f"{name} must be at most {limit}, not {value}"
    if args.disk_mb < 64:
        return f"--disk-mb must be at least 64 (a notebook may be 20 MiB), not {args.disk_mb}"
    if not 1 <= args.jobs <= 1024:
        return f"--jobs must be between 1 and 1024, not {args.jobs}"
    if not args.kernel.strip() or "\0" in args.kernel:
        return f"--kernel {args.kernel!r}: name a Jupyter kernel, e.g. python3"
    for path in args.paths:
        if not Path(path).exists() and not Path(path).is_symlink():
            return f"{path}: no such file or folder"
    keyed = keyed_paths(args.paths)
    if not keyed:
        return f"no notebooks (*.ipynb) in {', '.join(args.paths)}: nothing to grade"
    return repeated_key(keyed) or output_problem(args)


def output_problem(args) -> str:
    """What is wrong with the report options (files, folders, key, platform), or ""."""
    for option in ("json", "junit", "csv"):
        problem = _file_problem(f"--{option}", getattr(args, option))
        if problem:
            return problem
    if args.per_student:
        folder = Path(args.per_student)
        if folder.exists() and not folder.is_dir():
            return f"--per-student {folder}: is a file; name a folder (it is created if missing)"
        existing = next((p for p in [folder, *folder.parents] if p.exists()), Path("."))
        if not existing.is_dir() or not os.access(existing, os.W_OK):
            return f"--per-student {folder}: cannot create a folder under {existing}"
    if args.results and not args.results_format:
        return "--results needs --results-format gradescope or prairielearn"
    if args.assignment and not args.results_format:
        return "--assignment goes with --results-format (it says what a submission is graded on)"
    if args.results_format:
        if not args.assignment:
            return (
                f"--results-format {args.results_format} needs --assignment LESSON (e.g. "
                "01_tensors): each of its exercises counts once, so copies of a notebook or "
                "another lesson's notebook add nothing"
            )
        try:
            assignment_exercises(args.assignment)
        except CourseError as err:
            return str(err)
        target = args.results or DEFAULT_PATHS[args.results_format]
        problem = _file_problem("--results", target, create_folder=True)
        if problem:
            return problem
    if args.class_report_learners and not args.class_report:
        return "--class-report-learners names notebooks in the class report: add --class-report DIR"
    if args.class_report:
        from course_helpers.grading.classreport.files import folder_problem

        problem = folder_problem(args.class_report)
        if problem:
            return problem
    if args.key_file:
        return _key_problem(args.key_file)
    return ""


def _file_problem(option: str, target, create_folder: bool = False) -> str:
    """Why a report file cannot be written at ``target`` ("" when it can)."""
    if not target:
        return ""
    path = Path(target)
    if path.is_dir():
        return f"{option} {target}: is a folder; name a file to write"
    if path.is_symlink() and not path.exists():
        return f"{option} {target}: is a broken link; name a file to write"
    parent = path.parent
    if create_folder:  # made when written: its nearest existing folder must be writable
        parent = next((p for p in [parent, *parent.parents] if p.exists()), Path("."))
    elif not parent.is_dir():
        return f"{option} {target}: folder {parent} does not exist; create it first"
    if not parent.is_dir():
        return f"{option} {target}: {parent} is not a folder"
    if not os.access(parent, os.W_OK):
        return f"{option} {target}: folder {parent} is not writable"
    return ""


def _key_problem(key_file: str) -> str:
    """Why ``key_file`` cannot be the signing key ("" when it can)."""
    from course_helpers.grading.sandbox import visible_folders

    path = Path(key_file)
    if path.is_dir():
        return f"--key-file {key_file}: is a folder; name a file (it is made if missing)"
    where = (path.absolute(), path.resolve())
    shown = [f for f in visible_folders() if any(p.is_relative_to(f) for p in where)]
    if shown:
        return (
            f"--key-file {key_file}: lies in {shown[0]}, which graded kernels can read; "
            "keep the key outside the course, its virtualenv, Python, /usr and /etc"
        )
    if not path.exists():
        return _file_problem("--key-file", key_file)
    try:
        load_key(key_file, create=False)
    except CourseError as err:
        return str(err)
    return ""


def notebook_paths(paths: list[str]) -> list[str]:
    """The notebooks to grade: each path as given, a folder's ``*.ipynb`` files sorted."""
    return [path for path, _ in keyed_paths(paths)]
