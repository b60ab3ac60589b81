"""Every course helper that a notebook's prose tells the learner to call is imported in that
notebook, so following the text never ends in a NameError."""

import json
import re
from pathlib import Path

import pytest

import course_helpers

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(
    p for folder in ("notebooks", "exercises", "solutions") for p in (ROOT / folder).glob("*.ipynb")
)
PUBLIC = set(course_helpers.__all__)


def _called_in_prose(notebook: dict) -> set[str]:
    """Public helpers written as a call (`progress()`, `hint("01.x")`) in Markdown cells."""
    names = set()
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            for span in re.findall(r"`([^`\n]+)`", "".join(cell["source"])):
                call = re.match(r"(\w+)\(", span)
                if call and call.group(1) in PUBLIC:
                    names.add(call.group(1))
    return names


def _imported(notebook: dict) -> set[str]:
    names = set()
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            for line in re.findall(r"from course_helpers import ([^\n]+)", "".join(cell["source"])):
                names |= {n.split(" as ")[0].strip() for n in line.split("#")[0].split(",")}
    return names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_helpers_the_prose_asks_for_are_imported(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert _called_in_prose(notebook) <= _imported(notebook)


def test_the_check_reads_calls_and_imports():
    cell = {"cell_type": "markdown", "source": ['Run `progress()` and `hint("01.x")`.']}
    code = {"cell_type": "code", "source": ["from course_helpers import hint, quiz  # noqa\n"]}
    notebook = {"cells": [cell, code]}
    assert _called_in_prose(notebook) == {"progress", "hint"}
    assert _imported(notebook) == {"hint", "quiz"}
