"""The class report of a generated class, graded for real: its figures are the class's.

``benchmarks/class_generator.py`` writes learners' lesson-01 notebooks from the exercise and
solution notebooks and the misconception catalogue (right answers, typical mistakes, free
text, skipped exercises, several attempts, hint calls) and counts, from its plans alone,
what the report must show. The class is graded once with ``--class-report``; ``grade merge``
then writes the report again from that run's ``--json`` report alone (a run is shard 1 of
1). Kept cheap: ten learners, five answered exercises, one grading pass for every test here.
"""

import contextlib
import csv
import importlib.util
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from course_helpers.grading.command import main

ROOT = Path(__file__).resolve().parents[2]
LEARNERS = 10
EXERCISES = (
    "01.arange_grid",
    "01.linspace_points",
    "01.every_other_column",
    "01.celsius_to_fahrenheit",
    "01.snapshot_copy",
)


def _generator():
    spec = importlib.util.spec_from_file_location(
        "class_generator", ROOT / "benchmarks" / "class_generator.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("class_generator", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return sys.modules["class_generator"]


def _run(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("class")
    made = _generator().make_class(out / "submitted", LEARNERS, ("01_tensors",), EXERCISES, 3)
    key = ["--key-file", str(out / "grading.key")]
    graded = [str(out / "submitted"), "--jobs", "2", "--timeout", "60", *key]
    statuses = [
        _run([*graded, "--json", str(out / "class.json"), "--class-report", str(out / "direct")])
    ]
    # a run is shard 1 of 1: the merge rebuilds the report from the shard report alone
    merge = ["merge", str(out / "class.json"), *key, "--class-report", str(out / "report")]
    statuses.append(_run(merge))
    return {"made": made, "out": out, "statuses": statuses, "merge": merge[:4]}


def _key(path: Path) -> str:
    return f"submitted/{path.parent.name}/{path.name}"


def _report(folder: Path) -> dict:
    return json.loads((folder / "class-report.json").read_text(encoding="utf-8"))


def _assert_figures(report: dict, expected: dict) -> None:
    """Every figure of every exercise of ``report`` equals the generated class's."""
    got = {e["name"]: e for e in report["exercises"]}
    assert set(got) == set(expected)
    for exercise_id, want in expected.items():
        e = got[exercise_id]
        where = f"{exercise_id}: "
        for name in ("graded", "attempted", "passed", "first_attempt_passed", "answers"):
            assert e[name] == want[name], where + name
        assert e["wrong_answers"] == want["wrong_answers"], where + "wrong answers"
        assert e["solutions_shown"] == want["solutions_shown"], where + "solutions"
        assert {k: v for k, v in e["attempts"].items() if v} == dict(want["attempts"]), where
        tiers = {int(k): v for k, v in e["hint_tiers"].items() if v}
        assert tiers == dict(want["hint_tiers"]), where + "hint tiers"
        if e["graded"]:
            assert e["pass_rate"] == round(want["passed"] / want["graded"], 4)
        mine = {m["label"]: m for m in e["misconceptions"]}
        assert set(mine) == set(want["misconceptions"]), where + "misconceptions"
        for label, m in want["misconceptions"].items():
            shown = mine[label]
            for name in ("answers", "notebooks", "overcome"):
                assert shown[name] == m[name], f"{where}{label}: {name}"
            assert shown["evidence"] == dict(m["evidence"]), f"{where}{label}: evidence"
            assert shown["with_evidence"] == m["evidence"].get("code", 0)
            share = round(m["answers"] / want["wrong_answers"], 4)
            assert shown["share_of_wrong_answers"] == share
            told = {t["text"]: t["answers"] for t in shown["messages_seen"]}
            assert told == dict(m["said"]), f"{where}{label}: what the learners were told"


def test_the_grading_runs_finished(graded):
    assert graded["statuses"] == [1, 1]  # verdicts (some answers wrong), no grader failure
    report = json.loads((graded["out"] / "class.json").read_text(encoding="utf-8"))
    runs = {nb["key"]: nb["run"] for nb in report["notebooks"]}
    assert set(runs.values()) == {"completed"}, runs


def test_the_merged_class_report_has_the_generated_figures(graded):
    made = graded["made"]
    report = _report(graded["out"] / "report")
    assert report["notebooks"] == LEARNERS
    assert report["runs"] == {"completed": LEARNERS}
    expected = made.expected()
    _assert_figures(report, expected)
    # the class really holds what the report is meant to find
    every = [m for e in expected.values() for m in e["misconceptions"].values()]
    assert sum(m["answers"] for m in every) >= 5
    assert {s for m in every for s in m["evidence"]} >= {"code", "values"}
    assert sum(e["attempts"].get("2", 0) + e["attempts"].get("3", 0) for e in expected.values())
    assert sum(e["graded"] - e["attempted"] for e in expected.values())  # skipped exercises
    assert sum(sum(e["hint_tiers"].values()) - e["hint_tiers"].get(0, 0) for e in expected.values())


def test_grade_and_merge_write_the_same_report(graded):
    direct, merged = graded["out"] / "direct", graded["out"] / "report"
    for name in ("class-report.json", "index.html", "exercises.csv", "misconceptions.csv"):
        assert (direct / name).read_bytes() == (merged / name).read_bytes(), name


def test_lessons_roll_up_their_exercises_and_the_top_list_is_ranked(graded):
    report = _report(graded["out"] / "report")
    (lesson,) = report["lessons"]
    for name in ("graded", "attempted", "passed", "first_attempt_passed", "wrong_answers"):
        assert lesson[name] == sum(e[name] for e in report["exercises"])
    every = [m for e in report["exercises"] for m in e["misconceptions"]]
    ranked = sorted(
        every, key=lambda m: (-m["notebooks"], -m["answers"], m["exercise_id"], m["label"])
    )
    top = [(m["exercise_id"], m["label"]) for m in report["top_misconceptions"]]
    assert top == [(m["exercise_id"], m["label"]) for m in ranked[:10]]


def test_the_csv_tables_hold_the_same_figures(graded):
    folder = graded["out"] / "report"
    report = _report(folder)
    with open(folder / "exercises.csv", newline="") as f:
        rows = {row["name"]: row for row in csv.DictReader(f)}
    for e in report["exercises"]:
        row = rows[e["name"]]
        for name in ("graded", "attempted", "passed", "first_attempt_passed", "wrong_answers"):
            assert int(row[name]) == e[name]
        assert float(row["pass_rate"]) == e["pass_rate"]
    with open(folder / "misconceptions.csv", newline="") as f:
        listed = Counter(
            (r["exercise_id"], r["label"], int(r["answers"])) for r in csv.DictReader(f)
        )
    every = Counter(
        (e["name"], m["label"], m["answers"])
        for e in report["exercises"]
        for m in e["misconceptions"]
    )
    assert listed == every


def _identifying(graded) -> list[str]:
    """What would name a learner: folder names, keys, file names, paths, their own words."""
    made, out = graded["made"], graded["out"]
    names = [nb.learner for nb in made.notebooks]
    keys = [_key(nb.path) for nb in made.notebooks]
    return [*names, *keys, str(out), "submitted", ".ipynb", "my guess"]


def _texts(folder: Path) -> dict[str, str]:
    return {
        p.name: p.read_bytes().decode("latin-1") for p in sorted(folder.iterdir()) if p.is_file()
    }


def test_nothing_in_the_default_report_names_a_learner(graded):
    texts = _texts(graded["out"] / "report")
    assert set(texts) == {
        "index.html",
        "class-report.json",
        "lessons.csv",
        "exercises.csv",
        "misconceptions.csv",
        "overview.png",
    }
    for name, text in texts.items():
        for marker in _identifying(graded):
            assert marker not in text, f"{marker!r} in {name}"
    # the same check finds the names where they were asked for: the check can fail
    named = graded["out"] / "named"
    status = _run([*graded["merge"], "--class-report", str(named), "--class-report-learners"])
    assert status == 1
    found = _texts(named)
    learner = graded["made"].notebooks[0]
    assert _key(learner.path) in found["index.html"]
    assert _key(learner.path) in found["learners.csv"]


@pytest.fixture
def chromium_page(request):
    """The conftest's Chromium page, once the browser is known to be there (else skipped, or
    failed under COURSE_REQUIRE_BROWSER=1)."""
    from browser_support import require_browser

    require_browser(whole_module=False)
    return request.getfixturevalue("page")


def test_the_page_opens_offline_in_chromium_with_the_figures(graded, chromium_page):
    page = chromium_page
    folder = graded["out"] / "report"
    report = _report(folder)
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto((folder / "index.html").as_uri())
    assert page.locator("#summary").get_attribute("data-notebooks") == str(LEARNERS)
    rows = page.eval_on_selector_all(
        "#exercises tbody tr",
        """rows => rows.map(r => Object.fromEntries(
            [...r.querySelectorAll('td')].map(c => [c.dataset.field, c.dataset.value])))""",
    )
    by_name = {row["name"]: row for row in rows}
    expected = graded["made"].expected()
    assert set(by_name) == set(expected)
    for exercise_id, want in expected.items():
        row = by_name[exercise_id]
        for name in ("graded", "attempted", "passed", "first_attempt_passed", "wrong_answers"):
            assert int(row[name]) == want[name], f"{exercise_id}: {name}"
        assert float(row["pass_rate"]) == round(want["passed"] / want["graded"], 4)
    top = page.eval_on_selector_all(
        "#top-misconceptions tbody tr[data-misconception]",
        """rows => rows.map(r => [
            r.dataset.misconception, r.querySelector('[data-field=answers]').dataset.value])""",
    )
    assert top == [
        [f"{m['exercise_id']}|{m['label']}", str(m["answers"])]
        for m in report["top_misconceptions"]
    ]
    # the pictures are in the page, their labels readable as text
    assert page.locator("figure svg").count() == 5
    picture = page.locator("figure svg").first.text_content()
    first = report["top_misconceptions"][0]
    assert re.sub(r"\s+", " ", first["exercise_id"]) in picture
    assert requests == [(folder / "index.html").as_uri()]  # nothing fetched: no network


def test_the_generator_names_the_lessons_it_knows_when_given_another():
    import subprocess

    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "class_generator.py"), "unused"]
        + ["--lessons", "01"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "no solution notebook for --lessons 01; one of: 01_tensors" in done.stderr
