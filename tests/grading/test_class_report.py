"""The class report from hand-made grades (no kernels): each figure as docs/grading.md
defines it, the evidence states as the learner was told them, nothing that names a learner,
one clear line for bad input, and the summary in the platforms' results."""

import contextlib
import io
import json
import re
from pathlib import Path

import jsonschema
import pytest
import torch

from course_helpers.checking.judges import judge
from course_helpers.checking.mistakes import EVIDENCE_STATES, evidence_state
from course_helpers.checking.submissions import collect
from course_helpers.errors import CourseError
from course_helpers.grading.classreport import write_class_report
from course_helpers.grading.classreport.model import build
from course_helpers.grading.command import main
from course_helpers.grading.grade import ExerciseGrade, NotebookGrade
from course_helpers.grading.platforms import to_gradescope, to_prairielearn
from course_helpers.grading.reports import to_json
from course_helpers.grading.shards import Shard, read_report
from course_helpers.grading.signing import load_key, run_key
from course_helpers.lessons import catalogue, get

SCHEMAS = Path(__file__).parent / "schemas"
SAID = "Your grid runs from 1 to 12 (as told)."


def _try(status, label="", evidence="code", said=SAID):
    item = {"status": status}
    if label:
        item.update(misconception=label, evidence=evidence, said=said)
    return item


def _grade(exercise_id, tries, hints=0, solution=False):
    last = tries[-1]["status"] if tries else "not_attempted"
    first = tries[0]["status"] if tries else ""
    return ExerciseGrade(
        exercise_id,
        last,
        "a message",
        int(last == "passed"),
        len(tries),
        first,
        hints=hints,
        solution_shown=solution,
        tries=tries,
    )


A, B = "01.arange_grid", "01.linspace_points"
GRADES = [
    # wrong (arange from 1, seen in the code), wrong again (the same), then right; 2 hints
    NotebookGrade(
        "subs/ada/01_tensors.ipynb",
        "completed",
        [
            _grade(
                A,
                [
                    _try("failed", "arange counted from 1"),
                    _try("failed", "rows and columns swapped", "absent", "4 rows (as told)."),
                    _try("passed"),
                ],
                hints=2,
            ),
            _grade(B, [_try("not_attempted")]),  # the stub: no answer
        ],
    ),
    # right at once; the solution shown
    NotebookGrade(
        "subs/bo/01_tensors.ipynb",
        "completed",
        [_grade(A, [_try("passed")], 3, solution=True), _grade(B, [_try("passed")])],
    ),
    # the same mistake twice (two different wrong answers of one kind), never right
    NotebookGrade(
        "subs/chidi/01_tensors.ipynb",
        "timed out",
        [
            _grade(
                A,
                [
                    _try("failed", "arange counted from 1", "values", "told without the code"),
                    _try("rejected"),
                    _try("error"),
                    _try("failed", "arange counted from 1"),
                    _try("failed"),
                    _try("failed"),
                ],
            ),
            _grade(B, []),
        ],
    ),
]


def test_each_figure_follows_its_definition():
    report = build(GRADES)
    assert report.notebooks == 3 and dict(report.runs) == {"completed": 2, "timed out": 1}
    a = next(s for s in report.exercises if s.name == A).as_dict(report.max_tier)
    assert (a["graded"], a["attempted"], a["passed"], a["first_attempt_passed"]) == (3, 3, 2, 1)
    assert a["pass_rate"] == round(2 / 3, 4) and a["first_attempt_pass_rate"] == round(1 / 3, 4)
    # answers: 3 + 1 + 5 (a rejected record is no answer); wrong: 2 + 0 + 5
    assert (a["answers"], a["wrong_answers"]) == (9, 7)
    assert a["attempts"] == {"1": 1, "2": 0, "3": 1, "4": 0, "5+": 1}
    assert a["hint_tiers"] == {"0": 1, "1": 0, "2": 1, "3": 1}
    assert a["solutions_shown"] == 1
    first, second = a["misconceptions"]
    assert (first["label"], first["answers"], first["notebooks"]) == ("arange counted from 1", 3, 2)
    assert first["share_of_wrong_answers"] == round(3 / 7, 4)
    assert first["overcome"] == 1  # ada passed after it; chidi never did
    assert first["notebooks_with_evidence"] == 2  # each had an answer whose code showed it
    assert (first["with_evidence"], first["values_only"]) == (2, 1)
    assert first["evidence"] == {"code": 2, "values": 1}
    assert first["messages_seen"] == [
        {"text": SAID, "answers": 2},
        {"text": "told without the code", "answers": 1},
    ]
    assert (second["label"], second["answers"], second["evidence"]) == (
        "rows and columns swapped",
        1,
        {"absent": 1},
    )
    b = next(s for s in report.exercises if s.name == B)
    assert (b.graded, b.attempted, b.passed, b.first_attempt_rate) == (3, 1, 1, 1.0)
    (lesson,) = report.lessons
    assert (lesson.graded, lesson.passed, lesson.wrong_answers) == (6, 3, 7)
    assert [(m.label, m.answers) for m in report.top] == [
        ("arange counted from 1", 3),
        ("rows and columns swapped", 1),
    ]


def test_one_notebook_that_repeats_a_mistake_does_not_top_the_class():
    # r4 attack: one notebook gave 150 wrong answers of one kind (and then passed), and its
    # mistake became the class's first, above one that two learners made
    spammer = NotebookGrade(
        "subs/mallory/01_tensors.ipynb",
        "completed",
        [_grade(A, [_try("failed", "integer division")] * 150 + [_try("passed")])],
    )
    report = build([*GRADES, spammer])
    assert [(m.label, m.notebooks, m.answers) for m in report.top] == [
        ("arange counted from 1", 2, 3),  # two learners
        ("integer division", 1, 150),  # one learner: ties with one learner go by answers
        ("rows and columns swapped", 1, 1),
    ]


def test_the_json_and_page_are_the_same_for_the_same_grades(tmp_path):
    write_class_report(GRADES, str(tmp_path / "one"))
    write_class_report(GRADES, str(tmp_path / "two"))
    for name in ("index.html", "class-report.json", "exercises.csv", "misconceptions.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    page = (tmp_path / "one" / "index.html").read_text()
    assert "<script" not in page and "<link" not in page and page.count("<svg") == 5
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?(https?:|//)""", page)


HOSTILE = [
    NotebookGrade(
        "/home/alice-smith/submitted/alice-smith/notes-by-alice.ipynb",
        "could not run: FileNotFoundError: /home/alice-smith/x (alice-smith)",
        [
            _grade(A, [_try("failed", "arange counted from 1"), _try("passed")]),
            ExerciseGrade(
                "my-own-id by alice-smith", "error", "There is no exercise", 0, known=False
            ),
            ExerciseGrade(A.replace("01", "99"), "failed", "alice-smith's answer", 0),
        ],
        review=["cell 3 names /home/alice-smith/course"],
    )
]


def test_nothing_in_the_default_report_names_a_learner(tmp_path):
    # file names, stems, folders, paths, run and review texts, messages, unknown ids
    write_class_report(HOSTILE, str(tmp_path / "report"), ["alice-smith/notes-by-alice.ipynb"])
    for path in (tmp_path / "report").iterdir():
        text = path.read_bytes().decode("latin-1")
        for marker in ("alice", "notes-by", "/home", "submitted", "my-own-id", "FileNotFound"):
            assert marker not in text.lower(), f"{marker} in {path.name}"
    data = json.loads((tmp_path / "report" / "class-report.json").read_text())
    assert data["unknown_exercise_ids"] == 2 and data["runs"] == {"could not run": 1}
    # asked for, the names are there (the check above can fail)
    write_class_report(
        HOSTILE, str(tmp_path / "named"), ["alice-smith/notes-by-alice.ipynb"], learners=True
    )
    assert "alice-smith/notes-by-alice.ipynb" in (tmp_path / "named" / "learners.csv").read_text()
    # and a folder reused without the flag keeps no names
    write_class_report(HOSTILE, str(tmp_path / "named"), ["alice-smith/notes-by-alice.ipynb"])
    assert not (tmp_path / "named" / "learners.csv").exists()
    assert "alice" not in (tmp_path / "named" / "index.html").read_text()


def _stderr_of(argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as stop:
            status = stop.code
    return status, err.getvalue()


def _key(tmp_path):
    return load_key(tmp_path / "grading.key")


def _shard_report(tmp_path, grades, name="r.json", shard=None) -> str:
    keys = [f"subs/{Path(nb.path).name}" for nb in grades]
    path = tmp_path / name
    path.write_text(to_json(grades, keys, shard, _key(tmp_path)), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("case", ["file", "under a file", "learners alone"])
def test_a_bad_class_report_folder_is_one_line_before_grading(tmp_path, case):
    target = tmp_path / "taken"
    target.write_text("x")
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text("{}")
    argv = {
        "file": ["--class-report", str(target)],
        "under a file": ["--class-report", str(target / "report")],
        "learners alone": ["--class-report-learners"],
    }[case]
    merging = [
        "merge",
        _shard_report(tmp_path, GRADES[:1]),
        "--key-file",
        str(tmp_path / "grading.key"),
    ]
    for command in ([str(notebook)], merging):
        status, err = _stderr_of([*command, *argv])
        assert status == 2, err
        last = err.strip().splitlines()[-1]
        assert "Traceback" not in err and "--class-report" in last
        assert ("is a file" in last) if case == "file" else True


def test_an_empty_batch_a_folder_and_another_split_are_one_line(tmp_path):
    empty = _shard_report(tmp_path, [], "empty.json")
    key = ["--key-file", str(tmp_path / "grading.key")]
    status, err = _stderr_of(["merge", empty, *key, "--class-report", str(tmp_path / "out")])
    assert status == 2 and "no notebook was graded" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(CourseError, match="no notebook was graded"):
        write_class_report([], str(tmp_path / "out"))
    status, err = _stderr_of(["merge", str(tmp_path), *key, "--class-report", str(tmp_path / "o")])
    assert status == 2 and str(tmp_path) in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    one = _shard_report(tmp_path, GRADES[:1], "a.json", Shard(1, 2))
    other = _shard_report(tmp_path, GRADES[1:2], "b.json", Shard(2, 3))
    status, err = _stderr_of(["merge", one, other, *key, "--class-report", str(tmp_path / "o")])
    assert status == 2 and "different splits" in err and len(err.strip().splitlines()) == 1
    # a shard another grader (another key) wrote
    foreign = tmp_path / "foreign.json"
    foreign.write_text(to_json(GRADES[:1], ["subs/x.ipynb"], None, run_key()), encoding="utf-8")
    status, err = _stderr_of(["merge", str(foreign), *key, "--class-report", str(tmp_path / "o")])
    assert status == 2 and "another key" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_merge_reads_back_the_attempts_and_refuses_a_forged_evidence_state(tmp_path):
    path = _shard_report(tmp_path, GRADES)
    back = read_report(path, _key(tmp_path)).grades
    assert [e.tries for nb in back for e in nb.exercises] == [
        e.tries for nb in GRADES for e in nb.exercises
    ]
    data = json.loads(Path(path).read_text())
    data.pop("signature")
    data["notebooks"][0]["exercises"][0]["tries"][0]["evidence"] = "proven by the learner"
    Path(path).write_text(json.dumps(_key(tmp_path).sign(data)))  # signed, yet malformed
    with pytest.raises(CourseError, match="malformed"):
        read_report(path, _key(tmp_path))


def test_the_judge_names_the_misconception_it_matched():
    exercise = get(A)
    verdict = judge(exercise, collect(exercise, torch.arange(1, 13).reshape(3, 4)))
    assert verdict.status == "failed" and verdict.misconception == "arange counted from 1"
    right = judge(exercise, collect(exercise, torch.arange(12).reshape(3, 4)))
    assert right.misconception == ""
    other = judge(exercise, collect(exercise, torch.zeros(3, 4, dtype=torch.int64)))
    assert other.status == "failed" and other.misconception == ""


_EXAMPLE = {
    "call": lambda name: f"y = torch.{name.rstrip('()')}(x)" if name[0].islower() else f"{name}(x)",
    "attr": lambda name: f"y = x.{name}",
    "with": lambda name: f"with torch.{name}():\n    y = x",
    "kw": lambda name: f"y = f(x, {name}=1)",
    "op": lambda name: {
        "matmul": "y = a @ b",
        "floordiv": "y = a // b",
        "is": "y = a is b",
        "isub": "a -= b",
        "iadd": "a += b",
        "imul": "a *= b",
        "idiv": "a /= b",
    }[name],
}


def _code_with(patterns) -> dict:
    lines = []
    for pattern in patterns:
        kind, _, names = pattern.partition(":")
        name = names.split("|")[0]
        if kind == "call" and name.endswith("()"):
            lines.append(f"y = x.{name}")
        elif kind == "order":  # order:a<b: b called on a line after a call of a
            first, _, then = name.partition("<")
            lines += [f"y = x.{first}()", f"z = x.{then}()"]
        else:
            lines.append(_EXAMPLE[kind](name))
    return {"where": "answer cell", "text": "\n".join(lines)}


def test_the_evidence_state_is_what_the_learner_was_told_for_every_entry():
    from course_helpers.checking.misconceptions import explain

    seen = set()
    for entry in catalogue():
        if not entry.evidence:
            assert evidence_state(entry, None) == "values"
            assert explain(entry, None) == entry.message
            seen.add("values")
            continue
        cases = [
            (_code_with(entry.evidence), "code", "\nYour code "),
            (None, "unread", "\nIf your code "),
            ({"where": "answer cell", "text": "y = x"}, "absent", None),
        ]
        for code, state, lead in cases:
            assert evidence_state(entry, code) == state, (entry.label, code)
            said = explain(entry, code)
            if lead is None:
                assert said == entry.message
            else:
                assert said.startswith(entry.message + lead), entry.label
            seen.add(state)
    assert seen == set(EVIDENCE_STATES)


def test_the_class_summary_is_in_the_platforms_results():
    grades = GRADES[:2]
    data = to_gradescope(grades, 3.0, [A, B])
    jsonschema.validate(data, json.loads((SCHEMAS / "gradescope-results.schema.json").read_text()))
    summary = data["extra_data"]["class_summary"]
    # the submission's graded result: each exercise at its best notebook (ada's A, bo's B)
    assert summary["notebooks"] == 1
    assert summary["exercises"][A]["passed"] == 1
    assert summary["exercises"][A]["misconceptions"]["arange counted from 1"] == {
        "answers": 1,
        "with_evidence": 1,
    }
    assert data["tests"][0]["extra_data"]["misconceptions"] == [
        {"misconception": "arange counted from 1", "evidence": "code"},
        {"misconception": "rows and columns swapped", "evidence": "absent"},
    ]
    assert data["tests"][0]["extra_data"]["hints_reported"] == {
        "highest_tier": 2,
        "solution_shown": False,
    }
    assert "subs/" not in json.dumps(summary)
    pl = to_prairielearn(grades, [A, B])
    jsonschema.validate(pl, json.loads((SCHEMAS / "prairielearn-results.schema.json").read_text()))
    (image,) = pl["images"]
    assert image["url"].startswith("data:image/png;base64,")
    assert len(json.dumps(pl)) < 1_000_000  # PrairieLearn's limit for the whole file


def test_a_notebook_the_grader_could_not_judge_counts_in_no_figure():
    # its exercises read "error: not graded ... not a verdict": counting them would lower the
    # class's pass rates for the grader's own failure
    message = "Not graded: judging timed out; a person should look at this notebook."
    failed = NotebookGrade(
        "subs/x.ipynb",
        "could not run: worker failed",
        [ExerciseGrade(A, "error", message, 0)],
        grader_error="could not run: worker failed",
    )
    stopped = NotebookGrade(
        "subs/y.ipynb",
        "judging timed out (over 60 s for this notebook's recorded answers): no answer graded",
        [ExerciseGrade(A, "error", message, 0)],
    )
    report = build([*GRADES, failed, stopped])
    assert report.notebooks == 5
    assert report.runs["not graded (the grader failed)"] == 1
    assert report.runs["not graded (judging stopped)"] == 1
    a = next(s for s in report.exercises if s.name == A)
    assert (a.graded, a.passed) == (3, 2)  # as without them


def test_a_hint_tier_the_exercise_does_not_have_is_not_believed():
    # r4 attack: a kernel may say anything on its answer channel, and "hint 100 was shown"
    # used to be kept as said: the class report then had 101 hint columns in every table
    # and CSV, and its hint picture collapsed. A tier counts only up to the exercise's own.
    from course_helpers.checking.submissions import encode_frame
    from course_helpers.grading.grade import judge_answers

    count = len(get(A).hints)
    frames = b"".join(
        encode_frame({"exercise_id": exercise_id, "hint": tier})
        for exercise_id, tier in ((A, 100), (B, 1))
    )
    grades = judge_answers(frames, [A, B], first_attempt=False)["grades"]
    assert [g["hints"] for g in grades] == [count, 1]
    notebook = NotebookGrade("x", "completed", [ExerciseGrade(**g) for g in grades])
    assert build([notebook]).max_tier == count


def test_a_file_name_that_is_not_utf8_is_escaped_in_the_learners_table(tmp_path):
    # r4 attack: a submission named b"m\xffallory.ipynb" (its name, read by Python, holds a
    # lone surrogate) ended 'grade ... --class-report DIR --class-report-learners' with a
    # UnicodeEncodeError traceback after every other report was written; its name is now
    # written as its escape, as in the score table and the CSV gradebook
    key = "subs/m\udcffallory\x1b[31m.ipynb"
    keys = [key] + [nb.path for nb in GRADES[1:]]
    write_class_report(GRADES, str(tmp_path / "named"), keys, learners=True)
    shown = "subs/m\\udcffallory\\x1b[31m.ipynb"
    data = json.loads((tmp_path / "named" / "class-report.json").read_text("utf-8"))
    assert data["learners"][0]["key"] == shown
    for name in ("index.html", "learners.csv"):
        assert shown in (tmp_path / "named" / name).read_text("utf-8"), name
