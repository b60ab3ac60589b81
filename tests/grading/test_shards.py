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
# four submissions: two right, two tampered with (each scores differently per exercise)
SUBMISSIONS = {
    "alice": "correct",
    "bob": "tampering",
    "carol": "correct",
    "dave": "tampering",
}


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
    subs = root / "subs"
    subs.mkdir()
    for name, fixture in SUBMISSIONS.items():
        shutil.copy(FIXTURES / f"{fixture}.ipynb", subs / f"{name}.ipynb")
    common = [str(subs), "--timeout", "30", "--jobs", "2"]
    runs = {}
    for count in (1, 3):
        reports = []
        for index in range(1, count + 1):
            report = root / f"shard-{index}-of-{count}.json"
            _quiet([*common, "--shard", f"{index}/{count}", "--json", str(report)])
            reports.append(report)
        merged = root / f"merged-{count}.json"
        status, table, _ = _quiet(
            [
                "merge",
                *map(str, reports),
                "--json",
                str(merged),
                "--csv",
                str(root / f"{count}.csv"),
            ]
        )
        runs[count] = {
            "reports": reports,
            "merged": json.loads(merged.read_text()),
            "csv": (root / f"{count}.csv").read_text(),
            "status": status,
        }
    return runs


def _results(report: dict) -> dict:
    return {
        nb["key"]: [(e["exercise_id"], e["status"], e["points"]) for e in nb["exercises"]]
        for nb in report["notebooks"]
    }


def test_three_shards_merged_equal_one_run(sharded):
    one, three = sharded[1], sharded[3]
    assert _results(three["merged"]) == _results(one["merged"])
    assert sorted(_results(one["merged"])) == [f"subs/{n}.ipynb" for n in sorted(SUBMISSIONS)]
    assert three["merged"]["score"] == one["merged"]["score"] == 4  # two full notebooks of 2
    assert three["csv"] == one["csv"]
    assert three["status"] == one["status"] == 1  # the tampered ones did not pass


def test_each_shard_graded_only_its_own_submissions(sharded):
    seen = []
    for index, report in enumerate(sharded[3]["reports"], start=1):
        data = json.loads(report.read_text())
        assert data["shard"] == {"index": index, "count": 3}
        for nb in data["notebooks"]:
            assert shard_of(nb["key"], 3) == index
            seen.append(nb["key"])
    assert sorted(seen) == sorted(f"subs/{n}.ipynb" for n in SUBMISSIONS)


def test_a_missing_or_repeated_shard_is_an_error_that_names_it(sharded):
    first, second, third = map(str, sharded[3]["reports"])
    status, _, err = _quiet(["merge", first, third])
    assert status == 2 and "Shard 2/3 is missing" in err
    status, _, err = _quiet(["merge", first, second, third, second])
    assert status == 2 and "Shard 2/3 appears more than once" in err
    status, _, err = _quiet(["merge", first, str(sharded[1]["reports"][0])])
    assert status == 2 and "different splits" in err


def test_a_report_that_is_not_a_shard_report_is_refused_by_name(tmp_path, sharded):
    bad = tmp_path / "bad.json"
    bad.write_text('{"notebooks": []}')
    status, _, err = _quiet(["merge", str(bad)])
    assert status == 2 and "bad.json" in err and "not a grading report" in err
    # a submission that belongs to shard 3/3, presented as shard 2/3
    alice = next(nb for nb in sharded[1]["merged"]["notebooks"] if nb["key"] == "subs/alice.ipynb")
    forged = tmp_path / "forged.json"
    forged.write_text(
        json.dumps({"format": 2, "shard": {"index": 2, "count": 3}, "notebooks": [alice]})
    )
    first, _, third = map(str, sharded[3]["reports"])
    status, _, err = _quiet(["merge", str(forged), first, third])
    assert status == 2 and "subs/alice.ipynb does not belong to shard 2/3" in err


def test_a_bad_shard_argument_stops_before_grading(tmp_path):
    with pytest.raises(SystemExit) as stop:
        _quiet([str(tmp_path), "--shard", "4/3"])
    assert stop.value.code == 2
