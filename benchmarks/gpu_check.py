"""The course on a CUDA GPU: `make gpu-check` (or `python benchmarks/gpu_check.py`).

Runs, with the GPU the course picks by itself (``COURSE_DEVICE`` unset):
- nbval over every lesson and solution notebook (``pytest --nbval notebooks solutions``);
- the unit tests (``pytest -m "not browser" tests``);
- lesson 11's demonstrations: the notebook is executed and the outputs of its two timing cells
  (the cost of ``.item()`` every step, the return time of ``non_blocking`` copies) are read;
- lesson 13's hang demonstration, on time, with rank 1 starting 2 s late and with rank 1
  making the short-timeout group 2 s late (``tests/course/test_lesson13_hang.py``);

and prints one table: device, torch, Python, pass/fail counts, the timings, the nbval time.
Without a CUDA device it says so and runs nothing (exit status 2); ``--allow-cpu`` runs the
same steps on the CPU, to try the check itself. docs/gpu.md says how to run it on a machine
that lacks the test packages.

Options: --steps nbval,unit,lesson11,lesson13 (default: all), --jobs N (pytest-xdist workers),
--json FILE (the results as JSON), --allow-cpu.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON11 = ROOT / "notebooks" / "11_training_loops.ipynb"
LESSON13_TEST = "tests/course/test_lesson13_hang.py"
STEPS = ("nbval", "unit", "lesson11", "lesson13")
NO_CUDA_EXIT = 2

# the first line of lesson 11's two timing cells, and the rows they print
SYNC_CELL = "def sync_cost_ms("
NON_BLOCKING_CELL = "def non_blocking_return_ms("
SYNC_ROW = re.compile(
    r"^(?P<device>[a-z]+)\s+(?P<batch>\d+ x \d+)\s+(?P<loader>[\d.]+)\s+(?P<steps>[\d.]+)"
    r"\s+(?P<sum>[\d.]+)\s+(?P<every>[\d.]+)\s+(?P<end>[\d.]+)\s*$",
    re.MULTILINE,
)
NON_BLOCKING_ROW = re.compile(
    r"^(?P<memory>pageable|pinned)\s*: returned after\s+(?P<returned>[\d.]+) ms; "
    r"queued work done after\s+(?P<drained>[\d.]+) ms",
    re.MULTILINE,
)


@dataclass
class Counts:
    """A pytest run's outcome, from its JUnit XML report."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    seconds: float = 0.0
    exit_code: int | None = None
    failures: list[str] = field(default_factory=list)

    def line(self) -> str:
        text = f"{self.passed} passed, {self.failed} failed, {self.errors} errors, "
        text += f"{self.skipped} skipped in {self.seconds:.1f} s"
        if self.exit_code not in (0, 1, None):  # 1: tests failed; others: pytest itself did
            text += f" (pytest exit code {self.exit_code})"
        return text


@dataclass
class Results:
    date: str
    device: str
    torch: str
    cuda: str
    python: str
    runs: dict[str, Counts] = field(default_factory=dict)
    sync_rows: list[dict] = field(default_factory=list)
    non_blocking_rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def machine() -> tuple[str, str, str, bool]:
    """(device, torch version, CUDA version, whether CUDA is available)."""
    import torch

    available = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if available else "no CUDA device"
    return device, torch.__version__, torch.version.cuda or "none", available


def counts_from_junit(path: Path) -> Counts:
    """Pass/fail/error/skip counts and the failed tests' ids from a JUnit XML report."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = Counts()
    for suite in suites:
        tests = int(suite.get("tests", 0))
        failed = int(suite.get("failures", 0))
        errors = int(suite.get("errors", 0))
        skipped = int(suite.get("skipped", 0))
        counts.failed += failed
        counts.errors += errors
        counts.skipped += skipped
        counts.passed += tests - failed - errors - skipped
        for case in suite.iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                counts.failures.append(f"{case.get('classname', '')}::{case.get('name', '')}")
    return counts


def _xdist(jobs: int) -> list[str]:
    try:
        import xdist  # noqa: F401
    except ImportError:
        return []
    return ["-n", str(jobs), "--dist", "loadfile"] if jobs > 1 else []


def course_env() -> dict[str, str]:
    """The environment the steps run in: the course picks the device; no progress written."""
    env = dict(os.environ, COURSE_PROGRESS="off")
    env.pop("COURSE_DEVICE", None)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run_pytest(name: str, arguments: list[str], jobs: int, logs: Path) -> Counts:
    """Run pytest; its output goes to ``logs/<name>.log``, its report to ``<name>.xml``."""
    junit = logs / f"{name}.xml"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE"]
    command += [f"--junitxml={junit}", *_xdist(jobs), *arguments]
    start = time.perf_counter()
    with open(logs / f"{name}.log", "w") as log:
        done = subprocess.run(
            command, cwd=ROOT, env=course_env(), stdout=log, stderr=subprocess.STDOUT, check=False
        )
    seconds = time.perf_counter() - start
    counts = counts_from_junit(junit) if junit.exists() else Counts(errors=1)
    counts.seconds, counts.exit_code = seconds, done.returncode
    return counts


def cell_text(nb: dict, first_line: str) -> str:
    """The text a code cell starting with ``first_line`` printed ("" when there is none)."""
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code" and source.startswith(first_line):
            return "".join(
                "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
                for out in cell.get("outputs", [])
                if out.get("output_type") == "stream"
            )
    raise LookupError(f"no cell of {LESSON11.name} starts with {first_line!r}")


def sync_rows(text: str) -> list[dict]:
    rows = []
    for m in SYNC_ROW.finditer(text):
        row = {"device": m["device"], "batch": m["batch"]}
        row.update({k: float(m[k]) for k in ("loader", "steps", "sum", "every", "end")})
        rows.append(row)
    return rows


def non_blocking_rows(text: str) -> list[dict]:
    return [
        {"memory": m["memory"], "returned": float(m["returned"]), "drained": float(m["drained"])}
        for m in NON_BLOCKING_ROW.finditer(text)
    ]


def execute_lesson11() -> dict:
    """Lesson 11 executed top to bottom in a fresh kernel, as a plain notebook dict."""
    import nbformat
    from nbclient import NotebookClient

    env_before = dict(os.environ)
    os.environ.clear()
    os.environ.update(course_env())  # the kernel inherits this process's environment
    try:
        nb = nbformat.read(LESSON11, as_version=4)
        NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(LESSON11.parent)}},
        ).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    return json.loads(nbformat.writes(nb))


def format_table(results: Results) -> str:
    rows = [
        ("date", results.date),
        ("device", results.device),
        ("torch", f"{results.torch} (CUDA {results.cuda})"),
        ("Python", results.python),
    ]
    names = {
        "nbval": "nbval, lessons + solutions",
        "unit": "unit tests",
        "lesson13": "lesson 13 hang demo",
    }
    for key, label in names.items():
        if key in results.runs:
            rows.append((label, results.runs[key].line()))
    if "nbval" in results.runs:
        rows.append(("nbval time", f"{results.runs['nbval'].seconds:.1f} s"))
    for row in results.sync_rows:
        rows.append(
            (
                f"lesson 11 sync, {row['device']} {row['batch']}",
                f"loader {row['loader']:.1f} + steps {row['steps']:.1f} = {row['sum']:.1f} ms; "
                f".item() every step {row['every']:.1f} ms, one at the end {row['end']:.1f} ms "
                "(per epoch of 8 batches)",
            )
        )
    for row in results.non_blocking_rows:
        rows.append(
            (
                f"lesson 11 non_blocking, {row['memory']}",
                f"returned after {row['returned']:.2f} ms; queued work done after "
                f"{row['drained']:.1f} ms",
            )
        )
    width = max(len(label) for label, _ in rows)
    lines = [f"{label:<{width}}  {value}" for label, value in rows]
    for key, counts in results.runs.items():
        lines += [f"  {key} failed: {name}" for name in counts.failures]
    lines += [f"note: {note}" for note in results.notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--steps", default=",".join(STEPS), help="comma-separated: " + ",".join(STEPS)
    )
    parser.add_argument("--jobs", type=int, default=4, help="pytest-xdist workers (default 4)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--allow-cpu", action="store_true", help="run even without CUDA")
    args = parser.parse_args(argv)
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown step(s) {', '.join(unknown)}; choose from {', '.join(STEPS)}")

    device, torch_version, cuda_version, available = machine()
    results = Results(
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        device=device,
        torch=torch_version,
        cuda=cuda_version,
        python=platform.python_version(),
    )
    if not available:
        results.notes.append(
            "No CUDA device is present: torch.cuda.is_available() is False on this machine "
            f"(torch {torch_version}, built with CUDA {cuda_version})."
        )
        if not args.allow_cpu:
            results.notes.append(
                "Nothing was run: this check measures the course on a CUDA GPU. "
                "--allow-cpu runs its steps on the CPU (to try the check itself)."
            )
            print("gpu-check: NO CUDA DEVICE on this machine; nothing was run.\n")
            print(format_table(results))
            return NO_CUDA_EXIT
        results.notes.append("--allow-cpu: every step below ran on the CPU.")
    if os.environ.get("COURSE_DEVICE"):
        results.notes.append(
            f"COURSE_DEVICE={os.environ['COURSE_DEVICE']} was set and is ignored by this check."
        )

    if {"nbval", "unit", "lesson13"} & set(steps):  # made, and kept, only for pytest's steps
        logs = Path(tempfile.mkdtemp(prefix="gpu_check_"))
        results.notes.append(f"pytest output and JUnit reports: {logs}")
    if "nbval" in steps:
        nbval = ["--nbval", "notebooks", "solutions"]
        results.runs["nbval"] = run_pytest("nbval", nbval, args.jobs, logs)
    if "unit" in steps:
        results.runs["unit"] = run_pytest("unit", ["-m", "not browser", "tests"], args.jobs, logs)
    if "lesson11" in steps:
        nb = execute_lesson11()
        results.sync_rows = sync_rows(cell_text(nb, SYNC_CELL))
        results.non_blocking_rows = non_blocking_rows(cell_text(nb, NON_BLOCKING_CELL))
        if not results.non_blocking_rows:
            results.notes.append("lesson 11 non_blocking: not measured (needs a CUDA GPU).")
    if "lesson13" in steps:
        results.runs["lesson13"] = run_pytest("lesson13", [LESSON13_TEST], 1, logs)

    print(format_table(results))
    if args.json:
        args.json.write_text(json.dumps(asdict(results), indent=1) + "\n")
    bad = any(c.failed or c.errors or c.exit_code not in (0, None) for c in results.runs.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
