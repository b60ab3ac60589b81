"""Lessons 09-12 method checks (issue 12): a right value reached by a method the task rules
out fails with the reason, the solutions pass, and by-hand / prediction exercises hide the
expected values."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from answer_cells import check_answer_cell

from course_helpers import check
from course_helpers.lessons import get
from course_helpers.lessons.lesson11.exercises import _small_data
from course_helpers.lessons.lesson11.exercises import probe as _probe
from course_helpers.lessons.lesson12.exercises import _evaluate_cases as _evaluate12_cases


# --------------------------------------------------------------------------- 11.gd_step
def gd_step_solution(w, x, y, lr):
    w = w.detach().clone().requires_grad_(True)
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        return w - lr * w.grad


def gd_step_data(w, x, y, lr):
    w = w.detach().clone().requires_grad_(True)
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    return w.data - lr * w.grad.data


def test_gd_step_solution_passes():
    result = check("11.gd_step", gd_step_solution)
    assert result.passed, result.message


def test_gd_step_with_data_has_the_right_values_but_fails_with_the_reason():
    case = get("11.gd_step").cases(torch.Generator().manual_seed(0))[0]
    torch.testing.assert_close(gd_step_data(*case), gd_step_solution(*case))
    result = check("11.gd_step", gd_step_data)
    assert result.status == "failed"
    assert "`.data`" in result.message and "behind autograd's back" in result.message


# ------------------------------------------------------------------- 11.leaf_after_steps
LEAF_SOLUTION = """w = torch.zeros(3, 1, requires_grad=True)
for step in range(3):
    loss = ((x_small @ w - y_small) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    if step < 2:
        w.grad.zero_()
answer = w
"""
LEAF_DATA = """w = torch.zeros(3, 1, requires_grad=True)
for step in range(3):
    loss = ((x_small @ w - y_small) ** 2).mean()
    loss.backward()
    w.data -= 0.1 * w.grad
    if step < 2:
        w.grad.zero_()
answer = w
"""


@pytest.mark.parametrize(("code", "passes"), [(LEAF_SOLUTION, True), (LEAF_DATA, False)])
def test_leaf_after_steps_data_fails_and_the_solution_passes(code, passes):
    x_small, y_small = _small_data()
    names = {"torch": torch, "x_small": x_small, "y_small": y_small}
    result = check_answer_cell("11.leaf_after_steps", code, names)
    assert result.passed is passes, result.message
    if not passes:
        assert "`.data`" in result.message and "torch.no_grad()" in result.message


def test_leaf_after_steps_hides_the_expected_values():
    x_small, y_small = _small_data()
    names = {"torch": torch, "x_small": x_small, "y_small": y_small}
    exec(LEAF_SOLUTION.replace("0.1 * w.grad", "0.2 * w.grad"), names)
    result = check("11.leaf_after_steps", names["answer"])
    assert result.status == "failed"
    expected = get("11.leaf_after_steps").reference.detach().flatten().tolist()
    for value in expected:
        assert f"{value:.4f}"[:6] not in result.message, result.message


# ---------------------------------------------------------------------------- 11.evaluate


def evaluate11_solution(model, x, y):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        loss = F.mse_loss(model(x), y)
    model.train(was_training)
    return loss


def evaluate11_detached(model, x, y):
    was_training = model.training
    model.eval()
    loss = F.mse_loss(model(x), y).detach()
    model.train(was_training)
    return loss


def test_evaluate_solution_passes():
    result = check("11.evaluate", _probe(evaluate11_solution))
    assert result.passed, result.message


def test_evaluate_detached_after_the_forward_pass_fails_because_it_recorded_a_graph():
    result = check("11.evaluate", _probe(evaluate11_detached))
    assert result.status == "failed"
    assert "recorded" in result.message and "torch.no_grad()" in result.message


# ------------------------------------------------------------------- 12.evaluate_no_graph
def evaluate12_solution(model, x, y):
    with torch.no_grad():
        return ((model(x) - y) ** 2).mean()


def evaluate12_detached(model, x, y):
    return ((model(x) - y) ** 2).mean().detach()


def test_evaluate_no_graph_solution_passes():
    result = check("12.evaluate_no_graph", evaluate12_solution)
    assert result.passed, result.message


def test_evaluate_no_graph_detached_fails_because_it_recorded_a_graph():
    for args in _evaluate12_cases(torch.Generator().manual_seed(0)):
        assert not evaluate12_detached(*args).requires_grad  # the values alone look right
    result = check("12.evaluate_no_graph", evaluate12_detached)
    assert result.status == "failed"
    assert "recorded" in result.message and "torch.no_grad()" in result.message


# ------------------------------------------------------------------------------ contexts
@pytest.mark.parametrize(
    ("exercise_id", "context"),
    [
        ("09.second_derivative_tanh", "keep_graph"),
        ("09.third_derivative", "keep_graph"),
        ("12.keep_penalty_graph", "keep_graph"),
        ("11.gd_step", "no_graph"),
        ("11.evaluate", "no_graph"),
        ("12.evaluate_no_graph", "no_graph"),
    ],
)
def test_declared_context(exercise_id, context):
    assert get(exercise_id).context == context


def test_a_penalty_cut_off_by_item_fails_without_advice_to_cut_the_graph():
    def l2_penalty(model):
        return sum(p.pow(2).sum().item() for p in model.parameters())

    result = check("12.keep_penalty_graph", l2_penalty)
    assert result.status == "failed"
    assert ".detach()" not in result.message and "no_grad" not in result.message


# ---------------------------------------------------------------------- hidden values
@pytest.mark.parametrize(
    ("exercise_id", "wrong", "expected_text"),
    [
        ("09.grad_has_graph", (True, True), None),
        ("10.state_dict_keys", ("fc.bias", "fc.weight", "gain"), "running_mean"),
        ("11.loader_batches", (4, 32), None),
        ("12.broadcast_shape", (256, 1), "(256, 256)"),
    ],
)
def test_prediction_exercises_do_not_reveal_the_answer(exercise_id, wrong, expected_text):
    exercise = get(exercise_id)
    assert exercise.reveal_values is False
    result = check(exercise_id, wrong)
    assert result.status == "failed"
    shown = expected_text or repr(exercise.reference)
    assert shown not in result.message, result.message
