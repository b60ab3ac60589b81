"""Lesson 13's quiz on a collective that only one rank calls agrees with what the lesson's hang
demonstration printed: a peer's exit, not only the timeout, ends the wait (issue 27)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from course_helpers import check
from course_helpers.lessons import get

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "13_distributed_data_parallel.ipynb"


def _hang_output() -> str:
    (cell,) = [
        c
        for c in json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code" and 'Path("hang.txt").read_text()' in "".join(c["source"])
    ]
    return "".join(cell["outputs"][0]["text"])


def test_only_the_timeout_is_wrong_and_the_lesson_shows_why():
    shown = _hang_output()
    assert "Timed out waiting 5000ms" in shown
    assert "Connection closed by peer" in shown  # the wait a peer's exit ended
    wrong = check("13.quiz_one_rank_collective", "c")
    assert wrong.status == "failed"
    assert "Connection closed by peer" in wrong.message
    assert check("13.quiz_one_rank_collective", "d").passed


def test_the_hint_names_the_timeout_the_lesson_shows():
    waited_ms = int(re.search(r"Timed out waiting (\d+)ms", _hang_output()).group(1))
    hints = " ".join(get("13.quiz_one_rank_collective").hints)
    assert f"{waited_ms // 1000}-second timeout" in hints
