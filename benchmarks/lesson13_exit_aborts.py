"""How often lesson 13's torchrun workers abort as they exit, with and without run_then_exit.

`python benchmarks/lesson13_exit_aborts.py [--launches N] [--busy B] [--script NAME]` writes
the lesson's `%%writefile` scripts into a temporary folder, starts B busy processes (a loaded
CI machine), and launches one script N times as the lesson's LAUNCH does, once through
`course_helpers.environment.run_then_exit` (the lesson's LAUNCH) and once without it (plain
torchrun, as before). It counts launches whose output holds a failure report ("terminate
called", "ChildFailedError"), and reports which gloo threads each rank still has when Python
starts to shut down (after the script's `destroy_process_group()`): the threads that can abort
a plain worker there. Nothing is asserted; the rate is low (a few percent of launches at most
on a loaded 2-core machine), which is why no timed test runs this.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "notebooks" / "13_distributed_data_parallel.ipynb"
ARGS = {"by_hand_and_ddp.py": ["weights.pt"], "toolkit.py": ["toolkit.pt"]}
ARGS |= {"hang.py": ["hang.txt", "peer_left.txt"], "pitfalls.py": ["pitfalls.pt"]}
SIGNS = ("terminate called", "ChildFailedError", "exitcode")
PROBE = """import atexit, os, sys
def _threads():
    tasks = os.listdir("/proc/self/task")
    names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in tasks]
    gloo = sorted(n for n in names if "gloo" in n)
    rank = os.environ["RANK"]
    print("gloo threads at shutdown, rank", rank, gloo, file=sys.__stderr__, flush=True)
atexit.register(_threads)
"""


def _busy() -> None:
    while True:
        pass


def _scripts(folder: Path) -> None:
    for cell in json.loads(LESSON.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if source.startswith("%%writefile "):
            first, body = source.split("\n", 1)
            (folder / first.split()[1]).write_text(body)


def _launch(folder: Path, script: str, wrapped: bool, probe: bool = False) -> str:
    name = script
    if probe:
        name = f"probe_{script}"
        (folder / name).write_text(PROBE + (folder / script).read_text())
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    if wrapped:
        command += ["-m", "course_helpers.environment.run_then_exit"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run(
        [*command, name, *ARGS[script]], cwd=folder, env=env, capture_output=True, text=True
    )
    return done.stdout + done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=20)
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--script", default="by_hand_and_ddp.py", choices=sorted(ARGS))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lesson13_exit_") as name:
        folder = Path(name)
        _scripts(folder)
        for line in _launch(folder, options.script, wrapped=False, probe=True).splitlines():
            if line.startswith("gloo threads at shutdown"):
                print(line)
        hogs = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(options.busy)]
        for hog in hogs:
            hog.start()
        try:
            for wrapped in (False, True):
                how = "run_then_exit" if wrapped else "plain torchrun"
                failed = 0
                for _ in range(options.launches):
                    lines = _launch(folder, options.script, wrapped).splitlines()
                    signs = [line for line in lines if any(s in line for s in SIGNS)]
                    if signs:  # what ended the launch, e.g. "terminate called ...", exitcode -6
                        failed += 1
                        print(f"  {how}: failed:", *signs[:3], sep="\n    ")
                print(f"{options.script}, {how}: {failed} of {options.launches} launches failed")
        finally:
            for hog in hogs:
                hog.terminate()


if __name__ == "__main__":
    main()
