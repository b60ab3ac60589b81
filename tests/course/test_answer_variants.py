"""benchmarks/answer_variants.py: the variants it builds from a solution cell (the kernel runs
are the harness's own business; here only what it would run, and how it counts)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from course_helpers.lessons import get

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def harness():
    path = ROOT / "benchmarks/answer_variants.py"
    spec = importlib.util.spec_from_file_location("answer_variants", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["answer_variants"] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["answer_variants"]


CELL = """a = torch.tensor(2.0, requires_grad=True)
### BEGIN SOLUTION
u = a**2
u.register_hook(lambda grad: grad / 2)
f = u + 3 * a
f.backward()
answer = a
### END SOLUTION
check("05.hook_halve", answer)
"""

FUNCTION = """def celsius_to_fahrenheit(celsius):
    ### BEGIN SOLUTION
    return celsius * 9 / 5 + 32
    ### END SOLUTION


check("01.celsius_to_fahrenheit", celsius_to_fahrenheit)
"""


def test_a_cell_answer_is_split_typed_and_cut_statement_by_statement(harness):
    variants = {v.name: v for v in harness.generic_variants(get("05.hook_halve"), CELL, None)}
    first, second = variants["split"].cells
    assert first.startswith("a = torch.tensor") and "u.register_hook" in first
    assert second.startswith("f = u + 3 * a") and second.rstrip().endswith("answer)")
    deleted = [name for name in variants if name.startswith("del:")]
    assert len(deleted) == 5 and variants[deleted[1]].expect == "fail"
    assert "u.register_hook" not in variants[deleted[1]].cells[0]
    literal = {
        "value": "torch.tensor(2.0, dtype=torch.float32, requires_grad=True)",
        "grad": "torch.tensor(5.0, dtype=torch.float32)",
    }
    typed = {v.name: v for v in harness.generic_variants(get("05.hook_halve"), CELL, literal)}
    assert typed["typed"].expect == "fail"  # the task says how: typed numbers must not pass
    assert "answer.grad = torch.tensor(5.0" in typed["typed"].cells[0]
    assert harness.assigned_names(harness._region(CELL)[1]) == ["answer", "f", "u"]


def test_a_function_answer_gets_a_helper_one_cell_earlier_and_dirty_state(harness):
    ex = get("01.celsius_to_fahrenheit")
    variants = {v.name: v for v in harness.generic_variants(ex, FUNCTION, None)}
    helper, wrapper = variants["split"].cells
    assert helper.startswith("def _celsius_to_fahrenheit_impl(celsius):")
    assert "return _celsius_to_fahrenheit_impl(celsius)" in wrapper
    assert variants["dirty_grad"].expect == "fail"
    assert "torch.set_grad_enabled(False)" in variants["dirty_grad"].cells[0]
    assert variants["python"].expect == "fail"  # the reference returns a tensor


def test_the_counts_distinguish_rejected_accepted_and_surviving(harness):
    report = harness.Report("here")
    for variant, expect, status in (
        ("split", "pass", "failed"),
        ("apply_ lambda", "fail", "passed"),
        ("del:1 x = 1", "fail", "passed"),
        ("numpy", "fail", "failed"),
    ):
        report.outcomes.append(harness.Outcome("01.x", variant, expect, status, ""))
    counts = harness.summary(report)
    assert counts["right answers rejected"] == 1 and counts["wrong answers accepted"] == 1
    assert counts["deletions that still pass"] == 1 and counts["deletions"] == 1
