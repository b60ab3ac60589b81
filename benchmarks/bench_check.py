"""Latency of ``check``: a value exercise and a function exercise (targets: 10 ms, 100 ms).

Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_check.py [--runs N]``.
Prints a table of median and p90 wall-clock latency per scenario. Progress recording
goes to a temporary database ("progress on") or is turned off ("progress off").
Timings depend on the machine and its load; they are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _timings(call, runs: int) -> tuple[str, list[float]]:
    status = call().status  # warm up: first-use imports and reference building are not timed
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return status, times


def _scenarios():
    import torch

    from course_helpers import check
    from course_helpers.lessons import catalog

    function_exercise = next(e for e in catalog() if e.kind == "function")
    first_tensor = torch.tensor([1.0, 2.0, 3.0])
    wrong_tensor = torch.tensor([[1.0], [2.0], [3.0]])
    reference_function = function_exercise.reference

    def wrong_function(*args):
        return reference_function(*args) * 2

    return [
        ("value, correct (00.first_tensor)", 10, lambda: check("00.first_tensor", first_tensor)),
        (
            "value, wrong shape (00.first_tensor)",
            10,
            lambda: check("00.first_tensor", wrong_tensor),
        ),
        (
            f"function, correct ({function_exercise.id})",
            100,
            lambda: check(function_exercise.id, reference_function),
        ),
        (
            f"function, wrong ({function_exercise.id})",
            100,
            lambda: check(function_exercise.id, wrong_function),
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="timed calls per scenario")
    args = parser.parse_args(argv)
    os.environ.pop("COURSE_STRICT", None)
    os.environ.pop("COURSE_GRADING_DIR", None)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        os.environ["COURSE_PROGRESS_DB"] = str(Path(folder) / "bench.sqlite")
        for progress in ("off", "on"):
            os.environ["COURSE_PROGRESS"] = progress
            for name, target, call in _scenarios():
                status, times = _timings(call, args.runs)
                median = statistics.median(times)
                p90 = statistics.quantiles(times, n=10)[-1]
                rows.append((name, status, f"progress {progress}", median, p90, target))
    width = max(len(r[0]) for r in rows)
    print(f"check latency over {args.runs} runs (ms)")
    header = f"{'scenario':<{width}}  {'verdict':<7}  {'progress':<12}  {'median':>7}  {'p90':>7}"
    print(header + "  target  ok")
    for name, status, progress, median, p90, target in rows:
        ok = "yes" if median < target else "NO"
        print(
            f"{name:<{width}}  {status:<7}  {progress:<12}  {median:7.2f}  {p90:7.2f}  "
            f"{target:6d}  {ok}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
