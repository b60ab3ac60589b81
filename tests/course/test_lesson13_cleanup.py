"""Lesson 13's setup cell works in a temporary folder that goes away with the kernel: every
run of the notebook used to leave a ``lesson13_*`` folder behind (issue 27)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "13_distributed_data_parallel.ipynb"


def _setup_cell() -> str:
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    (setup,) = [
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "code" and "setup_notebook()" in "".join(c["source"])
    ]
    return setup


def test_the_scripts_folder_is_removed_when_the_kernel_exits(tmp_path):
    folder = tmp_path / "tmp"
    folder.mkdir()
    program = _setup_cell() + "\n(SCRIPTS / 'job.py').write_text('print(1)')\nprint(SCRIPTS)\n"
    env = dict(os.environ, TMPDIR=str(folder), COURSE_PROGRESS="off")
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    scripts = Path(done.stdout.strip().splitlines()[-1])
    assert scripts.parent == folder and scripts.name.startswith("lesson13_")
    assert list(folder.iterdir()) == []  # the folder and the script in it are gone


def _last_code_cell() -> str:
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    return [("".join(c["source"])) for c in cells if c["cell_type"] == "code"][-1]


def test_the_last_cell_removes_the_folder_even_if_the_kernel_is_then_killed(tmp_path):
    folder = tmp_path / "tmp"
    folder.mkdir()
    program = (
        _setup_cell()
        + "\n(SCRIPTS / 'job.py').write_text('print(1)')\n"
        + _last_code_cell()
        + "\nos._exit(0)\n"  # as a killed kernel: no finalizer, no atexit
    )
    env = dict(os.environ, TMPDIR=str(folder), COURSE_PROGRESS="off")
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "scripts folder removed: True" in done.stdout
    assert list(folder.iterdir()) == []
