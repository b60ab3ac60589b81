"""Headless grading: fresh kernels, judging outside them, timeouts and crashes contained.

The four fixture notebooks (tests/fixtures/grading/) are graded once, in one run, because
each kernel start costs a few seconds.
"""

import contextlib
import io
import json
import os
from pathlib import Path
from xml.etree import ElementTree

import nbformat
import pytest

from course_helpers.grading.command import main, notebook_paths
from course_helpers.grading.grade import (
    ExerciseGrade,
    NotebookGrade,
    exercise_ids_in,
    expected_ids,
    grade_notebook,
)
from course_helpers.grading.reports import exit_status

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grading"
NAMES = ("hanging", "correct", "tampering", "crashing")  # the 15-s wait first, the rest beside it
CELL_TIMEOUT = 15  # seconds: generous for `import torch` on a busy machine, short for the loop


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("grading")
    paths = [str(FIXTURES / f"{name}.ipynb") for name in NAMES]
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        status = main(
            [
                *paths,
                "--timeout",
                str(CELL_TIMEOUT),
                "--json",
                str(out / "r.json"),
                "--junit",
                str(out / "r.xml"),
            ]
        )
    report = json.loads((out / "r.json").read_text())
    by_name = {Path(nb["path"]).stem: nb for nb in report["notebooks"]}
    return {"status": status, "table": stdout.getvalue(), "by_name": by_name, "out": out}


def statuses(notebook):
    return {e["exercise_id"]: e["status"] for e in notebook["exercises"]}


def test_correct_notebook_scores_full_marks(graded):
    nb = graded["by_name"]["correct"]
    assert nb["run"] == "completed"
    assert (nb["score"], nb["max_score"]) == (2, 2)


def test_tampering_gains_nothing(graded):
    nb = graded["by_name"]["tampering"]
    assert nb["run"] == "completed"
    assert nb["score"] == 0
    assert statuses(nb) == {"00.first_tensor": "failed", "00.how_to_run": "not_attempted"}
    # the wrong answer is judged by the grader, whatever the patched kernel displayed
    first = next(e for e in nb["exercises"] if e["exercise_id"] == "00.first_tensor")
    assert "torch.int64" in first["message"]


def test_hanging_cell_is_interrupted_and_the_notebook_goes_on(graded):
    nb = graded["by_name"]["hanging"]
    assert nb["run"] == "timed out"
    assert statuses(nb) == {"00.first_tensor": "passed", "00.how_to_run": "passed"}


def test_a_cell_that_kills_its_kernel_is_skipped_and_the_other_answers_count(graded):
    # answers leave the kernel only after its last cell: the notebook runs again in a new
    # kernel without the cell that killed the first one (code cell 4, `os._exit(1)`)
    nb = graded["by_name"]["crashing"]
    assert nb["run"] == "kernel died (code cell 4; run again without it, other answers kept)"
    assert statuses(nb) == {"00.first_tensor": "passed", "00.how_to_run": "passed"}
    assert [e["attempts"] for e in nb["exercises"]] == [1, 1]  # the replay counts once


def test_exit_status_and_score_table(graded):
    assert graded["status"] == 1
    table = graded["table"].splitlines()
    assert table[0].split() == ["notebook", "exercise", "status", "points"]
    assert any(line.endswith("correct.ipynb: 2/2 (completed)") for line in table)
    assert any(line.endswith("hanging.ipynb: 2/2 (timed out)") for line in table)


def test_junit_report(graded):
    root = ElementTree.parse(graded["out"] / "r.xml").getroot()
    suites = {Path(s.get("name")).stem: s for s in root.iter("testsuite")}
    assert suites["correct"].get("failures") == "0"
    assert suites["tampering"].get("failures") == "2"
    assert len(list(suites["hanging"].iter("testcase"))) == 2


def test_exit_status_is_zero_only_when_everything_passed():
    ok = NotebookGrade("a.ipynb", "completed", [ExerciseGrade("00.x", "passed", "", 1)])
    bad = NotebookGrade("b.ipynb", "completed", [ExerciseGrade("00.x", "failed", "", 0)])
    late = NotebookGrade("c.ipynb", "timed out", [ExerciseGrade("00.x", "passed", "", 1)])
    assert exit_status([ok]) == 0
    assert exit_status([ok, bad]) == 1
    assert exit_status([late]) == 1


def test_graded_ids_come_from_check_calls_in_code_cells():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell('check("00.not_code", 1)'),
        nbformat.v4.new_code_cell('check("00.first_tensor", a)\ncheck( "00.how_to_run" , b)'),
        nbformat.v4.new_code_cell("check('00.first_tensor', c)"),
        nbformat.v4.new_code_cell(
            '# check("00.in_a_comment", a)\ntext = "check(\'00.in_a_string\', a)"'
        ),
        nbformat.v4.new_code_cell('%time check("00.magic", a)'),
    ]
    assert exercise_ids_in(nb) == ["00.first_tensor", "00.how_to_run", "00.magic"]


def test_unreadable_notebook_scores_nothing_without_a_kernel(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    grade = grade_notebook(str(broken))
    assert grade.run.startswith("could not run")
    assert grade.max_score == 0
    assert exit_status([grade]) == 1


def test_fixtures_are_not_collected_by_nbval():
    conftest = (Path(__file__).parents[1] / "conftest.py").read_text()
    assert 'collect_ignore = ["fixtures"]' in conftest
    assert all((FIXTURES / f"{name}.ipynb").exists() for name in NAMES)
    assert os.environ.get("COURSE_GRADING_DIR") is None


def test_a_folder_expands_to_its_notebooks_in_name_order(tmp_path):
    paths = notebook_paths([str(FIXTURES), "other.ipynb"])
    top = [Path(p).name for p in paths if Path(p).parent == FIXTURES]
    assert top == sorted(p.name for p in FIXTURES.glob("*.ipynb")) and paths[-1] == "other.ipynb"
    assert {f"{n}.ipynb" for n in NAMES} <= set(top)
    # subfolders too (issue 37, item 8: nbgrader's submitted/<student>/<assignment>/), in
    # name order, without hidden folders (.ipynb_checkpoints) or links to folders
    for student in ("bob", "alice"):
        (tmp_path / "submitted" / student / "ps1").mkdir(parents=True)
        (tmp_path / "submitted" / student / "ps1" / "01_tensors.ipynb").write_text("{}")
    (tmp_path / "submitted" / "alice" / "ps1" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "submitted" / "alice" / "ps1" / ".ipynb_checkpoints" / "x.ipynb").write_text("")
    (tmp_path / "submitted" / "zed").symlink_to(FIXTURES)
    found = notebook_paths([str(tmp_path / "submitted")])
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == [
        "submitted/alice/ps1/01_tensors.ipynb",
        "submitted/bob/ps1/01_tensors.ipynb",
    ]


# --------------------------------------------------------------------------- expected exercises

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


def _solution_ids(stem):
    return exercise_ids_in(nbformat.read(SOLUTIONS / f"{stem}.ipynb", as_version=4))


def _notebook(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return nb


def test_expected_exercises_include_the_solutions_checks_of_the_same_lesson():
    lesson = _solution_ids("01_tensors")
    assert len(lesson) > 2 and all(i.startswith("01.") for i in lesson)
    # a check cell deleted: the lesson is known from the remaining check
    kept = _notebook(f'check("{lesson[1]}", answer)')
    assert expected_ids(kept, "mine.ipynb") == [lesson[1]] + [i for i in lesson if i != lesson[1]]
    # every check cell deleted: the lesson is known from the file name
    assert expected_ids(_notebook("x = 1"), "exercises/01_tensors.ipynb") == lesson
    # a lesson without a solution notebook, and no solutions folder at all
    assert expected_ids(_notebook('check("00.first_tensor", a)'), "x.ipynb") == ["00.first_tensor"]
    assert expected_ids(kept, "01_tensors.ipynb", Path("no-such-folder")) == [lesson[1]]


def test_a_deleted_check_cell_scores_zero_and_counts_in_the_max(tmp_path):
    lesson = _solution_ids("01_tensors")
    path = tmp_path / "attempt.ipynb"
    nbformat.write(
        _notebook(
            "import torch\nfrom course_helpers import check",
            'check("01.arange_grid", torch.arange(12).reshape(3, 4))',
        ),
        path,
    )
    grade = grade_notebook(str(path), timeout=CELL_TIMEOUT)
    assert grade.run == "completed"
    assert (grade.score, grade.max_score) == (1, len(lesson))
    by_id = {e.exercise_id: e for e in grade.exercises}
    assert set(by_id) == set(lesson)
    assert by_id["01.arange_grid"].status == "passed"
    assert all(by_id[i].status == "not_attempted" for i in lesson if i != "01.arange_grid")
    assert exit_status([grade]) == 1


# --------------------------------------------------------------------------- records, flags, CSV


def test_invalid_records_are_named():
    import torch

    from course_helpers.records import describe, invalid_reason

    good = describe(torch.tensor([1.0, 2.0, 3.0], requires_grad=True) * 2)
    assert invalid_reason(good) is None
    assert invalid_reason(describe([torch.ones(2), 3, "a", None])) is None
    empty = dict(good, data=torch.zeros(0))
    assert "payload has shape (0,)" in invalid_reason(empty)
    assert "dtype" in invalid_reason(dict(good, data=torch.tensor([1, 2, 3])))
    assert "unexpected or missing" in invalid_reason({**good, "extra": 1})
    assert "never produces" in invalid_reason({"_r": "list", "items": [object()]})


def test_suspicious_code_is_flagged_per_cell():
    from course_helpers.grading.tampering import suspicious_code

    nb = _notebook(
        "x = 1\ncheck('00.first_tensor', x)",
        "import torch\ntorch.allclose = lambda *a, **k: True",
        "from course_helpers.lessons import get\ny = get('00.first_tensor').reference",
        "import os\nos.environ['COURSE_GRADING_DIR']",
        "%time z = 2",
    )
    reasons = suspicious_code(nb)
    assert not any(r.startswith(("cell 1:", "cell 5:")) for r in reasons)
    assert any(r.startswith("cell 2:") and "torch.allclose" in r for r in reasons)
    assert any(r.startswith("cell 3:") and "reference" in r for r in reasons)
    assert any(r.startswith("cell 4:") and "COURSE_GRADING_DIR" in r for r in reasons)


def test_a_cell_too_deep_to_parse_is_flagged_and_the_scan_goes_on():
    # a cell nested beyond the AST constructor's limit (RecursionError) or too large
    # (MemoryError) ended the review scan, and with it the notebook's grading
    import threading

    from course_helpers.grading.tampering import UNREADABLE, suspicious_code

    nb = _notebook(
        "x = 1" + "+1" * 100_000, "y = -" + "-" * 100_000 + "1", "import sys\nsys.modules"
    )
    reasons = suspicious_code(nb)
    assert f"cell 1: {UNREADABLE}" in reasons and f"cell 2: {UNREADABLE}" in reasons
    assert any(r.startswith("cell 3:") and "sys.modules" in r for r in reasons)
    # grading threads scan at once (--jobs N); every honest scan still reads its cells
    honest = _notebook("import sys\nsys.modules\n" + "\n".join(f"v{i} = [{i}]" for i in range(500)))
    seen = []

    def scan():
        for _ in range(20):
            seen.append(suspicious_code(nb if len(seen) % 2 else honest))

    threads = [threading.Thread(target=scan) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 60 and all(any("sys.modules" in r for r in found) for found in seen)


def test_the_course_s_own_solutions_raise_no_flag():
    # an instructor grading 300 copies of lesson 13 must not see 300 false alarms
    import nbformat

    from course_helpers.grading.grade import SOLUTIONS
    from course_helpers.grading.tampering import suspicious_code

    flags = {
        path.name: suspicious_code(nbformat.read(path, as_version=4))
        for path in sorted(SOLUTIONS.glob("*.ipynb"))
    }
    assert len(flags) >= 13
    assert {name: found for name, found in flags.items() if found} == {}


def test_honest_names_are_not_flagged_but_the_attacks_still_are():
    from course_helpers.grading.tampering import suspicious_code

    nb = _notebook(
        "def match_like(values, reference):\n    return values.to(reference.dtype)",
        "checkpoint = {'step': 3}",
        "from course_helpers.lessons.lesson13.exercises import run_on_two_ranks",
        "check = lambda *a: True",
        "from course_helpers.lessons.lesson13.exercises import EXERCISES",
    )
    reasons = suspicious_code(nb)
    assert not any(r.startswith(("cell 1:", "cell 2:", "cell 3:")) for r in reasons), reasons
    assert any(r.startswith("cell 4:") for r in reasons)
    assert any(r.startswith("cell 5:") and "internals" in r for r in reasons)


def test_csv_gradebook_has_a_column_per_exercise():
    from course_helpers.grading.reports import to_csv

    a = NotebookGrade("a.ipynb", "completed", [ExerciseGrade("00.x", "passed", "", 1)])
    b = NotebookGrade("b.ipynb", "completed", [ExerciseGrade("00.y", "failed", "", 0)], ["why"])
    lines = to_csv([a, b]).splitlines()
    assert lines[0] == "notebook,00.x,00.y,score,max_score,run,needs_review"
    assert lines[1] == "a.ipynb,1,,1,1,completed,"
    assert lines[2] == "b.ipynb,,0,0,1,completed,why"


def test_a_notebook_without_exercises_is_an_error(tmp_path):
    path = tmp_path / "my_work.ipynb"
    nbformat.write(_notebook("x = 1"), path)
    grade = grade_notebook(str(path))
    assert grade.run.startswith("error: no recognised exercises")
    assert exit_status([grade]) == 1
