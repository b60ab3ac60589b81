"""Your progress: the latest result of every check, kept in a small local SQLite file.

The file lives in the user's data directory
(``platformdirs.user_data_dir("tensors-autograd-course")/progress.sqlite``);
``COURSE_PROGRESS_DB=path`` chooses another file and ``COURSE_PROGRESS=off`` turns
recording off. The database uses WAL mode and a busy timeout, so two notebooks open
at once can both record. A failed write never breaks a cell. A file in a read-only folder
is still shown (opened read-only), and recording there fails with one clear line. A check
of the same answer as the last one recorded (a cell run again) is no new attempt.

``progress()`` (and ``python -m course_helpers progress``) shows, per lesson, how many
exercises are done (latest check passed), attempted (latest check failed) and not started;
then the typical mistakes (catalogued misconceptions) your checks were diagnosed with, and
whether each was overcome: the exercise passed after the last time it was diagnosed. Those
live in a second table, ``misconceptions``, added to a file of an earlier version when the
course first opens it (a file it can only read is read as having none).
"""

from __future__ import annotations

import argparse
import html
import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from course_helpers.checking.mistakes import MISTAKES_HEADING, MetMistake

APP_NAME = "tensors-autograd-course"
SWITCH_ENV = "COURSE_PROGRESS"
DB_ENV = "COURSE_PROGRESS_DB"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    exercise_id TEXT PRIMARY KEY,
    lesson      TEXT NOT NULL,
    status      TEXT NOT NULL,
    updated_at  REAL NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 1,
    first_passed INTEGER,
    last_answer TEXT
)
"""
# one row per misconception met: how often, how often with evidence in the code, and whether
# the exercise passed after the last time (see checking.mistakes for the evidence states)
_MISTAKES_SCHEMA = """
CREATE TABLE IF NOT EXISTS misconceptions (
    exercise_id   TEXT NOT NULL,
    label         TEXT NOT NULL,
    lesson        TEXT NOT NULL,
    times         INTEGER NOT NULL DEFAULT 1,
    with_evidence INTEGER NOT NULL DEFAULT 0,
    said          TEXT NOT NULL DEFAULT '',
    first_met     REAL NOT NULL,
    last_met      REAL NOT NULL,
    overcome      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (exercise_id, label)
)
"""


def read_only_message(path: Path) -> str:
    """Why nothing can be recorded in ``path`` (its folder is read-only), on one line."""
    return (
        f"the progress file {path} is in a read-only folder: it can be shown, but nothing new "
        f"can be recorded there (set {DB_ENV} to a file in a writable folder, or "
        f"{SWITCH_ENV}=off)"
    )


def _read_only(path: Path) -> bool:
    """Whether ``path``'s folder cannot be written (SQLite's WAL needs that to read, too)."""
    return path.parent.is_dir() and not os.access(path.parent, os.W_OK)


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "").strip().lower() not in ("off", "0", "false", "no")


def database_path() -> Path:
    """The progress file: ``COURSE_PROGRESS_DB`` if set, else one in the user's data dir."""
    override = os.environ.get(DB_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return _default_path()


_NAME = "progress.sqlite"


def _default_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / _NAME


# One open connection per file and process: closing the last connection to a WAL database
# checkpoints it to disk (an fsync), which would cost tens of milliseconds on every check.
_open: dict[Path, sqlite3.Connection] = {}


def _connection(path: Path) -> sqlite3.Connection:
    connection = _open.get(path)
    if connection is None or not path.exists():
        foreign = not_a_progress_file(path)
        if foreign:  # never add our table to someone else's database
            from course_helpers.errors import CourseError

            raise CourseError(f"{path} is not a progress file ({foreign}): it was not changed.")
        connection = _open[path] = _connect(path)
    return connection


_SQLITE_HEADER = b"SQLite format 3\x00"


def not_a_progress_file(path: Path) -> str:
    """Why ``path`` is some other file, not a progress file ("" when it may be one: missing,
    empty, an SQLite database with our ``results`` table or with no table, or an SQLite
    file too damaged to read, which :func:`reset` may remove)."""
    import stat
    from contextlib import closing

    try:  # never blocks: a FIFO is opened without waiting for a writer
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return ""
    except OSError as err:
        return f"it cannot be read: {err.strerror}"
    try:
        mode = os.fstat(handle).st_mode
        if stat.S_ISDIR(mode):
            return "it is a folder"
        if not stat.S_ISREG(mode):
            return "it is not a regular file"
        head = os.read(handle, len(_SQLITE_HEADER))
    finally:
        os.close(handle)
    if not head:
        return ""
    if head != _SQLITE_HEADER:
        return "it is not an SQLite database"
    try:
        uri = f"{path.resolve().as_uri()}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    except sqlite3.Error:
        return ""  # a damaged store: reset removes it
    if tables and "results" not in tables:
        return f"an SQLite database of something else (tables: {', '.join(sorted(tables)[:5])})"
    return ""


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=5.0, check_same_thread=False)
    connection.execute("PRAGMA busy_timeout = 5000")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute(_SCHEMA)
    connection.execute(_MISTAKES_SCHEMA)  # absent from files of earlier versions: added here
    columns = {row[1] for row in connection.execute("PRAGMA table_info(results)")}
    if "first_passed" not in columns:  # a file written by an earlier version of the course
        connection.execute("ALTER TABLE results ADD COLUMN first_passed INTEGER")
    if "last_answer" not in columns:
        connection.execute("ALTER TABLE results ADD COLUMN last_answer TEXT")
    return connection


@dataclass(frozen=True)
class Attempts:
    """How often an exercise was checked (stubs not counted), and on which attempt it
    first passed (0: not yet)."""

    count: int
    first_passed: int = 0


def record(
    exercise_id: str, lesson: str, status: str, answer: str = "", mistake=None
) -> Attempts | None:
    """Save the latest result of a check; return the attempts so far (None when recording
    is off, or for a "not attempted" result, which is no attempt).

    ``mistake``: the :class:`~course_helpers.checking.mistakes.Mistake` the check diagnosed
    (None for none); a pass marks every mistake met in this exercise as overcome.

    A "not attempted" result (an untouched stub) never overwrites a real attempt, so
    re-running a fresh exercises notebook does not erase earlier work. ``answer``: the
    :func:`answer_fingerprint` of what was checked; the same answer with the same result as
    the last one recorded (a cell run again, e.g. to get its buttons back) is no new attempt.
    """
    if not enabled():
        return None
    path = database_path()
    try:
        connection = _connection(path)
    except sqlite3.OperationalError as err:
        if _read_only(path):
            from course_helpers.errors import CourseError

            raise CourseError(read_only_message(path)) from err
        raise
    with connection:
        if status == "not_attempted":
            connection.execute(
                "INSERT OR IGNORE INTO results (exercise_id, lesson, status, updated_at, "
                "attempts) VALUES (?, ?, ?, ?, 0)",
                (exercise_id, lesson, status, time.time()),
            )
            return None
        last = connection.execute(
            "SELECT status, attempts, first_passed, last_answer FROM results WHERE exercise_id = ?",
            (exercise_id,),
        ).fetchone()
        if answer and last and last[1] > 0 and (last[0], last[3]) == (status, answer):
            return Attempts(int(last[1]), int(last[2] or 0))  # the same answer again
        passed = status == "passed"
        _record_mistake(connection, exercise_id, lesson, passed, mistake)
        connection.execute(
            "INSERT INTO results (exercise_id, lesson, status, updated_at, first_passed, "
            "last_answer) VALUES (?, ?, ?, ?, CASE WHEN ? THEN 1 END, ?) "
            "ON CONFLICT(exercise_id) DO UPDATE SET "
            "lesson = excluded.lesson, status = excluded.status, "
            "updated_at = excluded.updated_at, attempts = results.attempts + 1, "
            "first_passed = COALESCE(results.first_passed, "
            "CASE WHEN excluded.status = 'passed' THEN results.attempts + 1 END), "
            "last_answer = excluded.last_answer",
            (exercise_id, lesson, status, time.time(), passed, answer or None),
        )
        count, first = connection.execute(
            "SELECT attempts, first_passed FROM results WHERE exercise_id = ?", (exercise_id,)
        ).fetchone()
    return Attempts(int(count), int(first or 0))


def _record_mistake(connection, exercise_id: str, lesson: str, passed: bool, mistake) -> None:
    now = time.time()
    if passed:
        connection.execute(
            "UPDATE misconceptions SET overcome = 1 WHERE exercise_id = ?", (exercise_id,)
        )
    elif mistake is not None:
        connection.execute(
            "INSERT INTO misconceptions (exercise_id, label, lesson, with_evidence, said, "
            "first_met, last_met) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(exercise_id, label) DO UPDATE SET times = times + 1, "
            "with_evidence = with_evidence + excluded.with_evidence, said = excluded.said, "
            "last_met = excluded.last_met, overcome = 0",
            (
                exercise_id,
                mistake.label,
                lesson,
                int(mistake.with_evidence),
                mistake.said,
                now,
                now,
            ),
        )


def answer_fingerprint(submission) -> str:
    """A digest of a recorded submission (what ``collect`` made of an answer): equal for
    the same answer checked again, e.g. the same function re-run on the same cases. Shared
    parts are hashed once; "" (never equal to another) for anything it cannot walk."""
    import hashlib

    digests: dict[int, bytes] = {}

    def walk(value) -> bytes:
        key = id(value)
        if key in digests:
            return digests[key]
        digests[key] = b"(cycle)"
        parts: list[bytes]
        if isinstance(value, dict):
            items = sorted(value.items(), key=lambda item: repr(item[0]))
            parts = [b"{"] + [walk(k) + walk(v) for k, v in items]
        elif isinstance(value, (list, tuple)):
            parts = [type(value).__name__.encode()] + [walk(item) for item in value]
        elif isinstance(value, (str, bytes, int, float, bool, type(None))):
            parts = [type(value).__name__.encode(), repr(value).encode()]
        else:
            parts = [type(value).__name__.encode(), _tensor_bytes(value)]
        digests[key] = hashlib.sha256(b"\0".join(parts)).digest()
        return digests[key]

    if isinstance(submission, dict) and "code" in submission:
        # the code is evidence of how the answer was made, not the answer: a comment changed
        # in the answer's cell does not make a new attempt
        submission = {k: v for k, v in submission.items() if k != "code"}
    try:
        return walk(submission).hex()
    except (RecursionError, MemoryError, TypeError):
        return ""


def _tensor_bytes(value) -> bytes:
    """A tensor's dtype, shape and bytes (its ``repr`` for anything else)."""
    try:
        import torch

        flat = value.detach().cpu().contiguous().reshape(-1)
        head = f"{value.dtype}{tuple(value.shape)}{value.requires_grad}".encode()
        return head + flat.view(torch.uint8).numpy().tobytes()
    except Exception:
        return repr(value).encode()


def latest_results(path: Path | None = None) -> dict[str, str]:
    """exercise id -> latest recorded status (empty when nothing was recorded yet)."""
    path = database_path() if path is None else path
    if not path.exists():
        return {}
    foreign = not_a_progress_file(path)
    if foreign:
        from course_helpers.errors import CourseError

        raise CourseError(f"{path} is not a progress file ({foreign}).")
    try:
        return dict(_connection(path).execute("SELECT exercise_id, status FROM results"))
    except sqlite3.OperationalError:
        if not _read_only(path):
            raise
    return _read_only_results(path)


def _read_only_results(path: Path, query: str = "SELECT exercise_id, status FROM results"):
    """The rows of ``query`` (by default the results, as a dict) from a file whose folder is
    read-only: opened read-only, or, where SQLite cannot (WAL with no ``-shm`` file), as an
    immutable file (a ``-wal`` file left unmerged, if any, is not seen)."""
    from contextlib import closing

    error = None
    for mode in ("mode=ro", "immutable=1"):
        try:
            with closing(sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)) as db:
                rows = db.execute(query).fetchall()
                return dict(rows) if query.startswith("SELECT exercise_id, status ") else rows
        except sqlite3.OperationalError as err:
            error = err
    raise error


_MISTAKES_QUERY = (
    "SELECT exercise_id, label, lesson, times, with_evidence, said, overcome "
    "FROM misconceptions ORDER BY first_met, exercise_id, label"
)


def met_mistakes(path: Path | None = None) -> list[MetMistake]:
    """The misconceptions recorded in the progress file, in the order first met (a file of
    an earlier version, with no such table yet, has none)."""
    path = database_path() if path is None else path
    if not path.exists():
        return []
    try:
        try:
            rows = _connection(path).execute(_MISTAKES_QUERY).fetchall()
        except sqlite3.OperationalError:
            if not _read_only(path):
                raise
            rows = _read_only_results(path, _MISTAKES_QUERY)
    except sqlite3.OperationalError as err:
        if "no such table" in str(err):
            return []
        raise
    return [MetMistake(*row[:6], bool(row[6])) for row in rows]


def reset(path: Path | None = None) -> str:
    """Forget every recorded result. A progress file too damaged to read is removed, so
    starting over always works; the return value then says so ("" otherwise). Any other
    file (not an SQLite database, or another program's database) is never touched: a
    ``CourseError`` says so, unless it has the progress file's own name (a store damaged
    beyond its header)."""
    from course_helpers.errors import CourseError

    path = database_path() if path is None else path
    if not path.exists():
        return ""
    if _read_only(path):
        raise CourseError(f"Cannot reset: {read_only_message(path)}.")
    foreign = not_a_progress_file(path)
    if foreign and not (foreign.endswith("not an SQLite database") and path.name == _NAME):
        raise CourseError(
            f"Cannot reset: {path} is not a progress file ({foreign}); nothing was deleted. "
            f"Name the progress file with --db (by default {_default_path()})."
        )
    try:
        if foreign:  # the store's own name, but not a database: damaged beyond its header
            raise sqlite3.DatabaseError("file is not a database")
        with _connection(path) as connection:
            connection.execute("DELETE FROM results")
        return ""
    except sqlite3.DatabaseError as err:
        stale = _open.pop(path, None)
        if stale is not None:
            stale.close()
        for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            name.unlink(missing_ok=True)
        return f"The progress file could not be read ({err}); it was removed."


@dataclass(frozen=True)
class LessonProgress:
    lesson: str
    done: int
    attempted: int
    not_started: int
    # ids of the exercises not started yet (named in the report once a lesson is begun)
    missing: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return self.done + self.attempted + self.not_started


@dataclass(frozen=True)
class ProgressReport:
    """Per-lesson counts; displays as a text table and an HTML table."""

    lessons: tuple[LessonProgress, ...]
    note: str = ""
    mistakes: tuple[MetMistake, ...] = ()  # the typical mistakes met, in the order first met

    def __str__(self) -> str:
        width = max([len("lesson")] + [len(p.lesson) for p in self.lessons])
        rows = [f"{'lesson':<{width}}  done  attempted  not started"]
        for p in self.lessons:
            rows.append(f"{p.lesson:<{width}}  {p.done:>4}  {p.attempted:>9}  {p.not_started:>11}")
        done = sum(p.done for p in self.lessons)
        total = sum(p.total for p in self.lessons)
        rows.append(f"{done} of {total} exercises done.")
        rows.extend(f"Not started in {p.lesson}: {', '.join(p.missing)}" for p in self._begun())
        if self.mistakes:
            rows.append(MISTAKES_HEADING)
            for m in self.mistakes:
                rows.append(f"  {m.exercise_id}: {m.shown} ({m.times_text}; {m.overcome_text})")
        if self.note:
            rows.append(self.note)
        return "\n".join(rows)

    def __repr__(self) -> str:
        return str(self)

    def _begun(self) -> list[LessonProgress]:
        """Lessons with some exercises done or attempted and others not started yet."""
        return [p for p in self.lessons if p.missing and (p.done or p.attempted)]

    def _repr_mimebundle_(self, include=None, exclude=None):
        cell = 'style="padding: 2px 8px; text-align: {}"'
        head = "".join(
            f"<th {cell.format(a)}>{h}</th>"
            for h, a in (
                ("lesson", "left"),
                ("done", "right"),
                ("attempted", "right"),
                ("not started", "right"),
            )
        )
        body = "".join(
            f"<tr><td {cell.format('left')}><code>{html.escape(p.lesson)}</code></td>"
            f"<td {cell.format('right')}>{p.done}</td>"
            f"<td {cell.format('right')}>{p.attempted}</td>"
            f"<td {cell.format('right')}>{p.not_started}</td></tr>"
            for p in self.lessons
        )
        done = sum(p.done for p in self.lessons)
        total = sum(p.total for p in self.lessons)
        note = f"<div>{html.escape(self.note)}</div>" if self.note else ""
        note += "".join(
            f"<div>Not started in <code>{html.escape(p.lesson)}</code>: "
            + ", ".join(f"<code>{html.escape(i)}</code>" for i in p.missing)
            + "</div>"
            for p in self._begun()
        )
        table = (
            f'<table class="course-progress"><thead><tr>{head}</tr></thead><tbody>{body}'
            f"</tbody></table><div>{done} of {total} exercises done.</div>{note}"
        )
        return {"text/plain": str(self), "text/html": table + self._mistakes_html(cell)}

    def _mistakes_html(self, cell: str) -> str:
        if not self.mistakes:
            return ""
        head = "".join(
            f"<th {cell.format('left')}>{h}</th>"
            for h in ("exercise", "typical mistake", "met", "overcome")
        )
        body = "".join(
            f"<tr><td {cell.format('left')}><code>{html.escape(m.exercise_id)}</code></td>"
            f"<td {cell.format('left')}>{html.escape(m.shown)}</td>"
            f"<td {cell.format('left')}>{html.escape(m.times_text)}</td>"
            f"<td {cell.format('left')}>{html.escape(m.overcome_text)}</td></tr>"
            for m in self.mistakes
        )
        return (
            f"<div>{html.escape(MISTAKES_HEADING)}</div>"
            f'<table class="course-mistakes"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )


def summarize(results: dict[str, str]) -> tuple[LessonProgress, ...]:
    """Count done / attempted / not started per lesson of the catalog."""
    from course_helpers.lessons import catalog

    counts: dict[str, list[int]] = {}
    missing: dict[str, list[str]] = {}
    for exercise in catalog():
        row = counts.setdefault(exercise.lesson, [0, 0, 0])
        status = results.get(exercise.id)
        if status == "passed":
            row[0] += 1
        elif status in ("failed", "error"):
            row[1] += 1
        else:
            row[2] += 1
            missing.setdefault(exercise.lesson, []).append(exercise.id)
    return tuple(
        LessonProgress(lesson, *row, tuple(missing.get(lesson, ())))
        for lesson, row in counts.items()
    )


def progress(path: Path | None = None) -> ProgressReport:
    """Your progress per lesson: exercises done, attempted (not passed yet) and not started."""
    from course_helpers.errors import CourseError

    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise CourseError(
            f"progress() takes no argument (or the path of a progress file), not {path!r}. "
            "Call progress() to see your progress."
        )
    if not enabled():  # nothing is read either, so the table is the same on every machine
        note = f"Progress recording is off ({SWITCH_ENV}=off)."
        return ProgressReport(summarize({}), note)
    shown = database_path() if path is None else Path(path)
    try:
        results = latest_results(None if path is None else Path(path))
        mistakes = tuple(met_mistakes(None if path is None else Path(path)))
        note = f"Note: {read_only_message(shown)}." if shown.exists() and _read_only(shown) else ""
    except sqlite3.Error as err:
        results, mistakes, note = {}, (), f"The progress file could not be read: {err}"
    except CourseError as err:
        results, mistakes, note = {}, (), str(err)
    return ProgressReport(summarize(results), note, mistakes)


def main(argv: list[str] | None = None) -> int:
    """``python -m course_helpers progress [--db PATH] [--reset]``."""
    parser = argparse.ArgumentParser(
        prog="python -m course_helpers progress",
        description="Show your exercise progress per lesson.",
    )
    parser.add_argument("--db", help=f"progress file to read (default: ${DB_ENV} or the data dir)")
    parser.add_argument("--reset", action="store_true", help="forget every recorded result")
    args = parser.parse_args(argv)
    path = Path(args.db).expanduser() if args.db else database_path()
    from course_helpers.errors import CourseError

    if args.reset:
        try:
            note = reset(path)
        except CourseError as err:
            print(err, file=sys.stderr)
            return 1
        print(f"{note} Progress reset ({path}).".strip())
        return 0
    foreign = not_a_progress_file(path)
    if foreign:
        print(f"{path} is not a progress file ({foreign}): nothing to show.", file=sys.stderr)
        return 1
    print(progress(path))
    return 0
