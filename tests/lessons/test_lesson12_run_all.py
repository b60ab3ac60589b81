"""Issue 24 (5): after Run All of the untouched exercise notebook 12, the script the lesson
debugs still works (its stubs never shadow it), and every check says "not attempted"; once
the learner writes a repair, that repair replaces the script's version."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from answer_cells import run_in_kernel

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "exercises" / "12_capstone_debugging.ipynb"


@pytest.fixture
def quiet_env(monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS", "off")
    monkeypatch.setenv("COURSE_STRICT", "0")
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))


def _code_cells() -> list[str]:
    nb = json.loads(NOTEBOOK.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


PROBE = """
outcome = []
try:
    train(200, torch.device("cpu"))
except RuntimeError as error:
    outcome.append("RuntimeError" if "inplace operation" in str(error) else str(error))
outcome.append(sorted(name for name, _ in Regressor().named_parameters()))
outcome.append(type(l2_penalty(Regressor())).__name__)
outcome.append(tuple(make_data(3, 0)[1].shape))
print(outcome)
"""


def _printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def test_run_all_keeps_the_script_working(quiet_env):
    cells = _code_cells()
    nb = run_in_kernel([*cells, PROBE], timeout=300)
    printed = _printed(nb.cells[-1])
    names = ["hidden.bias", "hidden.weight", "out_b", "skip.bias", "skip.weight"]
    # the script's own (broken) versions: the lesson's first error, out_w unregistered, the
    # penalty a float, targets of shape (n,); not None, Ellipsis or NoneType
    assert printed.strip() == str(["RuntimeError", names, "float", (3,)])
    verdicts = [
        o["data"]["text/plain"]
        for cell, source in zip(nb.cells, cells, strict=False)
        if "check(" in source
        for o in cell.outputs
        if o.get("output_type") == "display_data" and ": 12." in o["data"]["text/plain"]
    ]
    assert len(verdicts) >= 11 and all("Not attempted" in v for v in verdicts), verdicts


def test_a_written_repair_replaces_the_script_version(quiet_env):
    cells = _code_cells()
    answer = (
        "@repair\n"
        "def l2_penalty(model):\n"
        "    return sum(p.pow(2).sum() for p in model.parameters())\n\n\n"
        'check("12.keep_penalty_graph", l2_penalty)'
    )
    index = next(i for i, s in enumerate(cells) if 'check("12.keep_penalty_graph"' in s)
    cells[index] = answer
    nb = run_in_kernel([*cells, "print(type(l2_penalty(Regressor())).__name__)"], timeout=300)
    assert "Passed" in nb.cells[index].outputs[0]["data"]["text/plain"]
    assert _printed(nb.cells[-1]).strip() == "Tensor"
