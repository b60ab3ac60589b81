"""Grade a batch: prepare everything before the first submission runs, grade ``--jobs``
notebooks at a time, and (re)write the reports as each one finishes.

Before any submission runs: every module is imported and every needed reference built
(``grade.prepare``), the package snapshotted, the judge server forked, the signing key read.
From the first submission on, this process refuses every import (``judging.refuse_imports``)
and is not dumpable (a kernel running as the same user cannot read its memory, its key or
its pipes through ``/proc``); both are undone when the batch ends.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from course_helpers.grading.grade import (
    NotebookGrade,
    expected_ids,
    grade_notebook,
    judge_answers,
    prepare,
    read_submission,
)
from course_helpers.grading.judging import JudgeServer, refuse_imports
from course_helpers.grading.platforms import assignment_exercises, write_results
from course_helpers.grading.reports import (
    GRADER_FAILED,
    exit_status,
    grader_failure,
    safe_text,
    score_table,
    to_csv,
    to_json,
    to_junit,
)
from course_helpers.grading.shards import keyed_paths
from course_helpers.grading.signing import load_key, run_key
from course_helpers.grading.tampering import compile_package, package_snapshot, restore_package


def grade_batch(args) -> int:
    """Grade every notebook of ``args.paths`` (see ``grading.command``), ``args.jobs`` at a
    time; the exit status."""
    keyed = keyed_paths(args.paths)
    if args.shard is not None:
        keyed = [(path, key) for path, key in keyed if args.shard.holds(key)]
    key = load_key(args.key_file) if args.key_file else run_key()
    assignment = assignment_exercises(args.assignment) if args.assignment else []
    prepare(_needed_ids([path for path, _ in keyed], assignment))  # before any submission runs
    if args.class_report or args.results_format == "prairielearn":
        from course_helpers.grading.classreport import prepare_pictures

        prepare_pictures()  # matplotlib's modules too are imported before any submission runs
    compile_package()
    snapshot = package_snapshot()  # after preparing: its own __pycache__ files are in it
    # judging processes are forked from a server forked now: before any submission runs,
    # and before this process starts threads
    with JudgeServer(judge_answers, args.judge_memory_mb) as judge_server, _guarded():
        return _grade_all(args, keyed, key, snapshot, judge_server, assignment)


def _needed_ids(paths: list[str], assignment: list[str]) -> list[str]:
    """Every exercise the notebooks will be graded on (read now, before any runs)."""
    import nbformat

    ids: dict[str, None] = dict.fromkeys(assignment)
    for path in paths:
        data, refused = read_submission(path)
        if refused:
            continue
        try:
            notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
        except Exception:
            continue
        ids.update(dict.fromkeys(expected_ids(notebook, path, also=assignment)))
    return list(ids)


@contextlib.contextmanager
def _guarded():
    """While grading: no new import, not dumpable (see the module docstring)."""
    from course_helpers.grading.worker import PR_SET_DUMPABLE, _prctl

    refuse_imports(True)
    _prctl(PR_SET_DUMPABLE, 0)
    try:
        yield
    finally:
        _prctl(PR_SET_DUMPABLE, 1)
        refuse_imports(False)


def _grade_all(args, keyed, key, snapshot, judge_server, assignment) -> int:
    from course_helpers.grading import sandbox

    use_sandbox = not args.no_sandbox
    print(sandbox.isolation(use_sandbox), file=sys.stderr, flush=True)
    if args.shard is not None:
        print(f"shard {args.shard}: {len(keyed)} notebooks", file=sys.stderr, flush=True)
    paths = [path for path, _ in keyed]
    started = time.perf_counter()
    limits = sandbox.Limits(
        memory_mb=args.memory_mb, disk_mb=args.disk_mb, processes=args.processes
    )
    jobs = max(1, args.jobs)
    hide = hidden_folders(paths)

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
                assignment=assignment,
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
            finished = [(p, name) for p, name in keyed if p in results]
            write_reports(
                args,
                [results[p] for p, _ in finished],
                [name for _, name in finished],
                key,
                shard=args.shard,
                finished=[grade],
            )
    grades = [results[path] for path in paths]
    print(score_table(grades))
    names = [name for _, name in keyed]
    seconds = time.perf_counter() - started
    if write_reports(args, grades, names, key, shard=args.shard, seconds=seconds):
        return 2
    status = exit_status(grades)
    if status == GRADER_FAILED:
        reason = grader_failure(grades)
        what = f"every notebook, the same way: {reason}" if reason else "some notebooks"
        print(
            f"GRADER FAILURE: the grader could not run {safe_text(what, 400)}. Nothing of "
            "those notebooks was graded: this is not a verdict. Check that the course is "
            "installed where the worker runs (the same Python, importable inside the "
            "sandbox), then grade again.",
            file=sys.stderr,
            flush=True,
        )
    return status


def hidden_folders(paths: list[str]) -> list[Path]:
    """The folders holding submissions that the sandbox would otherwise show (they lie inside
    a folder it binds, e.g. the virtualenv): each replaced there by an empty one. A folder is
    the one the submission was found in, never where a link points (a link to ``/dev/null``
    must not hide ``/dev``), and never one the sandbox needs."""
    from course_helpers.grading.sandbox import code_folders

    shown = [Path(folder) for folder in code_folders()]
    needed = [Path(__file__).resolve(), Path(sys.prefix).resolve(), Path(sys.executable).resolve()]
    found = set()
    for path in paths:
        folder = Path(os.path.abspath(path)).parent.resolve()
        inside = any(folder.is_relative_to(top) and folder != top for top in shown)
        if inside and not any(n.is_relative_to(folder) for n in needed):
            found.add(folder)
    return sorted(found)


def write_reports(args, grades, keys, key, *, shard=None, finished=(), seconds=None) -> str:
    """(Re)write the report files for ``grades`` so far (with their shard ``keys``, signed
    with ``key``), the per-student files of the notebooks that just ``finished``, and, once
    the batch is done (``seconds`` given), the platform's results file and the class report.
    The same for a run, a shard, a merge. Each file is written whole, then moved into place.
    Returns what could not be written ("" when all was), said on stderr too."""
    if args.json:
        _replace(args.json, to_json(grades, keys, shard, key))
    if args.junit:
        _replace(args.junit, to_junit(grades))
    if args.csv:
        _replace(args.csv, to_csv(grades))
    if args.per_student:
        key_of = dict(zip((g.path for g in grades), keys, strict=True))
        for grade in finished:
            target = per_student_path(Path(args.per_student), key_of[grade.path])
            target.parent.mkdir(parents=True, exist_ok=True)
            _replace(target, to_json([grade], [key_of[grade.path]], shard, key))
    if args.results_format and seconds is not None:
        from course_helpers.grading.platforms import DEFAULT_PATHS

        target = args.results or DEFAULT_PATHS[args.results_format]
        ids = assignment_exercises(args.assignment)
        write_results(grades, args.results_format, target, seconds, ids)
    if getattr(args, "class_report", None) and seconds is not None:
        from course_helpers.errors import CourseError
        from course_helpers.grading.classreport import write_class_report

        try:
            write_class_report(grades, args.class_report, keys, learners=args.class_report_learners)
        except CourseError as err:
            print(f"grade: {err}", file=sys.stderr, flush=True)
            return str(err)
    return ""


def per_student_path(folder: Path, key: str) -> Path:
    """Where ``--per-student`` writes a submission's report: its key (unique in the batch:
    ``subs/alice.ipynb``, ``submitted/alice/ps1/01_tensors.ipynb``) below ``folder``, with
    ``.json`` for ``.ipynb``; never outside ``folder``. A folder whose name ends in ``.json``
    (or ``~dir``) gets ``~dir`` after it, so no folder is ever named like a report: one to
    one, whatever names the submissions' folders have."""
    parts = [p for p in key.split("/") if p not in ("", ".", "..")] or ["notebook"]
    safe = [p.encode("utf-8", "backslashreplace").decode("utf-8") for p in parts]
    safe[:-1] = [p + "~dir" if p.endswith((".json", "~dir")) else p for p in safe[:-1]]
    return folder.joinpath(*safe).with_suffix(".json")


def _replace(path, text: str) -> None:
    """Write ``text`` to ``path`` through a new file moved into place (a process holding
    the old file open writes into nothing that is read)."""
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    partial.write_text(text, encoding="utf-8", errors="backslashreplace")
    os.replace(partial, target)
