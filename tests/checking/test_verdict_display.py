"""Issue 24 (4): ``check``'s verdict appears wherever ``check`` is called, exactly once, in a
real kernel: as a cell's last expression, before a ``print``, inside ``if``, in a function."""

from __future__ import annotations

import os

import pytest
from answer_cells import run_in_kernel


@pytest.fixture
def quiet_env(monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS", "off")
    monkeypatch.setenv("COURSE_STRICT", "0")
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))


def _verdicts(cell, exercise_id: str) -> int:
    """How many outputs of ``cell`` are a verdict for ``exercise_id``."""
    return sum(
        1
        for output in cell.outputs
        if output.get("output_type") in ("display_data", "execute_result")
        and f": {exercise_id}" in output.get("data", {}).get("text/plain", "")
    )


def test_the_verdict_shows_once_wherever_check_is_called(quiet_env):
    nb = run_in_kernel(
        [
            "import torch\nfrom course_helpers import check",
            'check("01.arange_grid", torch.arange(12).reshape(3, 4))',
            'check("01.arange_grid", torch.arange(12).reshape(3, 4))\nprint("after")',
            'result = check("01.arange_grid", torch.zeros(3, 4))',
            "result",
            'if check("01.arange_grid", torch.arange(12).reshape(3, 4)):\n    print("on")',
            'def go():\n    check("01.arange_grid", torch.zeros(3))\n\n\ngo()\nprint("done")',
        ]
    )
    cells = nb.cells
    assert [_verdicts(cell, "01.arange_grid") for cell in cells[1:]] == [1, 1, 1, 1, 1, 1]
    texts = [o.get("text", "") for o in cells[2].outputs]
    assert "after" in "".join(texts)
    assert "✓ Passed" in cells[5].outputs[0]["data"]["text/plain"]
    assert "✗ Not yet" in cells[6].outputs[0]["data"]["text/plain"]
