"""Grading beyond one machine: a stable split into shards, and a merge that equals one run."""

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from course_helpers.errors import CourseError
from course_helpers.grading.command import main
from course_helpers.grading.shards import Shard, keyed_paths, parse_shard, shard_of

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grading"
# four learners in nbgrader's layout, submitted/<student>/ps1/, each handing in a notebook of
# the same name: two right, one tampered with, one whose exercise ids are spreadsheet
# formulas (issue 37, items 7 and 8); one student folder has a control character in its name
SUBMISSIONS = {
    "alice": "correct",
    "bob": "tampering",
    "carol": "odd_names",
    "dave\x1b[2J": "correct",
}
NOTEBOOK = "00_start_here.ipynb"


def _key(student: str) -> str:
    return f"submitted/{student}/ps1/{NOTEBOOK}"


def _quiet(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def test_a_shard_is_written_i_over_n_and_anything_else_is_refused_clearly():
    assert parse_shard("2/8") == Shard(2, 8)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/2/3"):
        with pytest.raises(CourseError, match="write I/N"):
            parse_shard(bad)


def test_every_submission_lands_in_exactly_one_shard_whatever_the_listing(tmp_path):
    keys = [f"subs/learner{i:04d}.ipynb" for i in range(2000)]
    for count in (1, 2, 7, 64):
        shards = [Shard(i, count) for i in range(1, count + 1)]
        for key in keys:
            assert sum(s.holds(key) for s in shards) == 1
    sizes = [sum(shard_of(k, 8) == i for k in keys) for i in range(1, 9)]
    assert min(sizes) > 200  # about 250 each: no shard is starved


def test_the_split_is_a_fixed_contract_across_versions_and_machines():
    # docs/grading.md documents the split (SHA-256 of the key modulo N): shards graded by two
    # versions of the course, or on two clusters, must still merge. These values pin it.
    assert [shard_of("subs/alice.ipynb", n) for n in (2, 3, 8)] == [2, 3, 6]
    assert [shard_of("subs/bob.ipynb", n) for n in (2, 3, 8)] == [2, 1, 2]
    assert [shard_of("learner0001.ipynb", n) for n in (2, 3, 8)] == [1, 1, 3]


def test_keys_do_not_depend_on_where_the_folder_is_mounted(tmp_path):
    for mount in ("a", "b/c"):
        folder = tmp_path / mount / "subs"
        folder.mkdir(parents=True)
        (folder / "x.ipynb").write_text("{}")
        assert [k for _, k in keyed_paths([str(folder)])] == ["subs/x.ipynb"]
    assert keyed_paths([str(folder / "x.ipynb")]) == [(str(folder / "x.ipynb"), "x.ipynb")]


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The same batch graded as one shard and as three, each merged."""
    root = tmp_path_factory.mktemp("shards")
    subs = root / "submitted"
    for name, fixture in SUBMISSIONS.items():
        (subs / name / "ps1").mkdir(parents=True)
        shutil.copy(FIXTURES / f"{fixture}.ipynb", subs / name / "ps1" / NOTEBOOK)
    key = root / "grading.key"  # made by the first run that names it
    common = [str(subs), "--timeout", "30", "--jobs", "2", "--key-file", str(key)]
    runs = {}
    for count in (1, 3):
        reports = []
        for index in range(1, count + 1):
            report = root / f"shard-{index}-of-{count}.json"
            extra = ["--per-student", str(root / "each")] if count == 1 else []
            _quiet([*common, "--shard", f"{index}/{count}", "--json", str(report), *extra])
            reports.append(report)
        merged = root / f"merged-{count}.json"
        status, table, _ = _quiet(
            ["merge", *map(str, reports), "--key-file", str(key), "--json", str(merged)]
            + ["--csv", str(root / f"{count}.csv"), "--junit", str(root / f"{count}.xml")]
        )
        runs[count] = {
            "reports": reports,
            "merged": json.loads(merged.read_text()),
            "csv": (root / f"{count}.csv").read_text(),
            "xml": (root / f"{count}.xml").read_text(),
            "status": status,
        }
    runs["key"], runs["root"] = key, root
    return runs


def _results(report: dict) -> dict:
    return {
        nb["key"]: [(e["exercise_id"], e["status"], e["points"]) for e in nb["exercises"]]
        for nb in report["notebooks"]
    }


def test_three_shards_merged_equal_one_run(sharded):
    one, three = sharded[1], sharded[3]
    assert _results(three["merged"]) == _results(one["merged"])
    assert sorted(_results(one["merged"])) == sorted(_key(n) for n in SUBMISSIONS)
    assert three["merged"]["score"] == one["merged"]["score"] == 4  # two full notebooks of 2
    assert three["csv"] == one["csv"]  # the known flag survives the merge (issue 37, item 7)
    assert three["xml"] == one["xml"]
    assert three["status"] == one["status"] == 1  # the tampered ones did not pass


def test_merged_reports_escape_what_a_notebook_wrote_and_stay_well_formed(sharded):
    # issue 37, item 7: the merge dropped the known flag, so unknown ids became unescaped
    # header cells of the merged CSV (=HYPERLINK(...), +SUM(1;1)); a control character made
    # grades.xml unparsable for the whole class
    import csv as csv_module
    from xml.etree import ElementTree

    header = next(csv_module.reader(io.StringIO(sharded[3]["csv"])))
    assert header == ["notebook", "00.first_tensor", "00.how_to_run"] + [
        "score",
        "max_score",
        "run",
        "needs_review",
    ]
    assert "unknown exercise =HYPERLINK" in sharded[3]["csv"]  # named in its row, quoted
    rows = list(csv_module.reader(io.StringIO(sharded[3]["csv"])))[1:]
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    suites = ElementTree.fromstring(sharded[3]["xml"].encode()).findall("testsuite")
    assert len(suites) == 4 and any("\\x1b" in s.get("name") for s in suites)


def test_per_student_reports_follow_the_submissions_layout(sharded):
    # issue 37, item 8: --per-student wrote <stem>.json, so one learner's report overwrote
    # another's (here every learner hands in 00_start_here.ipynb)
    each = sharded["root"] / "each"
    found = sorted(p.relative_to(each).as_posix() for p in each.rglob("*.json"))
    assert found == sorted(_key(n).removesuffix(".ipynb") + ".json" for n in SUBMISSIONS)
    alice = json.loads((each / "submitted" / "alice" / "ps1" / "00_start_here.json").read_text())
    assert [nb["key"] for nb in alice["notebooks"]] == [_key("alice")]
    assert alice["signature"]["alg"] == "hmac-sha256"


def test_a_folder_named_like_another_ones_report_changes_no_report(tmp_path):
    # r4 attack: next to bob.ipynb (report bob.json), a folder bob.json/ holding a notebook:
    # its report needed bob.json to be a folder, and the batch ended with a FileExistsError
    # traceback (exit 1, the remaining reports unwritten); written first, it would have taken
    # bob's place. A folder whose name ends in .json is written with "~dir" after it.
    from course_helpers.grading.batch import per_student_path

    subs = tmp_path / "subs"
    (subs / "bob.json").mkdir(parents=True)
    shutil.copy(FIXTURES / "correct.ipynb", subs / "bob.ipynb")
    shutil.copy(FIXTURES / "correct.ipynb", subs / "bob.json" / "mallory.ipynb")
    each = tmp_path / "each"
    status, _, err = _quiet(
        [str(subs), "--timeout", "30", "--jobs", "1", "--per-student", str(each)]
    )
    assert status in (0, 1), err
    bob = json.loads((each / "subs" / "bob.json").read_text())
    mallory = json.loads((each / "subs" / "bob.json~dir" / "mallory.json").read_text())
    assert [nb["key"] for nb in bob["notebooks"]] == ["subs/bob.ipynb"]
    assert [nb["key"] for nb in mallory["notebooks"]] == ["subs/bob.json/mallory.ipynb"]
    # one to one: folders named like that mapping stay apart too
    keys = ["a/x.ipynb", "a/x.json/y.ipynb", "a/x.json~dir/y.ipynb", "a/x.json~dir~dir/y.ipynb"]
    paths = [per_student_path(tmp_path, k) for k in keys]
    assert len(set(paths)) == len(paths)
    assert not any(p in q.parents for p in paths for q in paths)


def test_each_shard_graded_only_its_own_submissions(sharded):
    seen = []
    for index, report in enumerate(sharded[3]["reports"], start=1):
        data = json.loads(report.read_text())
        assert data["shard"] == {"index": index, "count": 3}
        for nb in data["notebooks"]:
            assert shard_of(nb["key"], 3) == index
            seen.append(nb["key"])
    assert sorted(seen) == sorted(_key(n) for n in SUBMISSIONS)


def test_a_missing_or_repeated_shard_is_an_error_that_names_it(sharded):
    first, second, third = map(str, sharded[3]["reports"])
    key = ["--key-file", str(sharded["key"])]
    status, _, err = _quiet(["merge", first, third, *key])
    assert status == 2 and "Shard 2/3 is missing" in err
    status, _, err = _quiet(["merge", first, second, third, second, *key])
    assert status == 2 and "Shard 2/3 appears more than once" in err
    status, _, err = _quiet(["merge", first, str(sharded[1]["reports"][0]), *key])
    assert status == 2 and "different splits" in err


def _merge_with(tmp_path, sharded, index: int, report: dict) -> tuple[int, str]:
    """Merge the three shards, shard ``index`` replaced by ``report``."""
    reports = list(map(str, sharded[3]["reports"]))
    reports[index - 1] = str(tmp_path / "forged.json")
    Path(reports[index - 1]).write_text(json.dumps(report))
    status, _, err = _quiet(["merge", *reports, "--key-file", str(sharded["key"])])
    return status, err


def test_a_report_that_is_not_a_shard_report_is_refused_by_name(tmp_path, sharded):
    from course_helpers.grading.signing import load_key

    bad = tmp_path / "bad.json"
    bad.write_text('{"notebooks": []}')
    status, _, err = _quiet(["merge", str(bad), "--key-file", str(sharded["key"])])
    assert status == 2 and "bad.json" in err and "not a grading report" in err
    # a submission that belongs to another shard, presented as shard 2/3 and signed with
    # the instructor's own key: still refused
    alice = next(nb for nb in sharded[1]["merged"]["notebooks"] if nb["key"] == _key("alice"))
    index = next(i for i in (1, 2, 3) if shard_of(_key("alice"), 3) != i)
    body = {"format": 3, "shard": {"index": index, "count": 3}, "notebooks": [alice]}
    status, err = _merge_with(tmp_path, sharded, index, load_key(sharded["key"]).sign(body))
    assert status == 2 and f"{_key('alice')} does not belong to shard {index}/3" in err


def test_a_forged_or_edited_shard_is_refused(tmp_path, sharded):
    # issue 37, item 7: a shard edited to 1000 points per exercise was merged
    from course_helpers.grading.signing import Key, load_key

    index, path = next(
        (i, p)
        for i, p in enumerate(sharded[3]["reports"], start=1)
        if json.loads(p.read_text())["notebooks"]
    )
    real = json.loads(path.read_text())
    edited = json.loads(path.read_text())
    for exercise in edited["notebooks"][0]["exercises"]:
        exercise.update(status="passed", points=1000)
    status, err = _merge_with(tmp_path, sharded, index, edited)
    assert status == 2 and "does not match its content" in err
    unsigned = {k: v for k, v in edited.items() if k != "signature"}
    status, err = _merge_with(tmp_path, sharded, index, unsigned)
    assert status == 2 and "carries no signature" in err
    stranger = Key(b"somebody else's key, not ours", "")
    status, err = _merge_with(tmp_path, sharded, index, stranger.sign(unsigned))
    assert status == 2 and "signed with another key" in err
    # even signed with the right key, a report holds one point per passed exercise only
    status, err = _merge_with(tmp_path, sharded, index, load_key(sharded["key"]).sign(unsigned))
    assert status == 2 and "1000 points" in err
    assert _merge_with(tmp_path, sharded, index, real)[0] == 1  # the real one still merges
    with pytest.raises(SystemExit) as stop:  # no key named: nothing is merged
        _quiet(["merge", *map(str, sharded[3]["reports"])])
    assert stop.value.code == 2


def test_a_deeply_nested_report_is_refused_in_one_line_not_a_traceback(tmp_path):
    # r4 attack: a shard of 2,000 nested lists (or one nested just below the parser's limit,
    # carrying the key's id, so that its signature is computed) ended 'grade merge' with a
    # RecursionError traceback and exit status 1, which the templates read as a verdict
    from course_helpers.grading.signing import load_key

    key = load_key(tmp_path / "grading.key")
    signature = {"alg": "hmac-sha256", "key": key.sign({})["signature"]["key"], "value": "00"}
    for depth in (2000, 985):
        body = {"format": 3, "signature": signature, "x": "NEST"}
        text = json.dumps(body).replace('"NEST"', "[" * depth + "]" * depth)
        path = tmp_path / f"deep-{depth}.json"
        path.write_text(text)
        status, _, err = _quiet(["merge", str(path), "--key-file", str(tmp_path / "grading.key")])
        assert status == 2, err
        assert err.count("\n") == 1 and path.name in err and "nested too deeply" in err, err


def test_a_file_name_that_is_not_utf8_has_a_shard_and_merges(tmp_path):
    # r4 attack: one submission named b"m\xffallory.ipynb" (not UTF-8: Python reads it with
    # a lone surrogate) ended every 'grade --shard I/N' with a UnicodeEncodeError traceback
    # before anything was graded (exit status 1, read as a verdict), and 'grade merge' too:
    # the whole class went ungraded. Its shard comes from the name's bytes as on disk.
    import hashlib
    import os

    from course_helpers.grading.grade import NotebookGrade
    from course_helpers.grading.reports import to_json
    from course_helpers.grading.signing import load_key

    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / os.fsdecode(b"m\xffallory.ipynb")).write_text("{}")
    [(path, key)] = keyed_paths([str(tmp_path / "subs")])
    digest = hashlib.sha256(b"subs/m\xffallory.ipynb").hexdigest()
    assert shard_of(key, 3) == int(digest, 16) % 3 + 1
    signer = load_key(tmp_path / "grading.key")
    reports = []
    for index in (1, 2):
        graded = [NotebookGrade(path, "completed", [])] * (shard_of(key, 2) == index)
        keys = [key] * len(graded)
        reports.append(tmp_path / f"shard-{index}.json")
        reports[-1].write_text(to_json(graded, keys, Shard(index, 2), signer))
    status, _, err = _quiet(["merge", *map(str, reports), "--key-file", str(signer.source)])
    assert status in (0, 1), err


def test_a_bad_shard_argument_stops_before_grading(tmp_path):
    with pytest.raises(SystemExit) as stop:
        _quiet([str(tmp_path), "--shard", "4/3"])
    assert stop.value.code == 2
