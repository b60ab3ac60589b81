"""Context-aware advice (issue 12): feedback never advises against the task."""

import dataclasses

import torch

from course_helpers.checking import diagnosis as dx
from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.lessons.model import Exercise


def _autograd(reference, context="", attributes=("requires_grad",)):
    return Exercise(
        id="99.context",
        title="context",
        lesson="99_test",
        kind="autograd",
        build_reference=reference,
        hints=("a", "b", "c"),
        solution="answer = x",
        attributes=attributes,
        context=context,
    )


def _no_graph_loss():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        return (w * 3).sum()


def _penalty():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    return (w**2).sum()


def _verdict(exercise, answer):
    return judge(exercise, collect(exercise, answer))


def test_no_graph_exercise_never_advises_detach():
    ex = _autograd(_no_graph_loss, context="no_graph")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    verdict = _verdict(ex, (w * 3).sum())
    assert verdict.status == "failed"
    assert "torch.no_grad()" in verdict.message
    assert "Use .detach()" not in verdict.message  # (advice is a sentence of its own now)
    # without the context the general advice (which may name .detach()) is kept
    general = _verdict(dataclasses.replace(ex, context=""), (w * 3).sum())
    assert "Use .detach()" in general.message


def test_keep_graph_exercise_never_advises_a_new_leaf_or_no_grad():
    ex = _autograd(_penalty, context="keep_graph")
    cut_off = torch.tensor(5.0)  # rebuilt from .item() values
    verdict = _verdict(ex, cut_off)
    assert verdict.status == "failed"
    assert "stay connected" in verdict.message
    assert "create it with requires_grad=True" not in verdict.message
    assert "inside `with torch.no_grad():`" not in verdict.message


def _nonleaf_with_grad():
    a = torch.tensor(2.0, requires_grad=True)
    u = a * 3
    u.retain_grad()
    (u * u).backward()
    return u


def test_grad_none_on_a_non_leaf_names_retain_grad_before_backward():
    ex = _autograd(_nonleaf_with_grad, attributes=("grad",))
    a = torch.tensor(2.0, requires_grad=True)
    u = a * 3
    (u * u).backward()
    u.retain_grad()  # too late
    verdict = _verdict(ex, u)
    assert verdict.status == "failed"
    assert "not a leaf" in verdict.message and "before backward()" in verdict.message
    assert "too late" in verdict.message


def test_grad_none_on_a_leaf_says_backward_did_not_reach_it():
    ex = _autograd(_nonleaf_with_grad, attributes=("grad",))
    leaf = torch.tensor(6.0, requires_grad=True)
    message = _verdict(ex, leaf).message
    assert "backward() has not reached it" in message and "retain_grad" not in message


def test_wrong_number_for_a_0dim_tensor_does_not_suggest_that_number():
    exp = dx.describe(torch.tensor(12.000001, dtype=torch.float64))
    wrong = dx.diagnose(13.0, torch.tensor(12.000001, dtype=torch.float64))
    assert "torch.tensor(13" not in wrong.message
    assert "not the expected one" in wrong.message
    right = dx.diagnose(2.5, torch.tensor(2.5, dtype=torch.float64))
    assert "torch.tensor(2.5, dtype=torch.float64)" in right.message
    assert exp["shape"] == ()


def test_wrong_value_of_another_dtype_is_not_blamed_on_precision():
    verdict = dx.diagnose(torch.tensor([1.0, 5.0]), torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert "the values themselves are wrong" in verdict.message
    assert "from the start" not in verdict.message
    # a real precision gap still gets the precision advice
    near = dx.diagnose(
        torch.tensor([1 / 3], dtype=torch.float16), torch.tensor([1 / 3], dtype=torch.float64)
    )
    assert "from the start" in near.message


def test_function_fixes_hold_for_every_input():
    x = dx.describe(torch.ones(3, 4, 5, dtype=torch.float64))
    got = torch.zeros(3, 4, 5, dtype=torch.float32)
    exp = torch.zeros(3, 4, 5, dtype=torch.float64)
    dtype = dx.diagnose(got, exp, inputs=(x,), in_function=True).message
    assert "keep the input's dtype" in dtype
    assert "dtype=torch.float64" not in dtype and ".double()" not in dtype
    shape = dx.diagnose(
        torch.zeros(60), torch.zeros(1, 3, 4, 5), inputs=(x,), in_function=True
    ).message
    assert ".reshape(1, 3, 4, 5)" not in shape and "every input" in shape
    # outside a function the concrete fix is still given
    assert ".reshape(1, 3, 4, 5)" in dx.diagnose(torch.zeros(60), torch.zeros(1, 3, 4, 5)).message


def test_unknown_context_is_refused_with_a_clear_message():
    try:
        _autograd(_penalty, context="nograd")
    except ValueError as err:
        assert "context='nograd'" in str(err)
    else:
        raise AssertionError("an unknown context was accepted")
