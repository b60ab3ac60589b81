"""Shared test setup: never touch the learner's progress database."""

import os

import pytest

# Grading fixtures are notebooks meant to be graded, not nbval-tested.
collect_ignore = ["fixtures"]


@pytest.fixture(autouse=True)
def _isolated_course_env(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_PROGRESS_DB", str(tmp_path / "progress.sqlite"))
    for name in ("COURSE_DEVICE", "COURSE_STRICT", "COURSE_GRADING_DIR"):
        monkeypatch.delenv(name, raising=False)
    yield


def pytest_report_header(config):
    return f"course env: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
