"""The course's pytest plugin (``-p course_helpers.testing.pytest_plugin`` in pyproject.toml).

``-p course_helpers.pytest_plugin``, the name instructors' configs use, loads the same plugin.

It makes ``pytest --nbval`` runs of the course hermetic and strict:

- checks never write to the learner's progress database (``COURSE_PROGRESS=off``);
- the run stops at once, saying how to fix it, where a kernel could not import
  ``course_helpers`` (an environment without the course installed, or an editable install
  whose checkout is gone): every notebook's setup cell would otherwise install the course from
  GitHub, and the run would test that copy, not this one;
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
- text that differs between supported machines, torch and Python versions while meaning the
  same is normalised by the rules in ``RULES`` (``SANITIZERS`` is their pattern table, the form
  nbval takes). Each rule says why it exists and carries the texts it must make equal; the rest
  of every output is compared. What a rule cannot make equal is designed out of the lesson
  instead: rounded prints, or the raw text in a cell tagged ``nbval-ignore-output`` with a
  compared check beside it (README, "When your torch differs").
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = [
    "RULES",
    "SANITIZERS",
    "SanitizerRule",
    "pytest_collectstart",
    "pytest_configure",
    "pytest_report_header",
    "pytest_sessionstart",
    "pytest_runtest_setup",
    "pytest_runtest_teardown",
    "sanitize",
]


def pytest_configure(config):
    # forced, not defaulted: a learner's COURSE_PROGRESS=on must not let tests write there
    os.environ["COURSE_PROGRESS"] = "off"
    # kernels forked from a template that imported torch once (testing.forked_kernels);
    # COURSE_FORK_KERNELS=0 gives every notebook a fresh kernel process instead
    from course_helpers.testing import forked_kernels

    config.course_forked_kernels = forked_kernels.install()
    # COURSE_TEST_PROFILE=DIR: each test's time as JSON lines (benchmarks/profile_tests.py)
    from course_helpers.testing import profiling

    profiling.register(config)


def course_import_problem(python: list[str]) -> str | None:
    """What stops ``python`` (a kernel's interpreter) from importing course_helpers outside
    this folder, or None where it can."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as elsewhere:
        done = subprocess.run(
            [*python, "-c", "import course_helpers"],
            cwd=elsewhere, capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["no message"])[-1]
    return (
        f"the notebooks' kernels cannot import course_helpers ({' '.join(python)}: {last}), so "
        "their setup cells would install the course from GitHub instead of testing this "
        "checkout. Install it into this environment: `pip install -e .` in the checkout "
        "(`make setup` does; a lane's venv: `make test-compat` reinstalls it when its stamp is "
        "older than pyproject.toml, so delete <venv>/.course-installed)."
    )


def pytest_sessionstart(session):
    if hasattr(session.config, "workerinput"):
        return  # checked once, by the process that starts the workers
    problem = course_import_problem([sys.executable])
    if problem:
        pytest.exit(problem, returncode=4)


def pytest_report_header(config):
    forked = getattr(config, "course_forked_kernels", False)
    lines = ["course kernels: " + ("forked from a template" if forked else "fresh processes")]
    try:  # which torch the stored outputs are compared under (the compatibility lane's point)
        from importlib.metadata import version

        lines.append(f"course versions: torch {version('torch')}, Python {sys.version.split()[0]}")
    except Exception:  # a header must never stop the run
        pass
    return lines


_ENV_BEFORE = pytest.StashKey[dict]()


@dataclass(frozen=True)
class SanitizerRule:
    """One normalisation nbval applies to stored and fresh outputs before comparing them.

    ``examples`` pairs a text one supported setup prints with the text the stored outputs
    (torch 2.13, Python 3.11, CPU) have; tests/testing/test_pytest_plugin.py checks that the
    rule makes every pair equal and leaves the canonical text as it is.
    """

    pattern: str
    replacement: str
    reason: str
    examples: tuple[tuple[str, str], ...] = ()


RULES: tuple[SanitizerRule, ...] = (
    SanitizerRule(
        r"torch\.cuda\.(\w+Tensor)\b",
        r"torch.\1",
        "PyTorch names a tensor's legacy type in some autograd errors: torch.FloatTensor on "
        "the CPU, torch.cuda.FloatTensor on a GPU. The lessons teach the shape and the "
        "version counter in that message, which are the same on both.",
        (
            (
                "[torch.cuda.FloatTensor [3]], which is output 0 of Sigmoid",
                "[torch.FloatTensor [3]], which is output 0 of Sigmoid",
            ),
        ),
    ),
    SanitizerRule(
        r"<svg[\s\S]*?</svg>",
        "<svg/>",
        "An inline SVG graph picture depends on which Graphviz build (or the built-in "
        "layout) drew it; the picture's text form beside it, which lists every node and "
        "edge, is compared instead.",
    ),
    SanitizerRule(
        r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+",
        "data:image/svg+xml;base64,...",
        "The same SVG picture embedded as an <img> data URL in HTML output.",
    ),
    SanitizerRule(
        r"\b([Oo]utput \d+ of )([A-Z]\w*?)Backward\d+\b",
        r"\1\2",
        "Autograd errors name the node that produced a saved or viewed tensor. torch 2.13 "
        "and 2.14 write the operation (output 0 of Tanh, Output 0 of Split); torch 2.11 "
        "writes the node's class (output 0 of TanhBackward0, Output 0 of SplitBackward0). "
        "Both name the same operation, which is what the lessons teach to read; the rest of "
        "the message (shape, versions, hint) is still compared.",
        (
            (
                "which is output 0 of TanhBackward0, is at version 1; expected version 0",
                "which is output 0 of Tanh, is at version 1; expected version 0",
            ),
            (
                "Output 0 of SplitBackward0 is a view and is being modified inplace.",
                "Output 0 of Split is a view and is being modified inplace.",
            ),
            ("which is output 0 of MulBackward0, is", "which is output 0 of Mul, is"),
            ("which is output 0 of ExpBackward0, is", "which is output 0 of Exp, is"),
            ("which is output 0 of SigmoidBackward0, is", "which is output 0 of Sigmoid, is"),
            (
                "which is output 0 of AsStridedBackward0, is",
                "which is output 0 of AsStrided, is",
            ),
            ("Output 0 of UnbindBackward0 is a view", "Output 0 of Unbind is a view"),
        ),
    ),
    SanitizerRule(
        r"<module '__main__' \(<class '_frozen_importlib\.BuiltinImporter'>\)>",
        "<module '__main__' (built-in)>",
        "Python 3.12 changed the repr of a built-in module such as a fresh interpreter's "
        "__main__: Python 3.11 writes <module '__main__' (built-in)>, 3.12 names the "
        "loader's class. Lesson 13 shows that unpickling a notebook function fails in a "
        "child process because the child's __main__ has no such attribute; both forms say "
        "that.",
        (
            (
                "AttributeError: Can't get attribute 'train' on <module '__main__' "
                "(<class '_frozen_importlib.BuiltinImporter'>)>",
                "AttributeError: Can't get attribute 'train' on <module '__main__' (built-in)>",
            ),
        ),
    ),
)

# The form nbval takes: pattern -> replacement, applied in this order.
SANITIZERS = {rule.pattern: rule.replacement for rule in RULES}


def sanitize(text: str) -> str:
    """``text`` as nbval compares it: every rule of ``RULES`` applied in order. Tests that
    check a message torch words differently between supported versions read it through this."""
    for pattern, replacement in SANITIZERS.items():
        text = re.sub(pattern, replacement, text)
    return text


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

    # the same kernel environment as the build that stored the outputs, for this cell only:
    # left in place, a solution's COURSE_STRICT=1 reached the next file's tests on the same
    # worker (a module fixture's kernel, started before any function fixture resets it)
    wanted = kernel_env(Path(str(item.fspath)))
    item.stash[_ENV_BEFORE] = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)


def pytest_runtest_teardown(item):
    """Put back the environment ``pytest_runtest_setup`` changed for a notebook cell."""
    before = item.stash.get(_ENV_BEFORE, None) if hasattr(item, "stash") else None
    for name, value in (before or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
