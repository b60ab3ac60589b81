"""Every lesson follows the course template, and every notebook obeys the house rules."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course_helpers.authoring import colab
from course_helpers.lessons import catalog

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
ALL = LESSONS + SOLUTIONS
SECTIONS = ["## Objectives", "## Pitfalls", "## Check yourself", "## Summary"]
GOING_FURTHER = "## Going further (optional)"
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
    _check_going_further(nb)
    tagged = [c for c in nb.cells if "raises-exception" in c.metadata.get("tags", [])]
    assert tagged, "pitfalls show real errors in cells tagged raises-exception"


def _check_going_further(nb) -> None:
    """The optional part may follow the Summary, once; it is the only `##` section there."""
    headings = [
        line
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("## ")
    ]
    after_summary = headings[headings.index("## Summary") + 1 :]
    assert after_summary in ([], [GOING_FURTHER]), (
        f"after the Summary only {GOING_FURTHER!r} may follow, once (found {after_summary})"
    )
    assert headings.count(GOING_FURTHER) == len(after_summary), (
        f"{GOING_FURTHER!r} only after the Summary"
    )


@pytest.mark.parametrize(
    ("headings", "accepted"),
    [
        (["## Summary"], True),
        (["## Summary", GOING_FURTHER], True),
        ([GOING_FURTHER, "## Summary"], False),
        (["## Summary", GOING_FURTHER, GOING_FURTHER], False),
        (["## Summary", "## Pitfalls"], False),
    ],
)
def test_going_further_is_accepted_only_after_the_summary(headings, accepted):
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell(f"{h}\n\ntext") for h in headings]
    )
    if accepted:
        _check_going_further(nb)
    else:
        with pytest.raises(AssertionError):
            _check_going_further(nb)


@pytest.mark.parametrize("path", LESSONS[1:], ids=[p.stem for p in LESSONS[1:]])
def test_lesson_links_to_its_exercises(path):
    assert f"../exercises/{path.name}" in _markdown(_read(path))


@pytest.mark.parametrize("path", ALL, ids=[f"{p.parent.name}/{p.stem}" for p in ALL])
def test_setup_cell_comes_first_and_no_device_is_hard_coded(path):
    nb = _read(path)
    code = _code(nb)
    assert nb.cells[1].cell_type == "markdown" and "[Open in Colab](" in nb.cells[1].source, (
        "an 'Open in Colab' link follows the title (the build writes it)"
    )
    assert code[0] == colab.setup_cell_source(), (
        "the first code cell is the build's course setup cell (run the build)"
    )
    assert "setup_notebook()" in code[1], "the next code cell calls setup_notebook()"
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
