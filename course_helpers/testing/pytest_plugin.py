"""The course's pytest plugin (``-p course_helpers.testing.pytest_plugin`` in pyproject.toml).

``-p course_helpers.pytest_plugin``, the name instructors' configs use, loads the same plugin.

It makes ``pytest --nbval`` runs of the course hermetic and strict:

- checks never write to the learner's progress database (``COURSE_PROGRESS=off``);
- kernels are forked from a process that imported torch once, where that is safe
  (``course_helpers.testing.forked_kernels``; ``COURSE_FORK_KERNELS=0`` turns it off);
- notebooks under ``solutions/`` run with ``COURSE_STRICT=1``, so an exercise whose
  reference solution fails its own check fails the cell instead of printing feedback;
- ``image/svg+xml`` outputs are not compared as text: a graph picture's SVG depends
  on which Graphviz build drew it (or the pure-Python fallback). Every picture also
  has a ``text/plain`` form that lists its nodes and edges in a fixed order, and that
  form *is* compared, so a change in the graph still fails the test;
- a picture's ``text/html`` form carries the same SVG as an ``<img>`` data URL (with its
  text form in a ``<details>`` element under it): the base64 SVG (and any inline
  ``<svg>…</svg>``) is blanked before comparing; the rest of the HTML is compared;
- PyTorch names a tensor's legacy type in some error messages
  (``[torch.FloatTensor [3]]`` on the CPU, ``[torch.cuda.FloatTensor [3]]`` on a GPU), so
  ``torch.cuda.XTensor`` is compared as ``torch.XTensor``. The rest of the message is compared.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = [
    "SANITIZERS",
    "pytest_collectstart",
    "pytest_configure",
    "pytest_report_header",
    "pytest_runtest_setup",
]


def pytest_configure(config):
    # forced, not defaulted: a learner's COURSE_PROGRESS=on must not let tests write there
    os.environ["COURSE_PROGRESS"] = "off"
    # kernels forked from a template that imported torch once (testing.forked_kernels);
    # COURSE_FORK_KERNELS=0 gives every notebook a fresh kernel process instead
    from course_helpers.testing import forked_kernels

    config.course_forked_kernels = forked_kernels.install()


def pytest_report_header(config):
    forked = getattr(config, "course_forked_kernels", False)
    return "course kernels: " + ("forked from a template" if forked else "fresh processes")


SANITIZERS = {
    r"torch\.cuda\.(\w+Tensor)\b": r"torch.\1",
    r"<svg[\s\S]*?</svg>": "<svg/>",
    r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+": "data:image/svg+xml;base64,...",
}


def pytest_collectstart(collector):
    if type(collector).__name__ != "IPyNbFile":
        return
    if "image/svg+xml" not in collector.skip_compare:
        collector.skip_compare = tuple(collector.skip_compare) + ("image/svg+xml",)
    # nbval fills sanitize_patterns with update(), so these survive its setup().
    collector.sanitize_patterns.update(SANITIZERS)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # nbval starts one kernel per notebook when its first cell is set up; the kernel
    # inherits this process's environment at that moment.
    if type(item).__name__ != "IPyNbCell":
        return
    from course_helpers.authoring.build import kernel_env

    # the same kernel environment as the build that stored the outputs
    os.environ.update(kernel_env(Path(str(item.fspath))))
