"""Issue 37: judging takes nothing from a folder a kernel could write and never unpickles
what a kernel could have written (item 1), has a memory limit and refuses records whose copy
would be huge (item 4), imports nothing after submissions ran (item 1), and ends at once
(item 11). Reports stay well-formed whatever a notebook names or raises (item 7), and a
grader-wide failure is one error with its own exit status (item 10)."""

import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
import torch

from course_helpers.grading import judging
from course_helpers.grading.grade import ExerciseGrade, NotebookGrade, _judge_one
from course_helpers.lessons import get

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grading"


def _length(answers, *args):
    return [len(answers), *args]


def _allocate(answers, mib):
    return len(b"x" * (mib * 2**20))


def _not_json(answers):
    return {1, 2}  # a set: JSON cannot carry it, and nothing else is read back


def _imports(answers, name):
    import importlib

    importlib.import_module(name)
    return name


def test_judging_results_come_back_through_a_pipe_never_a_folder(tmp_path, monkeypatch):
    # the result was read with pickle.loads from a temporary folder that a kernel of the
    # same user could also write: a detached process swapped it, and every notebook of the
    # batch scored 10/10. Now nothing is written anywhere, and only JSON comes back.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with judging.JudgeServer(_length) as server:
        assert server.run(b"hello", ("x",), 30) == [5, "x"]
        assert list(tmp_path.iterdir()) == []
    with judging.JudgeServer(_not_json) as server, pytest.raises(judging.JudgingFailed):
        server.run(b"", (), 30)  # a result that is not plain JSON data is no result


def test_a_judging_process_has_a_memory_limit():
    # item 4: judging had a time limit but no memory limit (a record took 1.7 GB)
    with judging.JudgeServer(_allocate, memory_mb=64) as server:
        assert server.run(b"", (8,), 30) == 8 * 2**20
        with pytest.raises(judging.JudgingFailed, match="MemoryError"):
            server.run(b"", (512,), 30)


def test_judging_processes_import_nothing_new(monkeypatch):
    # item 1: judging imported modules on first use, after submissions had run
    assert "antigravity" not in sys.modules and "json" in sys.modules
    with judging.JudgeServer(_imports) as server:
        assert server.run(b"", ("json",), 30) == "json"
        with pytest.raises(judging.JudgingFailed, match="LateImport: antigravity"):
            server.run(b"", ("antigravity",), 30)


def test_the_judge_server_ends_as_soon_as_it_is_closed():
    # item 11: the server kept its own copy of the grader's end of the pipe, never saw it
    # close, and every run waited 10 s for it before killing it
    server = judging.JudgeServer(_length)
    server.close()
    assert server.exitcode == 0  # it ended by itself, not killed (-9) after the wait


def test_a_stride_zero_record_is_rejected_before_anything_copies_it():
    # item 4: a 1.8 KB record passed validation, then answer_fingerprint copied it into GBs
    exercise = get("00.first_tensor")
    view = torch.zeros(1).expand(100_000_000)
    record = {
        "_r": "tensor",
        "shape": (100_000_000,),
        "dtype": "float32",
        "device": "cpu",
        "requires_grad": False,
        "is_leaf": True,
        "grad_fn": None,
        "version": 0,
        "grad": None,
        "data": view,
    }
    buffer = io.BytesIO()
    torch.save(record, buffer)
    assert len(buffer.getvalue()) < 4096  # what the kernel sends is tiny
    submission = {"format": 1, "exercise_id": exercise.id, "answer": record}
    status, message = _judge_one(exercise, submission)
    assert status == "rejected" and "view over 4 bytes" in message
    transposed = dict(record, shape=(2, 3), data=torch.zeros(3, 2).t())  # not describe()'s
    assert _judge_one(exercise, dict(submission, answer=transposed))[0] == "rejected"


def test_a_stride_zero_view_hidden_as_a_dict_key_is_rejected_too():
    # r4 attack: the payload check walked a record's values only; a stride-0 view used as a
    # dict key (in the answer record, or in the method/code/notebook parts) passed, and
    # judging copied it: 1e8 elements took the judging process from 284 MB to 1.4 GB, 1e9 to
    # 11.7 GB (bounded in the grader only by --judge-memory-mb)
    exercise = get("00.first_tensor")
    view = torch.zeros(1).expand(100_000_000)
    answer = {"_r": "list", "items": [], view: 1}
    submission = {"format": 1, "exercise_id": exercise.id, "answer": answer}
    status, message = _judge_one(exercise, submission)
    assert status == "rejected" and "view over 4 bytes" in message, message
    elsewhere = {"format": 1, "exercise_id": exercise.id, "answer": 1, "method": {view: 1}}
    status, message = _judge_one(exercise, elsewhere)
    assert status == "rejected" and "view over 4 bytes" in message, message


def test_junit_stays_well_formed_whatever_a_notebook_names_or_raises():
    # item 7: one control character in an exception text or a file name made the whole
    # class's grades.xml unparsable
    from course_helpers.grading.reports import to_csv, to_junit

    nasty = "a\x01b\x1b[31m\ud800c\x0bd\ufffe"
    grade = NotebookGrade(
        f"subs/{nasty}.ipynb",
        f"could not run: {nasty}",
        [ExerciseGrade("00.how_to_run", "error", f"raised {nasty}", 0)],
        [f"review {nasty}"],
    )
    root = ElementTree.fromstring(to_junit([grade]).encode("utf-8"))
    case = root.find(".//testcase")
    assert "\\x01" in case.get("classname") and "\\x1b" in case.find("error").text
    assert "\\ud800" in to_csv([grade])


def test_csv_headers_are_never_formulas():
    # item 7: an exercise id known to the merge but escaped nowhere became a header cell
    from course_helpers.grading.reports import to_csv

    grade = NotebookGrade("a.ipynb", "completed", [ExerciseGrade("=SUM(1;1)", "passed", "", 1)])
    header = to_csv([grade]).splitlines()[0]
    assert ",'=SUM(1;1)," in header


def test_a_grader_wide_failure_is_one_error_with_its_own_exit_status(tmp_path):
    # item 10: when every worker died the same way (here: nbclient cannot be imported where
    # the worker runs), each notebook read "kernel died (its worker ended with status 1)"
    # with no reason, and the run exited 1, as if the class had failed its exercises.
    # (Without the sandbox, as the issue found it; the SLURM tests make it sandboxed.)
    broken = tmp_path / "broken"
    (broken / "nbclient").mkdir(parents=True)
    (broken / "nbclient" / "__init__.py").write_text("raise ImportError('nbclient is broken here')")
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("correct", "tampering"):
        (subs / f"{name}.ipynb").write_bytes((FIXTURES / f"{name}.ipynb").read_bytes())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(broken), *sys.path[1:]]))
    env.pop("COURSE_GRADING_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "course_helpers", "grade", str(subs), "--jobs", "2"]
        + ["--json", str(tmp_path / "r.json"), "--timeout", "30", "--no-sandbox"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    failures = [line for line in done.stderr.splitlines() if line.startswith("GRADER FAILURE")]
    assert len(failures) == 1 and "nbclient is broken here" in failures[0], done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    for nb in report["notebooks"]:
        assert "nbclient is broken here" in nb["grader_error"]
        assert all("not a verdict" in e["message"] for e in nb["exercises"])


def test_exit_status_three_means_the_grader_failed():
    from course_helpers.grading.reports import GRADER_FAILED, exit_status, grader_failure

    fine = NotebookGrade("a.ipynb", "completed", [ExerciseGrade("00.x", "passed", "", 1)])
    lost = NotebookGrade("b.ipynb", "kernel died", [ExerciseGrade("00.x", "error", "", 0)])
    lost.grader_error = "kernel died (its worker ended with status 1: ImportError: x)"
    assert exit_status([fine]) == 0
    assert exit_status([fine, lost]) == GRADER_FAILED == 3
    assert grader_failure([fine, lost]) == ""  # not every notebook: no single reason
    assert grader_failure([lost, lost]) == lost.grader_error
