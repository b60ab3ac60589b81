"""Issue 24 (2): right answers the checks used to reject, and (3) messages that name the
answer's real mistake."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from answer_cells import check_answer_cell

from course_helpers import check
from course_helpers.environment.notebook import cpu_generator
from course_helpers.lessons import catalog

ERROR_EXERCISES = [e for e in catalog() if e.kind == "error" and e.reference is not None]


def test_there_are_thirteen_error_exercises():
    assert len(ERROR_EXERCISES) >= 13


@pytest.mark.parametrize("exercise", ERROR_EXERCISES, ids=lambda e: e.id)
def test_every_error_exercise_accepts_the_exception_name(exercise):
    name = exercise.reference.__name__
    assert check(exercise.id, exercise.reference).passed
    assert check(exercise.id, name).passed, name
    assert check(exercise.id, f"{exercise.reference.__module__}.{name}").passed


EVAL_SETUP = """
torch.manual_seed(7)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
g = cpu_generator(7)
batches = [(torch.randn(10, 4, generator=g), torch.randn(10, 1, generator=g)) for _ in range(3)]
total = 0.0
with {block}:
    for xb, yb in batches:
        loss = nn.functional.mse_loss(model(xb), yb)
        total += loss.item()
mean_loss = total / len(batches)
answer = (mean_loss, loss)
"""


@pytest.mark.parametrize("block", ["torch.no_grad()", "torch.inference_mode()"])
def test_07_eval_loop_fix_accepts_no_grad_and_inference_mode(block):
    names = {"torch": torch, "nn": torch.nn, "cpu_generator": cpu_generator}
    result = check_answer_cell("07.eval_loop_fix", EVAL_SETUP.format(block=block), names)
    assert result.passed, result.message


def test_07_eval_loop_fix_still_wants_a_block_that_records_nothing():
    names = {"torch": torch, "nn": torch.nn, "cpu_generator": cpu_generator}
    code = EVAL_SETUP.format(block="torch.enable_grad()")
    assert not check_answer_cell("07.eval_loop_fix", code, names).passed


def test_05_hand_chain_rule_accepts_float64_and_names_a_nan():
    right64 = check("05.hand_chain_rule", torch.tensor([-6.0, 3.25], dtype=torch.float64))
    assert right64.passed and "float64" in right64.message
    wrong64 = check("05.hand_chain_rule", torch.tensor([-6.0, 3.0], dtype=torch.float64))
    assert not wrong64.passed and "dtype" not in wrong64.message
    nan = check("05.hand_chain_rule", torch.tensor([float("nan"), 3.25]))
    assert "NaN" in nan.message and "-6" not in nan.message


def test_by_hand_numpy_answers_are_named():
    message = check("05.central_difference", np.float64(12.000001)).message
    assert message.startswith("Your answer is a NumPy float64, but a tensor is expected")
    message = check("05.central_difference", np.array(12.000001)).message
    assert message.startswith("Your answer is a NumPy scalar (float64), not a tensor")


def test_04_fix_mse_accepts_squeeze_without_a_dim():
    def mse(prediction, target):
        return ((prediction.squeeze() - target) ** 2).mean()

    assert check("04.fix_mse", mse).passed


def _kept_u(cut: bool):
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    u = a * b
    u.retain_grad()
    f = u * (a.detach() if cut else a) + u
    f.backward()
    return u


def test_05_keep_intermediate_grad_rejects_a_graph_cut_after_u():
    """Issue 24 (1): u.grad is right, but a.detach() cut a's second path (a.grad -3, not -5)."""
    result = check("05.keep_intermediate_grad", _kept_u(cut=True))
    assert result.status == "failed"
    assert "whose .grad is wrong (-3.0)" in result.message
    assert check("05.keep_intermediate_grad", _kept_u(cut=False)).passed
