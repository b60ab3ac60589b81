"""How fast this machine's processors run: a fixed workload, timed in CPU seconds.

    python benchmarks/machine_speed.py     # machine speed: reference 0.207 CPU s (...)

Machines of the same kind here (2 cores, "AMD EPYC", a virtual machine) are not equally fast,
and one machine is not equally fast from minute to minute: `make test` used 858 s of CPU in
one profile (5,020 tests) and 1,496 s in another (5,037 tests; docs/benchmarks.md, "A slower
machine"). This workload says how fast the processor ran while a run was measured:
benchmarks/profile_tests.py samples it about every 15 s through a run (where the run's own
processes share the caches with it), and `.ci/run` prints it once before `make test`.
Whether the tree's CPU in units of it ("references") compares better across machines than
CPU seconds has not been checked yet: the workload is one thread of Python and zlib, the
tests are Chromium, sandboxes and kernels.

The input is always the same: interpreted Python (additions in a loop and a sort) and zlib
compressing the same 2 MiB. The time depends on the machine and on the Python and zlib that
run it, so the line names both. Only the standard library: CI runs it with the system's
python3, before any setup.
"""

from __future__ import annotations

import platform
import random
import statistics
import sys
import threading
import time
import zlib

REPEATS = 3
SAMPLE_EVERY_S = 15.0


def _python_work() -> int:
    total = 0
    for i in range(600_000):
        total += i ^ (i >> 3)
    values = [(i * 7919) % 100_003 for i in range(100_000)]
    values.sort()
    return total + values[-1]


def _native_input() -> bytes:
    """The same 2 MiB of text-like bytes (16 letters) on every machine and Python."""
    letters = bytes(97 + b % 16 for b in range(256))
    return random.Random(20261128).randbytes(1 << 21).translate(letters)


def _native_work() -> int:
    return len(zlib.compress(_native_input(), 6))


def _cpu(work) -> float:
    """CPU seconds of ``work`` in this thread alone (a profiler's other threads are busy)."""
    start = time.thread_time()
    work()
    return time.thread_time() - start


def sample() -> tuple[float, float]:
    """CPU seconds of one run of each part: (python, native)."""
    return _cpu(_python_work), _cpu(_native_work)


def summarize(samples: list[tuple[float, float]]) -> dict:
    """The medians of each part and of their sum (``reference``: lower is faster), and the
    range of the sums, over ``samples``."""
    if not samples:
        raise ValueError("no samples of the machine's speed were taken")
    sums = [python + native for python, native in samples]
    return {
        "samples": len(samples),
        "runtime": runtime(),
        "python": round(statistics.median(p for p, _ in samples), 3),
        "native": round(statistics.median(n for _, n in samples), 3),
        "reference": round(statistics.median(sums), 3),
        "fastest": round(min(sums), 3),
        "slowest": round(max(sums), 3),
    }


def runtime() -> str:
    """What ran the workload: its time depends on these as well as on the machine."""
    return f"Python {platform.python_version()}, zlib {zlib.ZLIB_RUNTIME_VERSION}"


def measure(repeats: int = REPEATS) -> dict:
    """The workload ``repeats`` times, now."""
    return summarize([sample() for _ in range(repeats)])


class Sampler(threading.Thread):
    """Takes a sample at once and then one ``every_s`` seconds after each, until ``stop()``,
    which returns ``summarize`` of them all. About 0.2 CPU s a sample here: the sampler uses
    about 1.5 % of one of the machine's processors (not counted in a profiled tree's CPU)."""

    def __init__(self, every_s: float = SAMPLE_EVERY_S) -> None:
        super().__init__(daemon=True)
        self.every_s, self.samples, self._stopping = every_s, [], threading.Event()

    def run(self) -> None:
        while True:
            self.samples.append(sample())
            if self._stopping.wait(self.every_s):
                return

    def stop(self) -> dict:
        self._stopping.set()
        self.join()
        return summarize(self.samples)


def describe(speed: dict) -> str:
    spread = ""
    if speed["samples"] > 1:
        spread = f", {speed['fastest']:.3f} to {speed['slowest']:.3f}"
        spread += f" over {speed['samples']} samples"
    ran_by = f"; {speed['runtime']}" if speed.get("runtime") else ""
    return (
        f"machine speed: reference {speed['reference']:.3f} CPU s (python {speed['python']:.3f}"
        f", native {speed['native']:.3f}{spread}{ran_by}; lower is faster; "
        "benchmarks/machine_speed.py)"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit("usage: python benchmarks/machine_speed.py (it takes no arguments)")
    print(describe(measure()))
