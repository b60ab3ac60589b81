"""Every lesson's main path fits 45 minutes: at most 2,000 prose words and 35 code cells.

The main path is everything before the first Markdown cell that starts with a
"Going further" heading (CONTRIBUTING.md, "The notebook template"). The counting rule is
fixed by issue 35 (it is what the review measured): prose words are runs of
``[A-Za-z0-9_'`.-]`` in Markdown cells with fenced code blocks removed; code cells are
counted one each, whatever they hold.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_WORDS = 2000
MAX_CODE_CELLS = 35


def main_path_size(cells: list[dict]) -> tuple[int, int]:
    """(prose words, code cells) before the first "Going further" Markdown cell."""
    words = code = 0
    for c in cells:
        s = "".join(c.get("source", ""))
        if c["cell_type"] == "markdown" and re.match(r"\s*#+\s*Going further", s):
            break
        if c["cell_type"] == "markdown":
            words += len(re.findall(r"[A-Za-z0-9_'`.-]+", re.sub(r"```.*?```", "", s, flags=re.S)))
        elif c["cell_type"] == "code":
            code += 1
    return words, code


def budget_problem(name: str, cells: list[dict]) -> str | None:
    """A sentence naming the lesson, its size and the budget when it is over; else None."""
    words, code = main_path_size(cells)
    if words <= MAX_WORDS and code <= MAX_CODE_CELLS:
        return None
    return (
        f"{name}: the main path (before '## Going further') has {words} prose words and "
        f"{code} code cells; the budget is {MAX_WORDS} words and {MAX_CODE_CELLS} code cells. "
        "Move what is not the lesson's core line into '## Going further (optional)' or a "
        "checked exercise (CONTRIBUTING.md, 'The notebook template')."
    )


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_main_path_fits_the_budget(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    problem = budget_problem(path.name, cells)
    if problem is not None:
        pytest.fail(problem, pytrace=False)


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "source": text}


def _code(text: str = "x = 1") -> dict:
    return {"cell_type": "code", "source": text}


def test_counting_stops_at_going_further_and_skips_fenced_code():
    cells = [
        _md("# 01 · Title\n\nfour words here `x.grad` and it's done."),
        _md("```python\nnot counted at all\n```\ntwo more"),
        _code(),
        _code(),
        _md("## Going further (optional)\n\nnever counted"),
        _code(),
        _md("plenty of words after the heading"),
    ]
    # "#", "·" are not words; "01", "Title", "four", "words", "here", "`x.grad`", "and",
    # "it's", "done." are nine; then "two", "more"
    assert main_path_size(cells) == (11, 2)


def test_source_as_a_list_of_lines_counts_the_same():
    cells = [{"cell_type": "markdown", "source": ["one two\n", "three"]}]
    assert main_path_size(cells) == (3, 0)


def test_an_over_budget_lesson_is_named_with_its_size_and_the_budget():
    too_long = [_md(" ".join(["word"] * (MAX_WORDS + 1)))] + [_code()] * 3
    message = budget_problem("07_x.ipynb", too_long)
    assert message is not None
    assert "07_x.ipynb" in message
    assert f"{MAX_WORDS + 1} prose words" in message and "3 code cells" in message
    assert f"{MAX_WORDS} words and {MAX_CODE_CELLS} code cells" in message
    too_many_cells = [_md("short")] + [_code()] * (MAX_CODE_CELLS + 1)
    assert f"{MAX_CODE_CELLS + 1} code cells" in budget_problem("x.ipynb", too_many_cells)
    at_the_limit = [_md(" ".join(["word"] * MAX_WORDS))] + [_code()] * MAX_CODE_CELLS
    assert budget_problem("x.ipynb", at_the_limit) is None


def test_going_further_below_a_long_main_path_does_not_hide_it():
    cells = [_md(" ".join(["word"] * (MAX_WORDS + 5))), _md("## Going further (optional)")]
    assert budget_problem("x.ipynb", cells) is not None
