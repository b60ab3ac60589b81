"""Issue 23, item 15: an unavailable COURSE_DEVICE gets one decision, applied everywhere."""

import torch

import course_helpers
from course_helpers.environment import device as device_module


def test_after_setup_notebook_chose_the_cpu_get_device_agrees(monkeypatch, capsys):
    # setup_notebook warned and went on on the CPU, then lesson 02 cells 43-44 and lesson 11
    # cell 23 called get_device() and raised
    monkeypatch.setattr(device_module, "_fell_back_from", None)
    monkeypatch.setenv("COURSE_DEVICE", "cuda:99")  # missing on every machine
    assert course_helpers.setup_notebook(compact_errors=False) == torch.device("cpu")
    assert "continues on the CPU" in capsys.readouterr().err
    assert course_helpers.get_device() == torch.device("cpu")


def test_a_later_different_value_is_judged_afresh(monkeypatch):
    import pytest

    from course_helpers.errors import CourseError

    monkeypatch.setattr(device_module, "_fell_back_from", "cuda:99")
    monkeypatch.setattr(device_module, "available_devices", lambda: ["cpu"])
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    with pytest.raises(CourseError, match="not available"):
        course_helpers.get_device()
