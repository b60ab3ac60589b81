""".ci/run, run for real with stand-ins for `make` and `apt-get` on PATH: every phase runs in
order, the lanes get venvs in the cache under this checkout's key, a cached venv of this
checkout is reused without a pip run, and only stale keys are pruned."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ci_calls import stand_ins

ROOT = Path(__file__).resolve().parents[2]


def _fake_venv(path: Path, checkout: Path) -> Path:
    """A stand-in venv whose python says where its editable course lives."""
    (path / "bin").mkdir(parents=True)
    python = path / "bin" / "python"
    python.write_text(f"#!/bin/sh\necho {checkout}\n")
    python.chmod(0o755)
    stamp = path / ".course-installed"
    stamp.write_text("")
    os.utime(stamp, (1_000_000_000, 1_000_000_000))  # long ago: older than any checkout file
    return stamp


@pytest.fixture
def ci(tmp_path):
    key = subprocess.run(
        ["python3", str(ROOT / ".ci" / "venv_key.py")], capture_output=True, text=True, check=True
    ).stdout.strip()
    return tmp_path / "cache", key, stand_ins(tmp_path), tmp_path / "calls"


def _in_order(seen: list[str], expected: list[str]) -> bool:
    """Whether ``expected`` occurs in ``seen`` in this order (each once, others between)."""
    found = iter(seen)
    return all(any(line == wanted for line in found) for wanted in expected)


def _run(env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, check=False
    )


def test_every_phase_runs_in_order_with_the_cached_venvs(ci):
    cache, key, env, calls = ci
    done = _run(env)
    assert done.returncode == 0, done.stderr
    made = [line for line in calls.read_text().splitlines() if line.startswith("make ")]
    # in this order; other phases (a SLURM lane, say) may come between
    assert _in_order(
        made,
        [
            "make test",
            "make check-lock LOCK_PYTHON=/usr/bin/python3.11",
            f"make test-slurm SUDO={'' if os.getuid() == 0 else 'sudo'}",
            f"make test-compat TORCH=2.11.0 COMPAT_VENV={cache}/compat-2.11.0-{key}",
            f"make test-compat TORCH=2.14.1 COMPAT_VENV={cache}/compat-2.14.1-{key}",
            f"make test-colab COLAB_VENV={cache}/colab-{key}",
        ],
    ), made
    installs = [line for line in calls.read_text().splitlines() if " install " in line]
    assert installs and "python3.11" in installs[0].split() and "chromium" in installs[0]
    phases = [line for line in done.stdout.splitlines() if line.startswith("ci: ")]
    assert _in_order(
        [p.split(" (at ")[0] for p in phases],
        [
            "ci: system packages",
            "ci: make test",
            "ci: make check-lock",
            "ci: make test-slurm",
            "ci: make test-compat TORCH=2.11.0",
            "ci: make test-compat TORCH=2.14.1",
            "ci: make test-colab",
            "ci: done",
        ],
    ), phases


def test_a_cached_venv_of_this_checkout_is_reused_and_stale_keys_go(ci, tmp_path):
    cache, key, env, _ = ci
    here = _fake_venv(cache / f"compat-2.11.0-{key}", ROOT)
    elsewhere = _fake_venv(cache / f"compat-2.14.1-{key}", tmp_path / "another-clone")
    stale = cache / "compat-2.11.0-0123456789abcdef"
    stale.mkdir(parents=True)
    unrelated = cache / "notes"
    unrelated.mkdir()
    started = time.time()
    done = _run(env)
    assert done.returncode == 0, done.stderr
    # this checkout's venv: marked current, so make runs no pip; another clone's: left to make
    assert here.stat().st_mtime >= started - 1
    assert elsewhere.stat().st_mtime < started - 1
    assert not stale.exists() and unrelated.exists()
    assert (cache / f"compat-2.11.0-{key}").exists()


def test_a_cached_venv_without_this_checkout_is_not_fooled_by_the_current_folder(ci):
    # .ci/run asked the venv's python where its course lives from the checkout's folder, where
    # `import course_helpers` finds the checkout itself: a venv installed from another clone
    # was taken as current, and its tests ran the other clone's package (every grading test
    # failed: the worker could not import the course in the sandbox)
    cache, key, env, _ = ci
    venv = cache / f"compat-2.11.0-{key}"
    stamp = _fake_venv(venv, ROOT)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    started = time.time()
    done = _run(env)
    assert done.returncode == 0, done.stderr
    assert stamp.stat().st_mtime < started - 1  # left to make, which reinstalls


def test_the_key_changes_with_what_the_venvs_are_installed_from(tmp_path):
    """A copy of the checkout with one pin changed gets another key; a test setting does not."""
    copy = tmp_path / "checkout"
    for name in ("pyproject.toml", "requirements/constraints.txt", "requirements/colab.txt",
                 ".ci/venv_key.py"):  # fmt: skip
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_text((ROOT / name).read_text())

    def key() -> str:
        script = copy / ".ci" / "venv_key.py"
        return subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, check=True
        ).stdout.strip()

    first = key()
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("testpaths = [", "testpaths = ['x', "))
    assert key() == first
    lock = copy / "requirements" / "constraints.txt"
    lock.write_text(lock.read_text().replace("numpy==", "numpy==0"))
    assert key() != first
