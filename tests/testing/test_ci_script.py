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
from ci_calls import RECORDER, stand_ins

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


def _lanes(cache, key) -> list[str]:
    return [
        "make check-lock LOCK_PYTHON=/usr/bin/python3.11",
        f"make test-slurm SUDO={'' if os.getuid() == 0 else 'sudo'}",
        f"make test-compat TORCH=2.11.0 COMPAT_VENV={cache}/compat-2.11.0-{key}",
        f"make test-compat TORCH=2.14.1 COMPAT_VENV={cache}/compat-2.14.1-{key}",
        f"make test-colab COLAB_VENV={cache}/colab-{key}",
    ]


def test_every_phase_runs_with_the_cached_venvs(ci):
    cache, key, env, calls = ci
    done = _run(env)
    assert done.returncode == 0, done.stderr
    made = [line for line in calls.read_text().splitlines() if line.startswith("make ")]
    # the README's command first, then the lanes' venvs one at a time, then every lane
    setups = [
        f"make setup-compat TORCH=2.11.0 COMPAT_VENV={cache}/compat-2.11.0-{key}",
        f"make setup-compat TORCH=2.14.1 COMPAT_VENV={cache}/compat-2.14.1-{key}",
        f"make setup-colab COLAB_VENV={cache}/colab-{key}",
    ]
    assert made[: 1 + len(setups)] == ["make test", *setups], made
    assert sorted(made[1 + len(setups) :]) == sorted(_lanes(cache, key)), made
    installs = [line for line in calls.read_text().splitlines() if " install " in line]
    assert (
        installs
        and "python3.11" in installs[0].split()
        and "chromium-headless-shell" in installs[0].split()
    )
    phases = [
        line.split(" (at ")[0] for line in done.stdout.splitlines() if line.startswith("ci: ")
    ]
    started = ["ci: system packages", "ci: make test", "ci: lane setups", "ci: make check-lock"]
    started += ["ci: make test-slurm", "ci: make test-compat TORCH=2.11.0"]
    started += ["ci: make test-compat TORCH=2.14.1", "ci: make test-colab"]
    assert _in_order(phases, [*started, "ci: done"]), phases
    # before the README's command: how fast the machine was (benchmarks/machine_speed.py)
    lines = done.stdout.splitlines()
    speed = [i for i, line in enumerate(lines) if line.startswith("machine speed: reference ")]
    make_test = [i for i, line in enumerate(lines) if line.startswith("ci: make test (at ")]
    assert speed and make_test and speed[0] < make_test[0], lines
    for lane in ("make check-lock", "make test-compat TORCH=2.11.0", "make test-colab"):
        assert f"ci: {lane} ended with exit status 0" in phases, phases
        assert f"---- the log of {lane} ----" in done.stdout


SLOW_MAKE = """#!/bin/sh
echo "start $(date +%s.%N) $*" >> "$CI_CALLS"
case "$1" in test-*|check-lock) sleep 2 ;; esac
echo "end $(date +%s.%N) $*" >> "$CI_CALLS"
"""


def test_the_lanes_run_side_by_side_after_make_test(ci):
    cache, key, env, calls = ci
    (Path(env["PATH"].split(":")[0]) / "make").write_text(SLOW_MAKE)
    done = _run(env)
    assert done.returncode == 0, done.stderr
    spans: dict[str, list[float]] = {}
    for line in calls.read_text().splitlines():
        if line.startswith(("start ", "end ")):
            what, when, command = line.split(" ", 2)
            spans.setdefault(command, []).append(float(when))
    lanes = [spans[lane[5:]] for lane in _lanes(cache, key)]
    # every lane starts after make test and the venv setups ended, and before any lane ends
    assert min(start for start, _ in lanes) >= spans["test"][1]
    assert max(start for start, _ in lanes) < min(end for _, end in lanes), spans


def test_a_failing_lane_fails_ci_and_the_others_still_run(ci):
    cache, key, env, calls = ci
    fails = "make test-compat TORCH=2.11.0"
    (Path(env["PATH"].split(":")[0]) / "make").write_text(
        RECORDER + f'case "$*" in "{fails[5:]} "*) echo "the lane broke"; exit 2 ;; esac\n'
    )
    done = _run(env)
    assert done.returncode != 0
    made = calls.read_text().splitlines()
    assert all(lane in made for lane in _lanes(cache, key)), made
    assert f"ci: {fails} ended with exit status 2" in done.stdout
    assert "the lane broke" in done.stdout
    assert f"ci: failed: {fails}" in done.stdout
    assert "ci: done" not in done.stdout


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
