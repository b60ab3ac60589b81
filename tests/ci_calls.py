"""What `.ci/run` asks `make` to do: a real run of the script with stand-ins for `make`,
`apt-get` and `sudo` on PATH, each call recorded (tests/testing/test_ci_script.py runs it
the same way, with variations)."""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORDER = """#!/bin/sh
echo "$(basename "$0") $*" >> "$CI_CALLS"
"""


@functools.cache
def ci_calls() -> tuple[str, ...]:
    """Every command `.ci/run` ran through a stand-in, in order ("make test", "apt-get ...")."""
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = Path(tmp) / "bin"
        bin_dir.mkdir()
        for name in ("make", "apt-get"):
            (bin_dir / name).write_text(RECORDER)
            (bin_dir / name).chmod(0o755)
        (bin_dir / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
        (bin_dir / "sudo").chmod(0o755)
        calls = Path(tmp) / "calls"
        env = dict(
            os.environ,
            PATH=f"{bin_dir}:{os.environ['PATH']}",
            CI_CALLS=str(calls),
            COURSE_CI_CACHE=str(Path(tmp) / "cache"),
        )
        done = subprocess.run(
            [str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return tuple(calls.read_text().splitlines())


def make_calls() -> list[str]:
    """The `make` command lines of `.ci/run`, without the cache paths of the lanes' venvs."""
    return [
        " ".join(w for w in line.split() if not w.startswith(("COMPAT_VENV=", "COLAB_VENV=")))
        for line in ci_calls()
        if line.startswith("make ")
    ]
