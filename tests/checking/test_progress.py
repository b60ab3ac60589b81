"""Progress: latest result per exercise in SQLite, per-lesson summary, CLI."""

import importlib
import multiprocessing
import sqlite3

import pytest
import torch

import course_helpers
from course_helpers.checking.checker import check
from course_helpers.checking.progress import database_path, latest_results, main, progress, record
from course_helpers.lessons import catalog


@pytest.fixture(autouse=True)
def _recording_on(monkeypatch):
    # the course's pytest plugin turns recording off for notebooks; these tests need it on
    monkeypatch.delenv("COURSE_PROGRESS", raising=False)


def test_check_records_the_latest_result(tmp_path):
    check("00.first_tensor", torch.tensor([1, 2, 3]))
    assert latest_results() == {"00.first_tensor": "failed"}
    check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))
    assert latest_results() == {"00.first_tensor": "passed"}
    assert database_path() == tmp_path / "progress.sqlite"  # conftest's temp database


def test_an_untouched_stub_does_not_erase_a_real_attempt():
    check("00.how_to_run", "b")
    check("00.how_to_run", ...)
    assert latest_results()["00.how_to_run"] == "passed"
    check("00.first_tensor", ...)
    assert latest_results()["00.first_tensor"] == "not_attempted"


def test_recording_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS", "off")
    check("00.how_to_run", "b")
    assert not database_path().exists()
    assert "Progress recording is off" in str(progress())
    monkeypatch.delenv("COURSE_PROGRESS")
    check("00.how_to_run", "b")
    monkeypatch.setenv("COURSE_PROGRESS", "off")
    # when off, nothing is read either: the same table on every machine (nbval compares it)
    assert all(p.done == 0 for p in progress().lessons)


def test_summary_counts_per_lesson():
    check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))
    check("00.how_to_run", "a")
    report = progress()
    first = report.lessons[0]
    assert (first.lesson, first.done, first.attempted, first.not_started) == (
        "00_start_here",
        1,
        1,
        0,
    )
    lessons = [e.lesson for e in catalog()]
    assert [p.lesson for p in report.lessons] == list(dict.fromkeys(lessons))
    assert sum(p.total for p in report.lessons) == len(catalog())
    text = str(report)
    assert text.splitlines()[0].split() == ["lesson", "done", "attempted", "not", "started"]
    assert f"1 of {len(catalog())} exercises done." in text
    assert "<table" in report._repr_mimebundle_()["text/html"]


def test_public_progress_works_even_after_the_module_is_imported():
    module = importlib.import_module("course_helpers.checking.progress")
    assert callable(course_helpers.progress)
    assert str(course_helpers.progress()) == str(module.progress())


def _writer(db, worker):
    import os

    os.environ["COURSE_PROGRESS_DB"] = db
    for i in range(40):
        record(f"{worker}.exercise_{i}", "00_start_here", "failed")
        record(f"{worker}.exercise_{i}", "00_start_here", "passed")


def test_two_processes_can_write_at_once(tmp_path):
    db = str(tmp_path / "shared.sqlite")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(db, name)) for name in ("a", "b")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert [w.exitcode for w in workers] == [0, 0]
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT status, attempts FROM results").fetchall()
    assert len(rows) == 80
    assert set(rows) == {("passed", 2)}


def test_a_failed_write_is_one_line_not_an_error(monkeypatch, tmp_path, capsys):
    import course_helpers.checking.checker as checking

    monkeypatch.setattr(checking, "_noted", set())
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("COURSE_PROGRESS_DB", str(blocker / "progress.sqlite"))
    assert check("00.how_to_run", "b").passed
    assert check("00.how_to_run", "b").passed
    err = capsys.readouterr().err
    assert err.startswith("note: progress not saved:")
    assert err.count("\n") == 1  # one line, once


def test_cli_prints_the_table_and_resets(capsys):
    check("00.how_to_run", "b")
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "00_start_here" in out and "1 of" in out
    assert main(["--reset"]) == 0
    assert latest_results() == {}


def test_cli_reads_another_database(capsys, tmp_path, monkeypatch):
    other = tmp_path / "other.sqlite"
    default = database_path()
    assert main(["--db", str(other)]) == 0
    assert f"0 of {len(catalog())} exercises done." in capsys.readouterr().out
    # a pass recorded only in the other database: --db must be what the CLI reads
    monkeypatch.setenv("COURSE_PROGRESS_DB", str(other))
    check("00.how_to_run", "b")
    monkeypatch.setenv("COURSE_PROGRESS_DB", str(default))
    assert latest_results() == {}  # the default (conftest's) database has nothing
    assert main(["--db", str(other)]) == 0
    assert f"1 of {len(catalog())} exercises done." in capsys.readouterr().out
    assert database_path() == default  # --db reads that file without changing the setting


def test_a_begun_lesson_names_what_is_not_started():
    lesson01 = [e for e in catalog() if e.lesson == "01_tensors"]
    first, rest = lesson01[0], lesson01[1:]
    check(first.id, first.reference)
    report = progress()
    row = next(p for p in report.lessons if p.lesson == "01_tensors")
    assert row.missing == tuple(e.id for e in rest)
    text = str(report)
    assert f"Not started in 01_tensors: {', '.join(e.id for e in rest)}" in text
    assert "Not started in 02_" not in text  # lessons not begun are not listed id by id
    assert rest[0].id in report._repr_mimebundle_()["text/html"]


def test_a_demo_check_shows_its_verdict_but_records_nothing():
    shown = check("00.first_tensor", torch.tensor([1, 2, 3]), demo=True)
    assert shown.status == "failed"  # the learner still sees the verdict
    assert latest_results() == {}  # ... but it is not their attempt
    check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))
    check("00.first_tensor", torch.tensor([1, 2, 3]), demo=True)
    assert latest_results() == {"00.first_tensor": "passed"}  # nor does it overwrite one


def test_lesson_00_marks_its_worked_example_as_a_demo():
    import re
    from pathlib import Path

    import nbformat

    root = Path(__file__).resolve().parents[2]
    nb = nbformat.read(root / "notebooks" / "00_start_here.ipynb", 4)
    calls = [
        (cell.source, call)
        for cell in nb.cells
        if cell.cell_type == "code"
        for call in re.findall(r"check\([^\n]*\)", cell.source)
    ]
    demos = [call for source, call in calls if "demo=True" in call]
    own = [call for source, call in calls if "demo=True" not in call]
    # the typical first attempt (right numbers, wrong dtype) is a demo ...
    assert demos == ['check("00.first_tensor", answer, demo=True)']
    # ... and the learner's own cells are the stubs they fill in
    assert all("..." in source for source, call in calls if "demo=True" not in call)
    assert {re.match(r'check\("([\w.]+)"', call).group(1) for call in own} == {
        "00.first_tensor",
        "00.how_to_run",
    }
