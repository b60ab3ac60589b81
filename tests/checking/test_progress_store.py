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


def _read_only_runner(folder):
    """A command prefix that runs a program with ``folder`` read-only for it, even as root
    (root ignores permission bits): a read-only bind mount with bubblewrap where it works,
    else (a normal user) the folder's permission bits."""
    import os
    import shutil
    import subprocess

    bwrap = shutil.which("bwrap")
    if bwrap:
        prefix = [bwrap, "--bind", "/", "/", "--dev-bind", "/dev", "/dev"]
        prefix += ["--ro-bind", str(folder), str(folder), "--unshare-user", "--cap-drop", "ALL"]
        if subprocess.run([*prefix, "true"], capture_output=True, check=False).returncode == 0:
            return prefix
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return []
    pytest.skip("as root, a read-only folder needs bubblewrap (apt install bubblewrap)")


def _run(prefix, db, *args):
    import os
    import subprocess
    import sys

    env = dict(os.environ, COURSE_PROGRESS="on", COURSE_PROGRESS_DB=str(db))
    return subprocess.run(
        [*prefix, sys.executable, *args], env=env, capture_output=True, text=True, check=False
    )


@pytest.fixture
def read_only_db(tmp_path, monkeypatch):
    """An intact progress file (one exercise passed, one failed) in a read-only folder."""
    folder = tmp_path / "shared"
    folder.mkdir()
    db = folder / "progress.sqlite"
    monkeypatch.setenv("COURSE_PROGRESS_DB", str(db))
    store.record("00.first_tensor", "00_start_here", "passed")
    store.record("00.how_to_run", "00_start_here", "failed")
    store._open.pop(db).close()  # as a finished session leaves it
    yield db, _read_only_runner(folder)
    folder.chmod(0o755)


def test_an_intact_file_in_a_read_only_folder_is_shown(read_only_db):
    # WAL needs write access to the folder: this read gave "unable to open database file"
    db, prefix = read_only_db
    done = _run(prefix, db, "-m", "course_helpers", "progress")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("00_start_here"))
    assert row.split()[1:] == ["1", "1", "0"]  # done, attempted, not started
    assert "could not be read" not in done.stdout
    assert "read-only folder" in done.stdout and "nothing new can be recorded" in done.stdout
    shown = _run(prefix, db, "-c", "from course_helpers import progress; print(progress())")
    assert shown.returncode == 0 and "read-only folder" in shown.stdout, shown.stderr


def test_recording_into_a_read_only_folder_fails_with_one_clear_line(read_only_db):
    db, prefix = read_only_db
    code = (
        "import torch\nfrom course_helpers.checking.checker import check\n"
        "print(check('00.how_to_run', 'b').status)"
    )
    done = _run(prefix, db, "-c", code)
    assert done.returncode == 0 and done.stdout.strip().endswith("passed"), done.stderr
    assert "Traceback" not in done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: progress")]
    assert len(notes) == 1 and "read-only folder" in notes[0], done.stderr
    assert "nothing new can be recorded" in notes[0]
    reset = _run(prefix, db, "-m", "course_helpers", "progress", "--reset")
    assert reset.returncode == 1 and "Traceback" not in reset.stderr
    assert reset.stderr.strip().startswith("Cannot reset:") and "read-only" in reset.stderr
    assert len(reset.stderr.strip().splitlines()) == 1
