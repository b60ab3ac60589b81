"""Lesson 13's launch command, run as the lesson defines it, in a kernel started without
OMP_NUM_THREADS (the README's conda path): it says at once that it started, and torchrun
prints no banner about OMP_NUM_THREADS (issue 28, item 5)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "13_distributed_data_parallel.ipynb"


def _launch_command() -> str:
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    setup = next("".join(c["source"]) for c in cells if "LAUNCH = (" in "".join(c["source"]))
    block = re.search(r"(?ms)^LAUNCH = \($.*?^\)$", setup).group(0)
    namespace = {"sys": sys}
    exec(block, namespace)  # the lesson's own definition, nothing rewritten
    return namespace["LAUNCH"]


def test_a_launch_announces_itself_and_prints_no_omp_banner(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text(
        "import os\nprint('rank', os.environ['RANK'], 'threads', os.environ['OMP_NUM_THREADS'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    done = subprocess.run(
        f"{_launch_command()} {script}",
        shell=True,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("Starting 2 processes")
    assert sorted(re.findall(r"rank \d threads 1", done.stdout)) == [
        "rank 0 threads 1",
        "rank 1 threads 1",
    ]
    assert "OMP_NUM_THREADS" not in done.stderr  # torchrun's starred banner names it


# each rank waits until both have started, then prints many lines at the same time as the other
PRINT_TOGETHER = """
import os, time
from pathlib import Path

rank = os.environ["RANK"]
Path(f"started{rank}").touch()
deadline = time.monotonic() + 60
while not (Path("started0").exists() and Path("started1").exists()):
    assert time.monotonic() < deadline, "the other rank never started"
    time.sleep(0.001)
for i in range(3000):
    print("rank", rank, "line", i)
"""


def test_two_ranks_printing_at_once_never_cut_into_each_others_lines(tmp_path):
    # torchrun runs its workers with `python -u`, which writes every piece of a print
    # separately: without whole-line writes, lines came out as "rankrank 0 line 5" (the
    # flake of test_a_launch_announces_itself_and_prints_no_omp_banner)
    script = tmp_path / "print_together.py"
    script.write_text(PRINT_TOGETHER)
    done = subprocess.run(
        f"{_launch_command()} {script}",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()[1:]  # after the launch's own first line
    broken = [line for line in lines if not re.fullmatch(r"rank [01] line \d+", line)]
    assert broken == [], broken[:5]
    assert len(lines) == 6000


def test_a_worker_ends_as_its_script_ends_so_its_shutdown_cannot_abort_it(tmp_path):
    # a gloo process group that outlived destroy_process_group() can abort a worker during
    # the interpreter's shutdown on a busy machine; os.abort at exit stands in for it, every
    # time: the launch must still succeed with both ranks' output and no failure report
    script = tmp_path / "aborts_at_exit.py"
    script.write_text(
        "import atexit, os\natexit.register(os.abort)\nprint('rank', os.environ['RANK'], 'done')\n"
    )
    done = subprocess.run(
        f"{_launch_command()} {script}",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(re.findall(r"rank \d done", done.stdout)) == ["rank 0 done", "rank 1 done"]
    assert "ChildFailedError" not in done.stderr
