"""The class report's cost, built from shard reports alone (no re-grading), as ``grade
merge ... --class-report DIR`` builds it for a class graded on SLURM or Kubernetes.

``python benchmarks/bench_class_report.py [--learners 60 1000] [--lessons all] [--shards 8]
[--repeat 3]`` plans a class with ``benchmarks/class_generator.py`` (every learner one
notebook per lesson, all 13 lessons by default), turns the plans into the grades the grader
gives (``synthetic_grades``: the same fields, the judged verdicts' own messages), writes them
as N signed shard reports, then measures, in this process, each step of the merge:

- ``read``: reading and checking the shard reports (signature, fields) and merging them;
- ``build``: the class report's figures (``classreport.model.build``);
- ``write``: its pictures (SVG, the overview PNG), page, JSON and CSV files;

and, once, the whole command in a fresh process (``python -m course_helpers grade merge``,
imports included). Wall time (``perf_counter``) and CPU time (``process_time``) are given;
on a shared machine, CPU time is the steadier of the two. Grading itself is measured by
``bench_grading.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import class_generator  # noqa: E402 (benchmarks/ is no package)


def _lessons_with_exercises() -> tuple:
    """Every lesson that has an exercise notebook (00 has none), in course order."""
    from pathlib import Path

    solutions = Path(__file__).resolve().parents[1] / "solutions"
    return tuple(sorted(path.stem for path in solutions.glob("*.ipynb")))


def _timed(function):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def shard_reports(folder: Path, learners: int, lessons, shards: int, seed: int = 0):
    """Write the signed shard reports of a planned class; (paths, key path, notebooks)."""
    from course_helpers.grading.reports import to_json
    from course_helpers.grading.shards import Shard, shard_of
    from course_helpers.grading.signing import load_key

    made = class_generator.plan_class(folder / "submitted", learners, lessons, None, seed)
    grades, keys = class_generator.synthetic_grades(made)
    keys = [f"submitted/{k}" for k in keys]
    key_path = folder / "grading.key"
    key = load_key(key_path)
    paths = []
    for index in range(1, shards + 1):
        mine = [(g, k) for g, k in zip(grades, keys, strict=True) if shard_of(k, shards) == index]
        path = folder / f"shard-{index}.json"
        text = to_json([g for g, _ in mine], [k for _, k in mine], Shard(index, shards), key)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths, key_path, len(grades)


def measure(paths, key_path, out: Path) -> dict:
    """One in-process run of the merge's steps; seconds (wall, cpu) of each."""
    from course_helpers.grading.classreport import files, model
    from course_helpers.grading.shards import merge, read_report
    from course_helpers.grading.signing import load_key

    key = load_key(key_path, create=False)
    (grades, keys), *read = _timed(lambda: merge([read_report(str(p), key) for p in paths]))
    report, *build = _timed(lambda: model.build(grades, keys))
    _, *write = _timed(lambda: files.write(report, str(out)))
    return {"read": read, "build": build, "write": write}


def command_seconds(paths, key_path, out: Path) -> float:
    """The whole ``grade merge --class-report`` in a fresh process, wall seconds."""
    argv = [sys.executable, "-m", "course_helpers", "grade", "merge", *map(str, paths)]
    argv += ["--key-file", str(key_path), "--class-report", str(out)]
    env = dict(os.environ, OMP_NUM_THREADS="1", COURSE_PROGRESS="off")
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"grade merge failed ({done.returncode}): {done.stderr.strip()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, nargs="+", default=[60, 1000])
    parser.add_argument("--lessons", nargs="+", default=["all"])
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lessons = _lessons_with_exercises() if args.lessons == ["all"] else tuple(args.lessons)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for learners in args.learners:
        with tempfile.TemporaryDirectory(prefix="bench-class-report-") as tmp:
            folder = Path(tmp)
            paths, key_path, notebooks = shard_reports(folder, learners, lessons, args.shards)
            megabytes = sum(p.stat().st_size for p in paths) / 2**20
            runs = [measure(paths, key_path, folder / f"report-{n}") for n in range(args.repeat)]
            whole = command_seconds(paths, key_path, folder / "report-command")
            page = (folder / "report-0" / "index.html").stat().st_size / 2**20
        steps = {
            step: [statistics.median(r[step][i] for r in runs) for i in (0, 1)]
            for step in ("read", "build", "write")
        }
        parts = ", ".join(f"{s} {w:.2f} s ({c:.2f} s CPU)" for s, (w, c) in steps.items())
        total = sum(w for w, _ in steps.values())
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{learners} learners, {notebooks} notebooks in {args.shards} shards "
            f"({megabytes:.1f} MiB of reports): {parts}; in-process total {total:.2f} s "
            f"(median of {args.repeat}); the whole command {whole:.1f} s; page {page:.2f} MiB; "
            f"peak RSS so far {peak:.0f} MiB"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
