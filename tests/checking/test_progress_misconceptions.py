"""A learner's own view (issue 39, item 3): progress() lists the typical mistakes the checks
were diagnosed with and whether each was overcome, from a table an older progress file
gains when it is first written."""

import sqlite3
from unittest import mock

import pytest
import torch

from course_helpers.checking import progress as store
from course_helpers.checking.checker import check
from course_helpers.checking.mistakes import Mistake, describe

OLD_SCHEMA = """
CREATE TABLE results (
    exercise_id TEXT PRIMARY KEY,
    lesson      TEXT NOT NULL,
    status      TEXT NOT NULL,
    updated_at  REAL NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 1,
    first_passed INTEGER,
    last_answer TEXT
)
"""


@pytest.fixture(autouse=True)
def _recording_on(monkeypatch):
    monkeypatch.delenv("COURSE_PROGRESS", raising=False)


def _cell(source: str):
    """Check from a cell whose code is ``source`` (as IPython's history holds it)."""
    shell = mock.Mock()
    shell.history_manager.input_hist_raw = ["", source]
    return mock.patch("IPython.get_ipython", return_value=shell)


def test_progress_shows_the_mistakes_met_and_whether_they_were_overcome():
    with _cell("answer = torch.arange(1, 13).reshape(3, 4)\ncheck('01.arange_grid', answer)"):
        check("01.arange_grid", torch.arange(1, 13).reshape(3, 4))
    typed = "answer = torch.tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]])"
    with _cell(typed + "\ncheck('01.arange_grid', answer)"):
        check("01.arange_grid", torch.arange(12).reshape(4, 3))  # the values of a reshape(4, 3)
    check("01.arange_grid", torch.arange(12).reshape(3, 4))  # right: both overcome
    with _cell("answer = torch.arange(1, 6) * 0.5\ncheck('01.linspace_points', answer)"):
        check("01.linspace_points", torch.linspace(-1, 1, 4))  # steps read as intervals
    report = store.progress()
    met = {m.label: m for m in report.mistakes}
    assert set(met) == {
        "arange counted from 1",
        "rows and columns swapped",
        "steps read as intervals",
    }
    assert met["arange counted from 1"].overcome and met["rows and columns swapped"].overcome
    assert not met["steps read as intervals"].overcome
    # seen in the code: named by its label; values only: named by what the check observed
    assert met["arange counted from 1"].shown == "arange counted from 1"
    assert met["rows and columns swapped"].with_evidence == 0
    assert met["rows and columns swapped"].shown.startswith("Your grid has 4 rows of 3 numbers")
    assert "swapped" not in met["rows and columns swapped"].shown
    text = str(report)
    assert store.MISTAKES_HEADING in text
    assert "01.arange_grid: arange counted from 1 (once, seen in your code; overcome" in text
    assert (
        "01.linspace_points: You have 4 points from -1 to 1, one too few (once, from your" in text
    )
    assert "not passed since" in text
    html = report._repr_mimebundle_()["text/html"]
    assert 'class="course-mistakes"' in html and "one too few" in html


def test_a_mistake_met_again_after_a_pass_is_no_longer_overcome():
    wrong = torch.arange(1, 13).reshape(3, 4)
    for answer in (wrong, torch.arange(12).reshape(3, 4), wrong):
        check("01.arange_grid", answer)
    (met,) = store.met_mistakes()
    assert (met.times, met.overcome) == (2, False)


def test_the_same_answer_run_again_is_not_a_second_meeting():
    for _ in range(2):
        check("01.arange_grid", torch.arange(1, 13).reshape(3, 4))
    (met,) = store.met_mistakes()
    assert met.times == 1


def test_an_old_progress_file_keeps_working_and_gains_the_table(tmp_path, monkeypatch):
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as old:
        old.execute(OLD_SCHEMA)
        row = ("01.arange_grid", "01_tensors", "failed", 1.0, 2, None, "x")
        old.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?)", row)
    old.close()
    # read before anything is recorded: the results are there, no mistakes, no error
    report = store.progress(db)
    assert "could not be read" not in str(report) and report.mistakes == ()
    row = next(p for p in report.lessons if p.lesson == "01_tensors")
    assert row.attempted == 1
    monkeypatch.setenv("COURSE_PROGRESS_DB", str(db))
    check("01.arange_grid", torch.arange(12).reshape(4, 3))
    assert store.latest_results(db)["01.arange_grid"] == "failed"
    with sqlite3.connect(db) as again:
        attempts = again.execute("SELECT attempts FROM results").fetchone()[0]
    assert attempts == 3  # the old row went on counting
    assert [m.label for m in store.progress(db).mistakes] == ["rows and columns swapped"]


def test_describe_reads_the_evidence_as_the_learner_was_told():
    code = {"where": "answer cell", "text": "answer = torch.arange(1, 13).reshape(3, 4)"}
    seen = describe("01.arange_grid", "arange counted from 1", code)
    assert isinstance(seen, Mistake) and seen.with_evidence
    assert "Your code calls `arange`" in seen.said
    typed = {"where": "answer cell", "text": "answer = torch.tensor([1, 2])"}
    assert describe("01.arange_grid", "arange counted from 1", typed).evidence == "absent"
    assert describe("01.arange_grid", "arange counted from 1", None).evidence == "unread"
    assert describe("01.arange_grid", "no such label", code) is None
    assert describe("01.arange_grid", "", code) is None
