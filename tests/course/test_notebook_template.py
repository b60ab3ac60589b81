"""Every lesson follows the course template, and every notebook obeys the house rules."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course_helpers.lessons import catalog

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
ALL = LESSONS + SOLUTIONS
SECTIONS = ["## Objectives", "## Pitfalls", "## Check yourself", "## Summary"]
# Putting data on "cuda" by name; fine only in a cell that first asks torch.cuda.is_available()
# (a GPU-only demonstration). Building torch.device("cuda") objects to explain them is fine.
HARD_CODED_CUDA = re.compile(r"""(device\s*=\s*['"]cuda|\.to\(\s*['"]cuda|\.cuda\(\))""")


def _read(path):
    return nbformat.read(path, as_version=4)


def _markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_has_the_template_sections_in_order(path):
    nb = _read(path)
    text = _markdown(nb)
    number = path.stem[:2]
    assert nb.cells[0].cell_type == "markdown"
    assert nb.cells[0].source.startswith(f"# {number} · "), "title: '# NN · Title'"
    positions = [text.find(f"\n{heading}") for heading in SECTIONS]
    assert all(p >= 0 for p in positions), dict(zip(SECTIONS, positions, strict=True))
    assert positions == sorted(positions), "sections out of order"
    assert text.count("Predict, then run") >= 2
    tagged = [c for c in nb.cells if "raises-exception" in c.metadata.get("tags", [])]
    assert tagged, "pitfalls show real errors in cells tagged raises-exception"


@pytest.mark.parametrize("path", LESSONS[1:], ids=[p.stem for p in LESSONS[1:]])
def test_lesson_links_to_its_exercises(path):
    assert f"../exercises/{path.name}" in _markdown(_read(path))


@pytest.mark.parametrize("path", ALL, ids=[f"{p.parent.name}/{p.stem}" for p in ALL])
def test_setup_cell_comes_first_and_no_device_is_hard_coded(path):
    code = _code(_read(path))
    assert "setup_notebook()" in code[0], "the first code cell calls setup_notebook()"
    offenders = [
        line
        for cell in code
        if "torch.cuda.is_available()" not in cell
        for line in cell.splitlines()
        if HARD_CODED_CUDA.search(line)
    ]
    assert offenders == [], "use `device` from setup_notebook() instead of 'cuda'"


@pytest.mark.parametrize("path", ALL, ids=[f"{p.parent.name}/{p.stem}" for p in ALL])
def test_checked_ids_exist_and_belong_to_the_lesson(path):
    ids = {e.id: e for e in catalog()}
    used = re.findall(r"""\bcheck\(\s*["']([\w.]+)["']""", "\n".join(_code(_read(path))))
    for exercise_id in used:
        assert exercise_id in ids, f"unknown exercise {exercise_id}"
        assert ids[exercise_id].lesson == path.stem, f"{exercise_id} belongs to another lesson"


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_solution_has_six_or_more_checked_exercises_each_with_a_marked_answer(path):
    nb = _read(path)
    checked = [c for c in nb.cells if c.cell_type == "code" and re.search(r"\bcheck\(", c.source)]
    assert len({re.search(r"""check\(\s*["']([\w.]+)""", c.source).group(1) for c in checked}) >= 6
    kinds = {
        e.kind
        for e in catalog()
        if e.lesson == path.stem and not e.id.split(".")[1].startswith("quiz")
    }
    assert len(kinds) >= 3, f"mix exercise kinds (found {sorted(kinds)})"
    assert any("### BEGIN SOLUTION" in c.source for c in checked)


def test_every_exercise_in_the_catalog_is_used_by_a_notebook():
    used = set()
    for path in ALL:
        used |= set(
            re.findall(r"""\b(?:check|quiz)\(\s*["']([\w.]+)["']""", "\n".join(_code(_read(path))))
        )
    missing = sorted(e.id for e in catalog() if e.id not in used)
    assert missing == []


@pytest.mark.parametrize("path", ALL, ids=[f"{p.parent.name}/{p.stem}" for p in ALL])
def test_no_committed_output_shows_a_crashed_launch(path):
    # outputs of launcher cells are not compared by nbval (ports and pids change), so a
    # worker that crashed while the notebook was built would otherwise be committed unseen
    for cell in _read(path).cells:
        for output in cell.get("outputs", []):
            text = output.get("text", "")
            text = "".join(text) if isinstance(text, list) else text
            for sign in ("ChildFailedError", "terminate called", "exitcode  : -"):
                assert sign not in text, f"{cell.source[:60]!r} printed {sign!r}: rebuild it"
