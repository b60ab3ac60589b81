"""Issue 23: what the grader accepts as a submission, and what it refuses before any kernel
starts (links, special files, huge files), its command line, and its reports' escaping."""

import json
import os
from pathlib import Path

import nbformat

from course_helpers.grading.grade import grade_notebook

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "grading"


def test_a_submission_that_links_to_the_answer_key_is_refused(tmp_path):
    # item 3: a symlink to the grader's solutions/01_tensors.ipynb scored 8/8
    link = tmp_path / "01_tensors.ipynb"
    link.symlink_to(ROOT / "solutions" / "01_tensors.ipynb")
    grade = grade_notebook(str(link), timeout=30)
    assert grade.run.startswith("refused: a symbolic link"), grade.run
    assert grade.score == 0


def test_a_huge_submission_is_refused_before_it_runs(tmp_path):
    notebook = nbformat.read(FIXTURES / "correct.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell("x" * (21 * 2**20)))
    path = tmp_path / "huge.ipynb"
    nbformat.write(notebook, path)
    grade = grade_notebook(str(path), timeout=30)
    assert grade.run.startswith("refused: larger than 20 MiB"), grade.run


def test_a_submission_that_is_not_a_regular_file_is_refused(tmp_path):
    fifo = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo)  # reading it would block the grader forever
    grade = grade_notebook(str(fifo), timeout=30)
    assert grade.run.startswith("refused: not a regular file"), grade.run
    assert json.dumps(grade.run)  # a plain message, reported like any other


def test_a_record_of_shared_subtrees_is_refused_quickly():
    # item 6: 40 nested levels sharing subtrees made invalid_reason walk 2**40 nodes and the
    # batch never ended (20 levels here: a million parts, already far past the budget)
    import time

    from course_helpers.records import invalid_reason

    record = 1.0
    for _ in range(20):
        record = {"_r": "list", "items": [record, record]}
    assert invalid_reason({"_r": "list", "items": [1.0]}) is None  # imports torch untimed
    started = time.perf_counter()
    reason = invalid_reason(record)
    assert reason is not None and "more than" in reason and "parts" in reason
    assert time.perf_counter() - started < 2
    assert invalid_reason({"_r": "list", "items": [1.0] * 1000}) is None  # honest: fine


# --------------------------------------------------------------------------- the command line

MY_WORK = str(FIXTURES / "attacks" / "my_work.ipynb")  # no exercises: graded without a kernel


def _run_main(argv, capsys):
    import pytest

    from course_helpers.grading.command import main

    with pytest.raises(SystemExit) as stopped:
        main(argv)
    return stopped.value.code, capsys.readouterr().err


def test_bad_output_paths_are_refused_before_grading(tmp_path, capsys):
    # item 13: these failed with a traceback only after the whole batch had been graded
    code, err = _run_main([MY_WORK, "--json", str(tmp_path / "nodir" / "x.json")], capsys)
    assert code == 2 and "does not exist; create it first" in err
    (tmp_path / "a-file").write_text("")
    code, err = _run_main([MY_WORK, "--per-student", str(tmp_path / "a-file")], capsys)
    assert code == 2 and "is a file; name a folder" in err
    assert "Traceback" not in err


def test_bad_limits_and_empty_batches_are_refused(tmp_path, capsys):
    # item 13: --timeout -5 marked everything "timed out", --memory-mb -1 removed the limit,
    # and `grade emptydir` exited 0
    code, err = _run_main([MY_WORK, "--timeout", "-5"], capsys)
    assert code == 2 and "--timeout must be a positive number, not -5" in err
    code, err = _run_main([MY_WORK, "--memory-mb", "-1"], capsys)
    assert code == 2 and "--memory-mb must be a positive number, not -1" in err
    (tmp_path / "empty").mkdir()
    code, err = _run_main([str(tmp_path / "empty")], capsys)
    assert code == 2 and "nothing to grade" in err


def test_reports_are_written_as_each_notebook_finishes(tmp_path, monkeypatch, capsys):
    # item 6: a batch that never finished wrote no report, even for notebooks already graded
    from course_helpers.grading import batch, command
    from course_helpers.grading.grade import NotebookGrade

    seen = []

    def fake_grade(path, **_):
        import time

        report = tmp_path / "r.json"
        waited = 0.0
        while seen and not report.exists() and waited < 5:  # the first one's report
            time.sleep(0.05)
            waited += 0.05
        seen.append(json.loads(report.read_text())["notebooks"] if report.exists() else None)
        return NotebookGrade(path, "completed")

    monkeypatch.setattr(batch, "grade_notebook", fake_grade)
    first, second = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    for path in (first, second):
        nbformat.write(nbformat.v4.new_notebook(), path)
    command.main([str(first), str(second), "--jobs", "1", "--json", str(tmp_path / "r.json")])
    assert seen[0] is None
    assert [Path(nb["path"]).name for nb in seen[1]] == ["a.ipynb"]


# --------------------------------------------------------------------------- reports


def test_unknown_exercise_ids_cannot_forge_rows_colour_terminals_or_add_columns():
    # item 10: a check("zz\nsubs/victim... passed 1/1", 1) printed a fake row; ANSI codes
    # reached the terminal; =HYPERLINK(...) became a column of everyone's CSV
    from course_helpers.grading.grade import NotebookGrade, _grade_exercise
    from course_helpers.grading.reports import score_table, to_csv

    forged = [
        "zz\nsubs/victim.ipynb  01.arange_grid  passed  1/1",
        "\x1b[2J\x1b[32mall passed",
        '=HYPERLINK("http://127.0.0.1/x","click")',
    ]
    grades = [_grade_exercise(None, i, {}, False) for i in forged]
    nb = NotebookGrade("=cmd|' /C calc'!A0.ipynb", "completed", grades)
    table = score_table([nb])
    assert not any(line.startswith("subs/victim") for line in table.splitlines())
    assert "\x1b" not in table
    book = to_csv([nb])
    header = book.splitlines()[0].split(",")
    assert header == ["notebook", "score", "max_score", "run", "needs_review"]
    assert not any(
        cell.startswith(("=", '"=')) for line in book.splitlines() for cell in line.split(",")
    )


def test_a_cell_ignoring_the_interrupt_costs_only_that_cell(tmp_path):
    # item 7: a cell that ignores SIGINT held its worker for timeout x cells x 3 + 120 s and
    # lost every answer; its kernel is now killed one timeout after the interrupt
    import time

    started = time.perf_counter()
    # 12 s per cell: the cells before it import torch, which a loaded machine can make slow
    grade = grade_notebook(str(FIXTURES / "limits" / "ignores_sigint.ipynb"), timeout=12)
    took = time.perf_counter() - started
    assert grade.run.startswith("timed out (code cell 3 ignored the interrupt"), grade.run
    assert {e.exercise_id: e.status for e in grade.exercises} == {
        "00.how_to_run": "passed",
        "00.first_tensor": "passed",
    }
    assert took < 100, took


def test_a_flood_on_the_kernels_stdout_neither_swells_the_grader_nor_hides_the_result():
    # item 8: 600 MiB on fd 1 took the grader from 0.35 to 2.77 GB (communicate() kept it
    # all) and the run read "kernel died (status 0)"
    import resource

    from course_helpers.records import invalid_reason

    # what every grading run loads (torch, to read the records back) is loaded before the peak
    # is read, whichever test ran before this one
    assert invalid_reason({"_r": "list", "items": [1.0]}) is None
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    grade = grade_notebook(str(FIXTURES / "limits" / "floods_stdout.ipynb"), timeout=60)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grade.run == "completed", grade.run
    assert grade.score == 1
    assert grown < 100 * 1024, f"the grader grew by {grown // 1024} MiB"


def test_a_log_slow_to_judge_costs_only_its_notebook(tmp_path):
    # item 6: judging had no time limit. limits/forges_attempts.ipynb forges 40 attempts
    # that take about a second each to validate (37 s measured): a log of the allowed
    # 256 MiB would hold the batch for most of an hour. Its judging is now stopped at
    # --judge-timeout (3 s here, to keep the test short); the batch and its reports go on.
    import subprocess
    import sys
    import time

    subs = tmp_path / "subs"
    subs.mkdir()
    for path in (FIXTURES / "limits" / "forges_attempts.ipynb", FIXTURES / "correct.ipynb"):
        (subs / path.name).write_bytes(path.read_bytes())
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "course_helpers", "grade", str(subs), "--jobs", "2"]
        + ["--judge-timeout", "3", "--json", "r.json", "--csv", "r.csv", "--timeout", "60"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    took = time.perf_counter() - started
    assert done.returncode == 1, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    by_name = {Path(nb["path"]).stem: nb for nb in report["notebooks"]}
    slow, honest = by_name["forges_attempts"], by_name["correct"]
    assert slow["run"].startswith("judging timed out (over 3 s"), slow["run"]
    assert all(e["points"] == 0 and "judging timed out" in e["message"] for e in slow["exercises"])
    assert any("judging timed out" in reason for reason in slow["review"])
    assert (honest["run"], [e["points"] for e in honest["exercises"]]) == ("completed", [1, 1])
    assert "judging timed out" in (tmp_path / "r.csv").read_text()
    assert "judging timed out" in done.stderr and "Traceback" not in done.stderr
    assert took < 300, took


def test_a_key_file_that_graded_kernels_can_read_is_refused(tmp_path, capsys):
    # r4 attack: --key-file /usr/local/grading.key was accepted (only Python's folders and the
    # package were checked), and a sandboxed kernel read it: /usr and a few /etc files are
    # bound into every sandbox, and the key's owner is the kernel's uid
    checked = 0
    for folder in (Path("/usr/local/share"), Path("/etc/ssl")):
        key = folder / f"course-test-{os.getpid()}.key"
        if not folder.is_dir():
            continue
        checked += 1
        try:
            code, err = _run_main([MY_WORK, "--key-file", str(key)], capsys)
            assert code == 2 and "which graded kernels can read" in err, err
            assert not key.exists()
        finally:
            key.unlink(missing_ok=True)
    assert checked
