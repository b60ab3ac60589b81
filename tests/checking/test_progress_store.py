"""Issue 23, item 14: a corrupted progress file can always be reset."""

import pytest

from course_helpers.checking import progress as store


@pytest.fixture(autouse=True)
def _recording_on(monkeypatch):
    monkeypatch.delenv("COURSE_PROGRESS", raising=False)


def test_reset_starts_over_from_a_corrupted_file(tmp_path, capsys):
    # `progress --reset` on a corrupted file gave a traceback and rc 1: no way to start over
    db = tmp_path / "progress.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    assert store.main(["--db", str(db), "--reset"]) == 0
    out = capsys.readouterr().out
    assert "Progress reset" in out and "could not be read" in out
    assert store.latest_results(db) == {}  # a fresh, working file
    store.main(["--db", str(db)])
    assert "could not be read" not in capsys.readouterr().out
