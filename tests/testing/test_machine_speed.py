"""benchmarks/machine_speed.py: the reference workload has the same input everywhere, its
summary is the median and range of what was sampled, and its sampler samples until stopped."""

from __future__ import annotations

import hashlib
import importlib.util
import platform
import subprocess
import sys
import time
import zlib
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


def test_the_workload_has_the_same_input_on_every_machine(speed):
    # pinned: the loop's result and the bytes zlib compresses, as Python 3.11.2 (Debian 12's)
    # and 3.11.7 compute them; no clock, no unseeded randomness (the compressed length is
    # not pinned: it depends on the zlib build)
    assert speed._python_work() == 183678806722
    data = speed._native_input()
    assert len(data) == 1 << 21
    assert hashlib.sha256(data).hexdigest().startswith("3c0d3431ae53cb21517adf404275e345")


def test_the_summary_is_the_median_and_range_of_the_samples(speed):
    summary = speed.summarize([(0.1, 0.2), (0.3, 0.2), (0.2, 0.1)])
    runtime = f"Python {platform.python_version()}, zlib {zlib.ZLIB_RUNTIME_VERSION}"
    assert summary == {"samples": 3, "runtime": runtime, "python": 0.2, "native": 0.2,
                       "reference": 0.3, "fastest": 0.3, "slowest": 0.5}  # fmt: skip
    line = speed.describe(summary)
    assert "reference 0.300 CPU s" in line and "0.300 to 0.500 over 3 samples" in line
    assert runtime in line  # what ran it: the time depends on it too


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
    time.sleep(0.1)  # ten of its intervals: a sampler still running would have added some
    assert len(sampler.samples) == summary["samples"]


def test_the_command_prints_the_speed_and_refuses_arguments():
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("machine speed: reference "), done
    wrong = subprocess.run([sys.executable, str(SCRIPT), "--fast"], capture_output=True, text=True)
    assert wrong.returncode == 1
    usage = "usage: python benchmarks/machine_speed.py (it takes no arguments)"
    assert wrong.stderr.strip() == usage
