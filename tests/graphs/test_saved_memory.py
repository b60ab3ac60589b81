"""SavedTensorMeter counts what live autograd graphs saved for backward (lesson 07)."""

from __future__ import annotations

import pytest
import torch

from course_helpers import CourseError, SavedTensorMeter
from course_helpers.graphs.saved_memory import graph_nodes


def test_counts_a_saved_output_until_its_graph_is_freed():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    meter = SavedTensorMeter()
    with meter:
        y = x.exp()  # exp saves its result: 3 float32 values
    assert (meter.count, meter.nbytes) == (1, 12)
    del y
    assert (meter.count, meter.nbytes) == (0, 0)


def test_ignored_tensors_are_not_counted_and_a_shared_storage_counts_once():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    data = torch.tensor([3.0, 4.0])
    meter = SavedTensorMeter(ignore=[w, (data,)])
    with meter:
        h = torch.tanh(w * data)  # mul saves w and data (both ignored); tanh saves h
        out = h * h  # mul saves h twice more
    assert meter.count == 3  # h, saved by tanh and twice by the product
    assert meter.nbytes == 8  # one storage of two float32 values
    del h, out
    assert meter.count == 0


def test_backward_through_measured_graph_gives_the_usual_gradient():
    x = torch.tensor([0.5, -1.0], requires_grad=True)
    with SavedTensorMeter():
        y = (x.sin() * x).sum()
    y.backward()
    expected = x.detach().cos() * x.detach() + x.detach().sin()
    assert torch.allclose(x.grad, expected)


def test_nothing_is_saved_under_no_grad():
    x = torch.ones(4, requires_grad=True)
    meter = SavedTensorMeter()
    with meter, torch.no_grad():
        y = x.exp()
    assert meter.count == 0 and y.grad_fn is None


def test_report_prints_nodes_saved_tensors_and_bytes(capsys):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    meter = SavedTensorMeter()
    with meter:
        total = x.exp().sum()
    meter.report("one graph", total)
    line = capsys.readouterr().out
    assert line == "one graph      graph nodes=  3  saved tensors=  1  bytes=     8\n"


def test_graph_nodes_counts_each_node_once():
    x = torch.tensor(1.0, requires_grad=True)
    y = x * 2
    z = y + y  # AddBackward0 -> MulBackward0 (reached twice) -> AccumulateGrad
    assert graph_nodes(z) == 3
    assert graph_nodes(x) == 0 and graph_nodes(3.0) == 0


def test_bad_input_is_a_course_error():
    with pytest.raises(CourseError, match="expects tensors"):
        SavedTensorMeter(ignore=[torch.ones(1), "weights"])
    with pytest.raises(CourseError, match="expects tensors"):
        SavedTensorMeter(ignore=3)
    meter = SavedTensorMeter()
    with meter:
        with pytest.raises(CourseError, match="already measuring"):
            meter.__enter__()
