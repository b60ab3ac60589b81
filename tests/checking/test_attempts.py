"""Attempt counts in the feedback (issue 12): kept in the progress file, shown only when
progress is recorded, so a notebook's saved outputs never depend on them."""

import sqlite3

import pytest
import torch

from course_helpers.checking.checker import check
from course_helpers.checking.progress import database_path


@pytest.fixture
def recording(monkeypatch):
    monkeypatch.delenv("COURSE_PROGRESS", raising=False)  # conftest's temp database


def test_each_check_says_which_attempt_it_is(recording):
    first = check("00.first_tensor", torch.tensor([1, 2, 3]))
    assert first.attempt == 1 and "Attempt 1 at this exercise." in str(first)
    assert check("00.first_tensor", ...).attempt == 0  # the stub is no attempt
    second = check("00.first_tensor", torch.tensor([9.0, 2.0, 3.0]))
    assert "Attempt 2 at this exercise." in str(second)
    passed = check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))
    assert passed.passed and "Passed after 3 attempts." in str(passed)
    assert "Passed after 3 attempts." in passed._repr_mimebundle_()["text/html"]
    again = check("00.first_tensor", torch.tensor([1.0, 2.0, 4.0]))
    assert "Attempt 4; you first passed this exercise on attempt 3." in str(again)


def test_a_first_time_pass_says_so(recording):
    assert "Passed on your first attempt." in str(check("00.how_to_run", "b"))


def test_with_progress_off_nothing_about_attempts_is_shown(monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS", "off")
    for _ in range(2):
        result = check("00.first_tensor", torch.tensor([1, 2, 3]))
        assert result.attempt == 0 and "ttempt" not in str(result)


def test_a_demo_check_counts_no_attempt(recording):
    check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]), demo=True)
    assert "Passed on your first attempt." in str(
        check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))
    )


def test_a_progress_file_from_before_gains_the_column(recording):
    path = database_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as old:
        old.execute(
            "CREATE TABLE results (exercise_id TEXT PRIMARY KEY, lesson TEXT NOT NULL, "
            "status TEXT NOT NULL, updated_at REAL NOT NULL, attempts INTEGER NOT NULL DEFAULT 1)"
        )
        old.execute("INSERT INTO results VALUES ('00.how_to_run', '00_start_here', 'failed', 0, 2)")
    old.close()
    assert "Passed after 3 attempts." in str(check("00.how_to_run", "b"))


def _attempts_stored(exercise_id):
    with sqlite3.connect(database_path()) as db:
        return db.execute(
            "SELECT attempts FROM results WHERE exercise_id = ?", (exercise_id,)
        ).fetchone()[0]


def test_running_a_cell_again_with_the_same_answer_is_no_new_attempt(recording):
    # issue 28, item 8: re-running a cell only to get its buttons back counted as an attempt
    wrong = check("00.first_tensor", torch.tensor([1, 2, 3]))
    again = check("00.first_tensor", torch.tensor([1, 2, 3]))  # a new tensor, the same answer
    assert (wrong.attempt, again.attempt) == (1, 1)
    assert "Attempt 1 at this exercise." in str(again)
    assert _attempts_stored("00.first_tensor") == 1
    assert check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0])).attempt == 2  # different
    assert check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0])).attempt == 2
    # back to an earlier answer is a new attempt (only a repeat of the last one is not)
    assert check("00.first_tensor", torch.tensor([1, 2, 3])).attempt == 3
    assert _attempts_stored("00.first_tensor") == 3
    assert check("00.how_to_run", "a").attempt == 1 and check("00.how_to_run", "b").attempt == 2


def test_a_function_answer_defined_again_is_the_same_answer_until_it_changes(recording):
    def every_other_column(x):  # the same cell run twice defines the function twice
        return x[:, ::1]

    first = check("01.every_other_column", every_other_column)

    def every_other_column(x):  # noqa: F811 - run again, unchanged
        return x[:, ::1]

    assert check("01.every_other_column", every_other_column).attempt == first.attempt == 1

    def every_other_column(x):  # noqa: F811 - really changed: other outputs
        return x[:, ::2]

    fixed = check("01.every_other_column", every_other_column)
    assert fixed.passed and fixed.attempt == 2 and "Passed after 2 attempts." in str(fixed)
