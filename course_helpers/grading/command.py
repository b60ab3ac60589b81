"""Headless grading of learners' exercise notebooks (for instructors).

``python -m course_helpers grade PATH... [--jobs N] [--json F] [--junit F] [--csv F]
[--per-student DIR] [--first-attempt] [--timeout S] [--judge-timeout S] [--memory-mb M]
[--no-sandbox] [--shard I/N] [--results-format gradescope|prairielearn [--results F]]
[--class-report DIR [--class-report-learners]]``
(a PATH may be a folder: its ``*.ipynb`` files are graded in name order), and
``python -m course_helpers grade merge REPORT... [--json F] [--csv F] [--junit F]
[--class-report DIR]`` for the reports of shards (:mod:`course_helpers.grading.shards`).
``--class-report DIR``: what the class gets wrong, for instructors
(:mod:`course_helpers.grading.classreport`).

Each notebook is copied into its own temporary folder and run there by a worker process
(``--worker``; isolated with bubblewrap where it works, resource-limited always: see
:mod:`course_helpers.grading.sandbox`) in a fresh kernel with a per-cell timeout; a cell that raises
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
import os
import sys
import time
from pathlib import Path

from course_helpers.errors import CourseError
from course_helpers.grading.grade import NotebookGrade, grade_notebook, judge_records, preload
from course_helpers.grading.judging import DEFAULT_JUDGE_TIMEOUT, JudgeServer
from course_helpers.grading.platforms import DEFAULT_PATHS, FORMATS, write_results
from course_helpers.grading.reports import (
    exit_status,
    safe_text,
    score_table,
    to_csv,
    to_json,
    to_junit,
)
from course_helpers.grading.sandbox import DEFAULT_MEMORY_MB
from course_helpers.grading.shards import keyed_paths, merge, parse_shard, read_report
from course_helpers.grading.tampering import package_snapshot, restore_package
from course_helpers.grading.worker import DEFAULT_TIMEOUT


def main(argv: list[str] | None = None) -> int:
    """Grade notebooks; exit status 1 when any exercise did not pass, 0 otherwise.
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
        "--per-student", metavar="DIR", help="also write one JSON report per notebook into DIR"
    )
    parser.add_argument(
        "--memory-mb",
        type=int,
        default=DEFAULT_MEMORY_MB,
        help=f"address space per process, MiB (default {DEFAULT_MEMORY_MB})",
    )
    parser.add_argument(
        "--judge-timeout",
        type=float,
        default=DEFAULT_JUDGE_TIMEOUT,
        help="seconds allowed to judge one notebook's recorded answers "
        f"(default {DEFAULT_JUDGE_TIMEOUT})",
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
    return grade_batch(args)


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--results-format",
        choices=FORMATS,
        help="also write the results for this autograding platform (one submission)",
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
    problem = class_report_problem(args)
    if problem:
        parser.error(problem)
    try:
        grades, keys = merge([read_report(path) for path in args.reports])
    except CourseError as err:
        print(f"grade merge: {err}", file=sys.stderr)
        return 2
    print(score_table(grades))
    args.per_student = None
    if write_reports(args, grades, keys, seconds=0.0):
        return 2
    return exit_status(grades)


def write_reports(args, grades, keys, *, shard=None, finished=(), seconds=None) -> str:
    """(Re)write the report files for ``grades`` so far (with their shard ``keys``), the
    per-student files of the notebooks that just ``finished``, and, once the batch is done
    (``seconds`` given), the platform's results file and the class report. The same for a
    run, a shard, a merge. Returns what could not be written ("" when all was), said on
    stderr too."""
    if args.json:
        Path(args.json).write_text(to_json(grades, keys, shard), encoding="utf-8")
    if args.junit:
        Path(args.junit).write_text(to_junit(grades), encoding="utf-8")
    if args.csv:
        Path(args.csv).write_text(to_csv(grades), encoding="utf-8")
    if args.per_student:
        key_of = dict(zip((g.path for g in grades), keys, strict=True))
        folder = Path(args.per_student)
        folder.mkdir(parents=True, exist_ok=True)
        for grade in finished:
            (folder / f"{Path(grade.path).stem}.json").write_text(
                to_json([grade], [key_of[grade.path]], shard), encoding="utf-8"
            )
    if args.results_format and seconds is not None:
        target = args.results or DEFAULT_PATHS[args.results_format]
        write_results(grades, args.results_format, target, seconds)
    if args.class_report and seconds is not None:
        from course_helpers.grading.classreport import write_class_report

        try:
            write_class_report(grades, args.class_report, keys, learners=args.class_report_learners)
        except CourseError as err:
            print(f"grade: {err}", file=sys.stderr)
            return str(err)
    return ""


def class_report_problem(args) -> str:
    """What is wrong with ``--class-report`` / ``--class-report-learners``, or ""."""
    from course_helpers.grading.classreport.files import folder_problem

    if args.class_report_learners and not args.class_report:
        return "--class-report-learners names notebooks in the class report: add --class-report DIR"
    return folder_problem(args.class_report) if args.class_report else ""


def argument_problem(args) -> str:
    """What is wrong with the command line (checked before grading starts), or ""."""
    limits = (("--timeout", args.timeout), ("--memory-mb", args.memory_mb))
    for name, value in (*limits, ("--judge-timeout", args.judge_timeout)):
        if not value > 0:  # NaN too
            return f"{name} must be a positive number, not {value}"
    if args.jobs < 1:
        return f"--jobs must be at least 1, not {args.jobs}"
    for path in args.paths:
        if not Path(path).exists() and not Path(path).is_symlink():
            return f"{path}: no such file or folder"
    if not notebook_paths(args.paths):
        return f"no notebooks (*.ipynb) in {', '.join(args.paths)}: nothing to grade"
    for option in ("json", "junit", "csv"):
        target = getattr(args, option)
        if target:
            parent = Path(target).parent
            if Path(target).is_dir():
                return f"--{option} {target}: is a folder; name a file to write"
            if not parent.is_dir():
                return f"--{option} {target}: folder {parent} does not exist; create it first"
            if not os.access(parent, os.W_OK):
                return f"--{option} {target}: folder {parent} is not writable"
    problem = class_report_problem(args)
    if problem:
        return problem
    if args.per_student:
        folder = Path(args.per_student)
        if folder.exists() and not folder.is_dir():
            return f"--per-student {folder}: is a file; name a folder (it is created if missing)"
        existing = next((p for p in [folder, *folder.parents] if p.exists()), Path("."))
        if not existing.is_dir() or not os.access(existing, os.W_OK):
            return f"--per-student {folder}: cannot create a folder under {existing}"
    return ""


def grade_batch(args) -> int:
    """Grade every notebook of ``args.paths`` (see :func:`main`), ``args.jobs`` at a time."""
    preload()  # the judge, references and every module, loaded before any submission runs
    snapshot = package_snapshot()  # after preload: its own __pycache__ files are in it
    # judging processes are forked from a server forked now: before any submission runs,
    # and before this process starts threads
    with JudgeServer(judge_records) as judge_server:
        return _grade_all(args, snapshot, judge_server)


def _grade_all(args, snapshot, judge_server) -> int:
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from course_helpers.grading import sandbox

    use_sandbox = not args.no_sandbox
    print(sandbox.isolation(use_sandbox), file=sys.stderr, flush=True)
    keyed = keyed_paths(args.paths)
    if args.shard is not None:
        keyed = [(path, key) for path, key in keyed if args.shard.holds(key)]
        print(f"shard {args.shard}: {len(keyed)} notebooks", file=sys.stderr, flush=True)
    paths = [path for path, _ in keyed]
    started = time.perf_counter()
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
                judge_server=judge_server,
                judge_timeout=args.judge_timeout,
            )
        except Exception as err:  # a grader bug costs this notebook, not the batch
            return NotebookGrade(path, f"could not run: {type(err).__name__}: {err}")

    results: dict[str, NotebookGrade] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(one, path): path for path in paths}
        for done, future in enumerate(as_completed(futures), start=1):
            grade = future.result()
            # checked in every mode: sandboxed, a change means the sandbox failed (or someone
            # edited the package during the batch); either way it is put back and named
            changed = restore_package(snapshot)
            if changed:
                who = "" if jobs == 1 else " (by this or a concurrent submission)"
                grade.review.append(f"course package changed{who}, restored: {', '.join(changed)}")
            results[futures[future]] = grade
            flag = "  NEEDS REVIEW" if grade.review else ""
            print(
                f"[{done}/{len(paths)}] {safe_text(grade.path)}: {grade.score}/{grade.max_score} "
                f"({safe_text(grade.run)}){flag}",
                file=sys.stderr,
                flush=True,
            )
            # written as each notebook finishes: a batch that stalls later keeps these
            finished = [(p, key) for p, key in keyed if p in results]
            write_reports(
                args,
                [results[p] for p, _ in finished],
                [key for _, key in finished],
                shard=args.shard,
                finished=[grade],
            )
    grades = [results[path] for path in paths]
    print(score_table(grades))
    keys = [key for _, key in keyed]
    seconds = time.perf_counter() - started
    if write_reports(args, grades, keys, shard=args.shard, seconds=seconds):
        return 2
    return exit_status(grades)


def notebook_paths(paths: list[str]) -> list[str]:
    """The notebooks to grade: each path as given, a folder's ``*.ipynb`` files sorted."""
    return [path for path, _ in keyed_paths(paths)]
