"""benchmarks/machine_speed.py: the reference workload is the same work every time, its
summary is the median and range of what was sampled, and its sampler samples through a run."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "machine_speed.py"


@pytest.fixture(scope="module")
def speed():
    spec = importlib.util.spec_from_file_location("machine_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_workload_does_the_same_work_every_time(speed):
    assert speed._python_work() == speed._python_work()
    # the same bytes compress to the same length: no clock, no unseeded randomness
    assert speed._native_work() == speed._native_work()


def test_the_summary_is_the_median_and_range_of_the_samples(speed):
    summary = speed.summarize([(0.1, 0.2), (0.3, 0.2), (0.2, 0.1)])
    assert summary == {"samples": 3, "python": 0.2, "native": 0.2, "reference": 0.3,
                       "fastest": 0.3, "slowest": 0.5}  # fmt: skip
    assert "reference 0.30 CPU s" in speed.describe(summary)
    assert "0.30 to 0.50 over 3 samples" in speed.describe(summary)


def test_no_samples_is_a_clear_error(speed):
    with pytest.raises(ValueError, match="no samples of the machine's speed were taken"):
        speed.summarize([])


def test_the_sampler_samples_until_stopped(speed):
    sampler = speed.Sampler(every_s=0.01)
    sampler.start()
    deadline = time.monotonic() + 120
    while len(sampler.samples) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    summary = sampler.stop()
    assert summary["samples"] >= 2
    assert not sampler.is_alive()
    assert len(sampler.samples) == summary["samples"]  # none taken after stop()


def test_the_command_prints_the_speed_and_refuses_arguments():
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("machine speed: reference "), done
    wrong = subprocess.run([sys.executable, str(SCRIPT), "--fast"], capture_output=True, text=True)
    assert wrong.returncode == 1
    usage = "usage: python benchmarks/machine_speed.py (it takes no arguments)"
    assert wrong.stderr.strip() == usage
