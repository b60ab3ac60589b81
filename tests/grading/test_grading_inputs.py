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
    started = time.perf_counter()
    reason = invalid_reason(record)
    assert reason is not None and "more than" in reason and "parts" in reason
    assert time.perf_counter() - started < 2
    assert invalid_reason({"_r": "list", "items": [1.0] * 1000}) is None  # honest: fine
