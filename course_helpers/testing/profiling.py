"""Where a test run's time goes, written as JSON lines (``COURSE_TEST_PROFILE=DIR``).

Loaded by ``course_helpers.testing.pytest_plugin`` only when that variable names a folder.
Each pytest process (the controller, every xdist worker, a child pytest a test starts)
writes ``DIR/tests-<pid>.jsonl``: one line per test with its wall time over setup, call and
teardown, the CPU seconds this process spent on it, the CPU of the subprocesses it waited for
during the test (commands, fresh kernels, grading workers; kernels forked from the template
are counted in the template), its outcome and when it ended; a last line holds the process's
own CPU.
``benchmarks/profile_tests.py`` sets the variable, counts kernel starts in the same folder
and prints the summary. Nothing is written when the variable is unset.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

SWITCH_ENV = "COURSE_TEST_PROFILE"


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    """CPU of the subprocesses this process has waited for (commands a test runs, fresh
    kernels, grading workers); forked kernels are counted in the template process."""
    return _cpu(resource.RUSAGE_CHILDREN)


class TestProfile:
    """The pytest plugin object; ``register`` adds it when ``COURSE_TEST_PROFILE`` is set."""

    def __init__(self, folder: Path, args: list[str]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._file = open(folder / f"tests-{os.getpid()}.jsonl", "a", buffering=1)  # noqa: SIM115
        self._open: dict[str, dict] = {}
        self._write(
            event="session",
            args=args,
            worker=os.environ.get("PYTEST_XDIST_WORKER", ""),
            parent=os.getppid(),
            start=time.time(),
        )

    def _write(self, **record) -> None:
        record["pid"] = os.getpid()
        self._file.write(json.dumps(record) + "\n")

    def pytest_runtest_logstart(self, nodeid, location):
        self._open[nodeid] = {
            "wall": 0.0,
            "cpu": _cpu(),
            "children": _children_cpu(),
            "outcome": "passed",
        }

    def pytest_runtest_logreport(self, report):
        entry = self._open.get(report.nodeid)
        if entry is None:
            return
        if getattr(report, "worker_id", None) is not None:
            entry["remote"] = True  # the xdist controller hears workers' tests: they write them
            return
        entry["wall"] += report.duration
        if report.outcome != "passed" and entry["outcome"] == "passed":
            entry["outcome"] = report.outcome
        if report.when == "call" and report.outcome == "passed" and hasattr(report, "wasxfail"):
            entry["outcome"] = "xpassed"

    def pytest_runtest_logfinish(self, nodeid, location):
        entry = self._open.pop(nodeid, None)
        if entry is not None and not entry.get("remote"):
            cpu = _cpu() - entry["cpu"]
            children = _children_cpu() - entry["children"]
            self._write(event="test", nodeid=nodeid, wall=round(entry["wall"], 3),
                        cpu=round(cpu, 3), children=round(children, 3),
                        outcome=entry["outcome"], end=round(time.time(), 2))  # fmt: skip

    def pytest_sessionfinish(self, session, exitstatus):
        self._write(event="end", cpu=round(_cpu(), 3), children=round(_children_cpu(), 3),
                    end=time.time(), status=int(exitstatus))  # fmt: skip
        self._file.close()


def register(config) -> bool:
    """Add the profile to this pytest run when ``COURSE_TEST_PROFILE`` names a folder."""
    folder = os.environ.get(SWITCH_ENV, "").strip()
    if not folder:
        return False
    config.pluginmanager.register(TestProfile(Path(folder), sys.argv[1:]), "course-test-profile")
    return True
