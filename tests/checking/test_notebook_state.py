"""Global state a notebook leaves switched never changes a verdict, and is itself told.

The r4 walkthrough (findings #23, #24): an answer cell that left gradient recording off made
every later autograd check say "The checker itself failed ... a bug in the course" (the
reference was built with ``backward()`` in the learner's grad mode), and the same cell passed
when an earlier attempt had built the reference already. References, test inputs and the
checker's calls of a learner's function now run in a fresh kernel's state
(``lessons.model.known_state``); a check run while recording is off fails with what the
answer's cells show (``checking.left_behind.notebook_state``).
"""

from __future__ import annotations

import pytest
import torch

from course_helpers import check
from course_helpers.checking import left_behind
from course_helpers.lessons import get

SETUP = (
    "import os\nos.environ['COURSE_PROGRESS'] = 'off'\nimport torch\n"
    "from course_helpers import check\ndevice = 'cpu'\n"
)
SGD_GIVEN = (
    "w = torch.tensor([0.5, -1.0], device=device, requires_grad=True)\n"
    "x = torch.tensor([2.0, 1.0], device=device)\n"
    "y = torch.tensor([3.0, 0.0], device=device)\n"
    "loss = ((w * x - y) ** 2).sum()\n"
    "loss.backward()\n"
)
SGD_RIGHT = SGD_GIVEN + (
    "with torch.no_grad():\n    w -= 0.1 * w.grad\nanswer = w\ncheck('08.sgd_step', answer)"
)
# the walkthrough's cell: recording switched off for the update, and left off
SGD_LEFT_OFF = SGD_GIVEN + (
    "torch.set_grad_enabled(False)\nw -= 0.1 * w.grad\nanswer = w\ncheck('08.sgd_step', answer)"
)
TANH_RIGHT = (
    "def second_derivative_of_tanh(x):\n"
    "    x_leaf = x.detach().requires_grad_()\n"
    "    (d1,) = torch.autograd.grad(torch.tanh(x_leaf).sum(), x_leaf, create_graph=True)\n"
    "    (d2,) = torch.autograd.grad(d1.sum(), x_leaf)\n"
    "    return d2\n"
)


def _shown(cell) -> str:
    return "".join(
        out.get("data", {}).get("text/plain", "") + out.get("text", "") for out in cell.outputs
    )


@pytest.fixture(scope="module")
def kernels():
    """Two kernels: the cell that leaves recording off as the very first check, and the same
    cell after a right attempt had built the reference; then what follows in each."""
    from answer_cells import run_in_kernel

    first = run_in_kernel(
        [
            SETUP,
            SGD_LEFT_OFF,  # 1: the first check of the kernel
            TANH_RIGHT + "check('09.second_derivative_tanh', second_derivative_of_tanh)",  # 2
            "torch.set_grad_enabled(True)",  # 3
            TANH_RIGHT + "check('09.second_derivative_tanh', second_derivative_of_tanh)",  # 4
        ]
    )
    after_a_right_one = run_in_kernel([SETUP, SGD_RIGHT, SGD_LEFT_OFF])
    return first, after_a_right_one


def test_an_answer_that_leaves_recording_off_is_told_so_not_blamed_on_the_course(kernels):
    first, _ = kernels
    shown = _shown(first.cells[1])
    assert "checker itself failed" not in shown and "bug in the course" not in shown
    assert "Not yet" in shown
    assert "Gradient recording is still switched off after your code ran" in shown
    assert "`torch.set_grad_enabled(False)` is not a `with` block" in shown
    assert "Run `torch.set_grad_enabled(True)`" in shown


def test_the_verdict_does_not_depend_on_whether_the_reference_was_built_earlier(kernels):
    first, after_a_right_one = kernels
    assert "✓ Passed" in _shown(after_a_right_one.cells[1])
    assert _shown(after_a_right_one.cells[2]) == _shown(first.cells[1])


def test_a_later_check_judges_the_function_and_names_the_state_without_claiming_a_switch(
    kernels,
):
    first, _ = kernels
    shown = _shown(first.cells[2])  # recording still off from the cell before
    assert "checker itself failed" not in shown and "raised" not in shown
    assert "Gradient recording is switched off in your notebook now" in shown
    assert "the cells read for this answer do not switch it off" in shown
    assert "✓ Passed" in _shown(first.cells[4])  # switched back on: the same function passes


def test_a_check_inside_a_no_grad_block_is_not_told_about_the_block():
    from answer_cells import run_in_kernel

    nb = run_in_kernel(
        [
            SETUP,
            "with torch.no_grad():\n"
            "    answer = torch.arange(12).reshape(3, 4)\n"
            "    check('01.arange_grid', answer)",
        ]
    )
    assert "✓ Passed" in _shown(nb.cells[1])


@pytest.mark.parametrize(
    ("source", "switches"),
    [
        ("torch.set_grad_enabled(False)", ["torch.set_grad_enabled(False)"]),
        ("torch.set_grad_enabled(mode=False)", ["torch.set_grad_enabled(mode=False)"]),
        ("torch.no_grad().__enter__()", ["torch.no_grad().__enter__()"]),
        ("with torch.set_grad_enabled(False):\n    y = 1", []),
        ("@torch.set_grad_enabled(False)\ndef f():\n    pass", []),
        ("torch.set_grad_enabled(True)", []),
        ("with torch.no_grad():\n    w -= 1", []),
    ],
)
def test_the_statements_that_switch_recording_off_for_good(source, switches):
    assert left_behind.grad_switches(source) == switches


def test_references_and_judging_run_with_recording_on_whatever_the_notebook_left():
    """Without a kernel: the reference of an autograd exercise is built (backward()) while
    the caller has recording off, and the caller's mode is put back."""
    from course_helpers.lessons.model import _build

    _build.cache_clear()  # the reference is built by this check, with recording off
    torch.set_grad_enabled(False)
    try:
        result = check("08.sgd_step", torch.tensor([0.0, 0.0]))
        assert not torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    assert result.status == "failed", result.message
    assert "checker itself failed" not in result.message
    assert get("08.sgd_step").reference.requires_grad
