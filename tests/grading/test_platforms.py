"""Results in Gradescope's and PrairieLearn's formats, and Gradescope's autograder bundle run
for real against a stand-in for its /autograder tree."""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest

from course_helpers.errors import CourseError
from course_helpers.grading.autograder import build
from course_helpers.grading.command import main
from course_helpers.grading.grade import ExerciseGrade, NotebookGrade
from course_helpers.grading.platforms import to_gradescope, to_prairielearn

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures" / "grading"
SHELLCHECK = Path(sys.executable).parent / "shellcheck"


def _schema(name: str) -> dict:
    return json.loads((HERE / "schemas" / f"{name}-results.schema.json").read_text())


GRADES = [
    NotebookGrade(
        "subs/01_tensors.ipynb",
        "completed",
        [
            ExerciseGrade("01.arange_grid", "passed", "Correct.", 1),
            ExerciseGrade("01.slice_rows", "failed", "Your tensor has shape (3,)...", 0),
        ],
        ["reads an exercise's reference answer (.reference)"],
    ),
    NotebookGrade("subs/02_dtype.ipynb", "timed out", [ExerciseGrade("02.x", "passed", "", 1)]),
]


def test_gradescope_results_have_the_documented_fields_and_the_right_scores():
    data = to_gradescope(GRADES, seconds=12.4)
    jsonschema.validate(data, _schema("gradescope"))
    assert data["score"] == 2
    assert [(t["name"], t["score"], t["max_score"], t["status"]) for t in data["tests"]] == [
        ("01.arange_grid", 1, 1, "passed"),
        ("01.slice_rows", 0, 1, "failed"),
        ("02.x", 1, 1, "passed"),
    ]
    assert data["execution_time"] == 12
    assert "needs review" in data["output"] and "timed out" in data["output"]


def test_prairielearn_results_have_the_documented_fields_and_a_fraction():
    data = to_prairielearn(GRADES)
    jsonschema.validate(data, _schema("prairielearn"))
    assert data["gradable"] is True
    assert data["score"] == pytest.approx(2 / 3)
    assert [(t["name"], t["points"], t["max_points"]) for t in data["tests"]][1] == (
        "01.slice_rows",
        0,
        1,
    )
    nothing = to_prairielearn([NotebookGrade("x.ipynb", "error: no recognised exercises")])
    jsonschema.validate(nothing, _schema("prairielearn"))
    assert nothing["gradable"] is False  # an invalid upload costs the learner no attempt


def test_the_schemas_refuse_what_the_platforms_would_refuse():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"score": 1, "tests": [{"status": "ok"}]}, _schema("gradescope"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"gradable": True, "score": 2}, _schema("prairielearn"))


def test_grade_writes_prairielearn_results_where_asked(tmp_path):
    # issue 37, item 6: a submission is graded on its assignment's exercises, each once:
    # another lesson's notebook, renamed notes.ipynb, earned points in this assignment
    results = tmp_path / "grade" / "results" / "results.json"  # the folder does not exist yet
    student = tmp_path / "student"
    student.mkdir()
    shutil.copy(FIXTURES / "correct.ipynb", student / "mine.ipynb")
    shutil.copy(FIXTURES / "platform" / "other_lesson.ipynb", student / "notes.ipynb")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = main(
            [
                str(student),
                "--timeout",
                "30",
                "--results-format",
                "prairielearn",
                "--assignment",
                "00_start_here",
                "--results",
                str(results),
            ]
        )
    data = json.loads(results.read_text())
    jsonschema.validate(data, _schema("prairielearn"))
    assert (data["score"], len(data["tests"])) == (1.0, 2)
    assert {t["name"] for t in data["tests"]} == {"00.first_tensor", "00.how_to_run"}
    assert "not counted" in data["output"]
    assert status == 1  # notes.ipynb's own lesson-01 exercises did not all pass


def test_copies_and_other_lessons_add_nothing_to_a_platform_score():
    # issue 37, item 6: three copies of the public solution scored 30
    from course_helpers.grading.platforms import assignment_exercises

    ids = assignment_exercises("00_start_here")
    assert ids == ["00.first_tensor", "00.how_to_run"]
    assert assignment_exercises("00") == ids
    right = [ExerciseGrade("00.first_tensor", "passed", "", 1)]
    copies = [NotebookGrade(f"copy{i}.ipynb", "completed", right) for i in range(3)]
    other = NotebookGrade("notes.ipynb", "completed", [ExerciseGrade("01.x", "passed", "", 1)])
    data = to_gradescope([*copies, other], 1.0, ids)
    assert data["score"] == 1 and [t["name"] for t in data["tests"]] == ids
    pl = to_prairielearn([*copies, other], ids)
    assert pl["score"] == 0.5 and len(pl["tests"]) == 2
    # the best result of an exercise counts, wherever it is
    wrong = NotebookGrade("a.ipynb", "completed", [ExerciseGrade("00.how_to_run", "failed", "", 0)])
    good = NotebookGrade("b.ipynb", "completed", [ExerciseGrade("00.how_to_run", "passed", "", 1)])
    assert to_gradescope([wrong, good], 0.0, ids)["score"] == 1
    with pytest.raises(CourseError, match="no lesson is called"):
        assignment_exercises("99_nothing")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return build(tmp_path_factory.mktemp("bundle") / "autograder", "00_start_here", zip_it=True)


def test_the_bundle_has_the_two_scripts_at_its_root_and_the_course(bundle):
    names = zipfile.ZipFile(bundle).namelist()
    assert {"setup.sh", "run_autograder", "course/pyproject.toml"} <= set(names)
    assert "course/solutions/01_tensors.ipynb" in names
    assert "course/course_helpers/lessons/lesson01/exercises.py" in names
    assert not [n for n in names if "__pycache__" in n]
    folder = bundle.with_suffix("")
    for script in ("setup.sh", "run_autograder"):
        assert os.access(folder / script, os.X_OK)
        done = subprocess.run([str(SHELLCHECK), str(folder / script)], capture_output=True)
        assert done.returncode == 0, done.stdout.decode()


def _run_autograder(bundle: Path, root: Path, notebooks: dict, **env_extra) -> dict:
    (root / "submission").mkdir(parents=True)
    for name, text in notebooks.items():
        (root / "submission" / name).write_text(text)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), COURSE_PYTHON=sys.executable, **env_extra)
    done = subprocess.run(
        ["bash", str(bundle.with_suffix("") / "run_autograder")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_run_autograder_grades_a_submission_into_gradescopes_results_file(bundle, tmp_path):
    # issue 37: copies of a notebook add nothing (item 6); without bubblewrap, a blank
    # notebook's leftover process rewrote results.json in the ~10 s after grading (item 3)
    root = tmp_path / "autograder"
    correct = (FIXTURES / "correct.ipynb").read_text()
    writer = (FIXTURES / "platform" / "leaves_a_writer.ipynb").read_text()
    target = json.dumps(str(root / "results" / "results.json"))
    submission = {
        "correct.ipynb": correct,
        "copy.ipynb": correct,
        "copy2.ipynb": correct,
        "00_start_here.ipynb": writer.replace("@RESULTS@", target.replace('"', '\\"')),
    }
    tools = tmp_path / "bin"  # what run_autograder needs, and no bwrap: as on a platform
    tools.mkdir()  # whose containers have none
    for name in ("bash", "mkdir", "rm"):
        (tools / name).symlink_to(shutil.which(name))
    data = _run_autograder(bundle, root, submission, PATH=str(tools))
    jsonschema.validate(data, _schema("gradescope"))
    assert data["score"] == 2
    assert [t["name"] for t in data["tests"]] == ["00.first_tensor", "00.how_to_run"]
    assert (root / "writer-started").exists()  # the leftover process did run ...
    time.sleep(3)
    assert json.loads((root / "results" / "results.json").read_text()) == data  # ... no more


def test_run_autograder_on_an_empty_submission_still_writes_a_valid_result(bundle, tmp_path):
    data = _run_autograder(bundle, tmp_path / "autograder", {})
    jsonschema.validate(data, _schema("gradescope"))
    assert data["score"] == 0 and "No notebook (.ipynb) was found" in data["output"]


def test_a_bundle_is_never_written_over_existing_files(tmp_path):
    (tmp_path / "old.txt").write_text("keep me")
    with contextlib.redirect_stderr(io.StringIO()) as err:
        from course_helpers.grading.autograder import main as autograder_main

        assert autograder_main([str(tmp_path), "--assignment", "00_start_here"]) == 2
    assert "not an empty folder" in err.getvalue()
    assert (tmp_path / "old.txt").read_text() == "keep me"


def test_a_grader_that_fails_still_leaves_a_result_that_says_so(bundle, tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    shutil.copy(FIXTURES / "correct.ipynb", root / "submission" / "correct.ipynb")
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), COURSE_PYTHON=str(broken))
    script = bundle.with_suffix("") / "run_autograder"
    done = subprocess.run(["bash", str(script)], cwd=root, env=env, capture_output=True)
    assert done.returncode == 0
    data = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(data, _schema("gradescope"))
    assert data["score"] == 0 and "exit status 3" in data["output"]


def test_an_assignment_is_what_the_exercise_notebook_checks():
    # r4 attack: --assignment 01_tensors counted lesson 01's three check-yourself questions,
    # which the exercise notebook does not hold, so the full solution scored 10/13
    import nbformat

    from course_helpers.grading.grade import exercise_ids_in
    from course_helpers.grading.platforms import assignment_exercises

    root = Path(__file__).resolve().parents[2]
    for number in ("01", "07", "13"):
        (solution,) = (root / "solutions").glob(f"{number}_*.ipynb")
        checked = exercise_ids_in(nbformat.read(solution, as_version=4))
        assert sorted(assignment_exercises(number)) == sorted(set(checked)), number
    assert "01.quiz_numel" not in assignment_exercises("01_tensors")
    # two lessons: both exercise notebooks, in course order
    both = assignment_exercises("01,02")
    assert both == sorted(both, key=lambda i: i[:2]) and {i[:2] for i in both} == {"01", "02"}
