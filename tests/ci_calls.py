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


def stand_ins(folder: Path) -> dict[str, str]:
    """An environment for `.ci/run` in which `make` and `apt-get` only record their arguments
    (in ``folder``/calls, a line each) and the lanes' venv cache is ``folder``/cache."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    for name in ("make", "apt-get"):
        (bin_dir / name).write_text(RECORDER)
        (bin_dir / name).chmod(0o755)
    # not as root, .ci/run prefixes apt-get with sudo: this one runs the stand-in instead
    (bin_dir / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
    (bin_dir / "sudo").chmod(0o755)
    return dict(
        os.environ,
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        CI_CALLS=str(folder / "calls"),
        COURSE_CI_CACHE=str(folder / "cache"),
    )


@functools.cache
def ci_calls() -> tuple[str, ...]:
    """Every command `.ci/run` ran through a stand-in, in order ("make test", "apt-get ...")."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [str(ROOT / ".ci" / "run")],
            env=stand_ins(Path(tmp)),
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return tuple((Path(tmp) / "calls").read_text().splitlines())


def make_calls() -> list[str]:
    """The `make` command lines of `.ci/run`, without the cache paths of the lanes' venvs."""
    return [
        " ".join(w for w in line.split() if not w.startswith(("COMPAT_VENV=", "COLAB_VENV=")))
        for line in ci_calls()
        if line.startswith("make ")
    ]
