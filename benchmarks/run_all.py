"""The course's speed table: `make bench` (or `python benchmarks/run_all.py`).

Measures, side by side in one run on this machine:
- the nbval suite over every lesson and solution notebook, as `make test` runs it (kernels
  forked from a template) and with a fresh process per kernel, vs a floor of the same number
  of notebooks that only `import torch` under plain nbval (target: at most 1.5x the floor);
- the cost of `import course_helpers` on top of `import torch` (target: under 50 ms);
- the graph-drawing and check-latency benchmarks (benchmarks/bench_graph.py, bench_check.py);
- a fresh README setup (new venv + pinned install) and the size of the environment it makes;
- the README test command (`make test`) stage by stage (setup, lint, unit tests, exercise
  notebooks, nbval, browser suite), each alone on both workers, then the whole command
  (target: at most 5 minutes on 2 cores).

Options: --skip-setup (no fresh venv), --skip-nbval, --skip-stages, --quick (fewer repetitions).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def _run(command: list[str], **kwargs) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs
    )
    return time.perf_counter() - start


def nbval_vs_floor() -> list[tuple[str, str, str]]:
    """The nbval suite as `make test` runs it (test kernels forked from a template that
    imported torch, tests/forked_kernels.py) and with a fresh process per kernel, next to
    the floor: as many notebooks that only `import torch`, under plain nbval (fresh kernels)."""
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
        (ROOT / "solutions").glob("*.ipynb")
    )
    env = dict(os.environ, OMP_NUM_THREADS="1")
    base = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval"] + XDIST
    course = _run(base + ["notebooks", "solutions"], cwd=ROOT, env=env)
    fresh_env = dict(env, COURSE_FORK_KERNELS="0")
    fresh = _run(base + ["notebooks", "solutions"], cwd=ROOT, env=fresh_env)
    import nbformat

    with tempfile.TemporaryDirectory() as tmp:
        for index in range(len(notebooks)):
            nb = nbformat.v4.new_notebook()
            nb.metadata["kernelspec"] = {
                "name": "python3",
                "display_name": "Python 3",
                "language": "python",
            }
            nb.cells = [nbformat.v4.new_code_cell("import torch", execution_count=1)]
            nbformat.write(nb, Path(tmp) / f"floor_{index:02d}.ipynb")
        floor = _run(base + [tmp], cwd=tmp, env=env)
    n = len(notebooks)
    return [
        (
            f"nbval, {n} course notebooks, forked kernels as in make test (-n 2)",
            f"{course:.1f} s",
            "",
        ),
        (f"nbval, {n} course notebooks, a fresh process per kernel", f"{fresh:.1f} s", ""),
        (f"nbval, {n} notebooks that only import torch (floor)", f"{floor:.1f} s", ""),
        (
            "ratio course / floor",
            f"{course / floor:.2f}x",
            "target <= 1.5x: " + ("met" if course <= 1.5 * floor else "NOT met"),
        ),
        ("ratio course with fresh kernels / floor", f"{fresh / floor:.2f}x", "for comparison"),
    ]


PYTEST = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
XDIST = ["-n", "2", "--dist", "loadfile"]
STAGES = [
    ("setup (make setup, already installed)", ["make", "-s", "setup"]),
    ("lint (ruff check + format --check)", ["make", "-s", "lint"]),
    (
        "unit tests (-n 2)",
        PYTEST
        + XDIST
        + ["-m", "not browser and not colab", "tests"]
        + ["--ignore=tests/course/test_exercise_notebooks.py"],
    ),
    (
        "exercise notebooks, headless (-n 2)",
        PYTEST + XDIST + ["-m", "not browser", "tests/course/test_exercise_notebooks.py"],
    ),
    ("nbval, lessons + solutions (-n 2)", PYTEST + XDIST + ["--nbval", "notebooks", "solutions"]),
    ("browser suite (one worker)", PYTEST + ["-m", "browser", "tests"]),
]


def test_stages() -> list[tuple[str, str, str]]:
    """Each stage of `make test` alone, then the whole command as the README gives it."""
    env = dict(os.environ, OMP_NUM_THREADS="1", COURSE_REQUIRE_BROWSER="1")
    rows = []
    for name, command in STAGES:
        seconds, status = _timed(command, env)
        rows.append((name, f"{seconds:.0f} s", "" if status == 0 else f"FAILED (exit {status})"))
    whole, status = _timed(["make", "-s", "test"], env)
    verdict = "met" if whole <= 300 else "NOT met"
    note = f"target <= 300 s: {verdict}" + ("" if status == 0 else f"; FAILED (exit {status})")
    rows.append(("make test, whole (stages overlap on 2 workers)", f"{whole:.0f} s", note))
    return rows


def _timed(command: list[str], env: dict) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start, done.returncode


def import_cost(repeats: int) -> list[tuple[str, str, str]]:
    code = (
        "import time; t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); "
        "import course_helpers; t2 = time.perf_counter(); print(t1 - t0, t2 - t1)"
    )
    torch_s, helpers_s = [], []
    for _ in range(repeats):
        out = subprocess.run(
            [PY, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        torch_s.append(float(out[0]))
        helpers_s.append(float(out[1]))
    extra_ms = statistics.median(helpers_s) * 1000
    return [
        ("import torch (median)", f"{statistics.median(torch_s) * 1000:.0f} ms", ""),
        ("import course_helpers on top (median)", f"{extra_ms:.1f} ms",
         "target < 50 ms: " + ("met" if extra_ms < 50 else "NOT met")),
    ]  # fmt: skip


def fresh_setup() -> list[tuple[str, str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        subprocess.run(pip + ["--upgrade", "pip"], check=True, **quiet)
        subprocess.run(
            pip + ["-c", "requirements/constraints.txt", "-e", ".[test]"],
            cwd=ROOT, check=True, **quiet,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
    return [
        (
            "fresh setup (venv + pinned install)",
            f"{seconds:.0f} s",
            "pip, packages from the index/cache",
        ),
        ("environment size", f"{size / 2**20:.0f} MiB", "torch CPU build"),
    ]


def sub_benchmark(script: str, extra: list[str]) -> str:
    path = ROOT / "benchmarks" / script
    if not path.exists():
        return f"({script} not found)"
    out = subprocess.run([PY, str(path), *extra], capture_output=True, text=True, cwd=ROOT)
    return out.stdout.strip() if out.returncode == 0 else f"{script} failed:\n{out.stderr[-2000:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skip-setup", action="store_true")
    parser.add_argument("--skip-nbval", action="store_true")
    parser.add_argument("--skip-stages", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)

    import torch

    print(f"# Course speed table — {time.strftime('%Y-%m-%d')}, {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, torch {torch.__version__}, "
          f"Graphviz dot: {'yes' if shutil.which('dot') else 'no'}\n")  # fmt: skip
    rows = import_cost(3 if args.quick else 7)
    if not args.skip_nbval:
        rows += nbval_vs_floor()
    if not args.skip_setup:
        rows += fresh_setup()
    if not args.skip_stages:
        rows += test_stages()
    width = max(len(r[0]) for r in rows)
    print(f"| {'measure':<{width}} | value | note |")
    print(f"|{'-' * (width + 2)}|------:|------|")
    for name, value, note in rows:
        print(f"| {name:<{width}} | {value} | {note} |")
    print("\n## Graph drawing (benchmarks/bench_graph.py)\n")
    print(sub_benchmark("bench_graph.py", ["--repeat", "2" if args.quick else "5"]))
    print("\n## Check latency (benchmarks/bench_check.py)\n")
    print(sub_benchmark("bench_check.py", ["--runs", "50" if args.quick else "200"]))
    print("\n## Grading throughput (benchmarks/bench_grading.py)\n")
    print(sub_benchmark("bench_grading.py", ["--count", "20" if args.quick else "200"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
