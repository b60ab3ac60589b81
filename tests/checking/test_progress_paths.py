"""Issue 37, item 12: the progress store never deletes or changes a file that is not its own.

`progress --reset --db notes.txt` deleted any file that was not SQLite and exited 0, and
viewing `--db other.db` added a `results` table to another program's database."""

import sqlite3

import pytest

from course_helpers.checking import progress as store


@pytest.fixture(autouse=True)
def _recording_on(monkeypatch):
    monkeypatch.delenv("COURSE_PROGRESS", raising=False)


def _foreign_database(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        db.execute("INSERT INTO invoices (total) VALUES (12.5)")
    return path.read_bytes()


def test_reset_never_deletes_a_file_that_is_not_a_progress_file(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("my lecture notes\n")
    assert store.main(["--db", str(notes), "--reset"]) == 1
    err = capsys.readouterr().err
    assert "not a progress file" in err and "nothing was deleted" in err and "--db" in err
    assert notes.read_text() == "my lecture notes\n"
    other = tmp_path / "accounts.db"
    before = _foreign_database(other)
    assert store.main(["--db", str(other), "--reset"]) == 1
    assert "invoices" in capsys.readouterr().err
    assert other.read_bytes() == before


def test_viewing_or_recording_never_adds_a_table_to_another_database(tmp_path, capsys, monkeypatch):
    other = tmp_path / "accounts.db"
    before = _foreign_database(other)
    assert store.main(["--db", str(other)]) == 1
    err = capsys.readouterr().err
    assert "is not a progress file" in err and "Traceback" not in err
    assert "not a progress file" in str(store.progress(other))
    # check() recording into it: the verdict is shown, the note is one line, nothing written
    from course_helpers.checking.checker import check

    monkeypatch.setenv("COURSE_PROGRESS_DB", str(other))
    assert check("00.how_to_run", "b").status == "passed"
    assert "not a progress file" in capsys.readouterr().err
    with sqlite3.connect(f"{other.as_uri()}?mode=ro", uri=True) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert tables == ["invoices"]
    assert other.read_bytes() == before


def test_a_real_progress_file_and_a_missing_one_still_work(tmp_path, monkeypatch):
    db = tmp_path / "mine.sqlite"
    monkeypatch.setenv("COURSE_PROGRESS_DB", str(db))
    assert store.not_a_progress_file(db) == ""  # missing: it will be made
    store.record("00.how_to_run", "00_start_here", "passed")
    assert store.not_a_progress_file(db) == ""
    assert store.main(["--reset"]) == 0
    assert store.latest_results(db) == {}
