"""Grading throughput: N copies of one notebook, graded as one batch.

``python benchmarks/bench_grading.py [--count N] [--jobs J] [--source NB] [--no-sandbox]
[--course DIR] [--runs R]`` prints the wall time, notebooks per minute and seconds per
notebook (and the load average, since the machine may be shared); ``--runs`` repeats the
measurement. ``--course DIR`` grades with the ``course_helpers`` of another checkout (e.g.
``git worktree add /tmp/main main``), so that two versions can be measured back to back on
the same machine (the grader runs in a temporary folder, so that it is that checkout's code,
not the current folder's, that Python imports). The default source is
``solutions/01_tensors.ipynb``: a notebook with every exercise answered, so every check
(functions called on all their test inputs included) is judged, as for a finished
submission; ``--source exercises/01_tensors.ipynb`` grades untouched copies. Each copy runs
in its own worker and kernel (bubblewrap-isolated where it works), exactly as
``python -m course_helpers grade``.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "solutions" / "01_tensors.ipynb"


def measure(
    count: int, jobs: int, sandbox: bool = True, source: Path = SOURCE, course: Path | None = None
) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        subs = Path(tmp) / "subs"
        subs.mkdir()
        for i in range(count):
            shutil.copy(source, subs / f"student{i:04d}.ipynb")
        command = [sys.executable, "-m", "course_helpers", "grade", str(subs)]
        command += ["--jobs", str(jobs), "--csv", str(Path(tmp) / "book.csv")]
        if not sandbox:
            command.append("--no-sandbox")
        env = dict(os.environ)
        if course is not None:
            env["PYTHONPATH"] = str(course)
        start = time.perf_counter()
        subprocess.run(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
            env=env,
            cwd=tmp,
        )
        seconds = time.perf_counter() - start
        with open(Path(tmp) / "book.csv", newline="") as f:
            book = list(csv.DictReader(f))
        rows = len(book)
        full = sum(1 for row in book if row["score"] == row["max_score"])
    return {
        "notebook": source.name,
        "count": count,
        "graded": rows,
        "full_marks": full,
        "jobs": jobs,
        "seconds": seconds,
        "per_minute": 60 * count / seconds,
        "per_notebook": seconds / count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--course", type=Path, help="the checkout whose course_helpers grades")
    parser.add_argument("--runs", type=int, default=1, help="measurements, one after another")
    args = parser.parse_args()
    course = args.course.resolve() if args.course else None
    for _ in range(args.runs):
        r = measure(args.count, args.jobs, not args.no_sandbox, args.source.resolve(), course)
        load = os.getloadavg()[0]
        print(
            f"{r['graded']}/{r['count']} copies of {r['notebook']} graded "
            f"({r['full_marks']} with full marks) with --jobs {r['jobs']}: "
            f"{r['seconds']:.1f} s, {r['per_minute']:.1f} notebooks/min, "
            f"{r['per_notebook']:.2f} s per notebook (load average {load:.1f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
