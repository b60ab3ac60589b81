"""pytest plugin loaded by the project's pytest config (``-p course_helpers.pytest_plugin``).

It makes ``pytest --nbval`` runs of the course hermetic and strict:

- checks never write to the learner's progress database (``COURSE_PROGRESS=off``);
- notebooks under ``solutions/`` run with ``COURSE_STRICT=1``, so an exercise whose
  reference solution fails its own check fails the cell instead of printing feedback;
- ``image/svg+xml`` outputs are not compared as text: a graph picture's SVG depends
  on which Graphviz build drew it (or the pure-Python fallback). Every picture also
  has a ``text/plain`` form that lists its nodes and edges in a fixed order, and that
  form *is* compared, so a change in the graph still fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_configure(config):
    os.environ.setdefault("COURSE_PROGRESS", "off")


def pytest_collectstart(collector):
    if type(collector).__name__ == "IPyNbFile" and hasattr(collector, "skip_compare"):
        if "image/svg+xml" not in collector.skip_compare:
            collector.skip_compare = tuple(collector.skip_compare) + ("image/svg+xml",)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # nbval starts one kernel per notebook when its first cell is set up; the kernel
    # inherits this process's environment at that moment.
    if type(item).__name__ != "IPyNbCell":
        return
    parts = Path(str(item.fspath)).resolve().parts
    os.environ["COURSE_STRICT"] = "1" if "solutions" in parts else "0"
