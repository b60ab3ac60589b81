import pytest
import torch

import course_helpers
from course_helpers.environment import device as device_module
from course_helpers.errors import CourseError


def test_cpu_only_machine_gets_cpu(monkeypatch):
    monkeypatch.setattr(device_module, "available_devices", lambda: ["cpu"])
    assert course_helpers.get_device() == torch.device("cpu")
    assert device_module.device_choice()[1] == "no CUDA GPU or Apple MPS found"


def test_cuda_is_preferred_over_mps_and_cpu(monkeypatch):
    monkeypatch.setattr(device_module, "available_devices", lambda: ["cuda", "mps", "cpu"])
    assert device_module.device_choice() == ("cuda", "a CUDA GPU is available")


def test_mps_is_chosen_without_cuda(monkeypatch):
    monkeypatch.setattr(device_module, "available_devices", lambda: ["mps", "cpu"])
    assert device_module.device_choice()[0] == "mps"


def test_available_devices_matches_torch():
    found = device_module.available_devices()
    assert found[-1] == "cpu"
    assert ("cuda" in found) == torch.cuda.is_available()


def test_env_var_overrides(monkeypatch):
    monkeypatch.setattr(device_module, "available_devices", lambda: ["cuda", "cpu"])
    monkeypatch.setenv("COURSE_DEVICE", "CPU")
    assert course_helpers.get_device() == torch.device("cpu")
    assert device_module.device_choice()[1] == "set by COURSE_DEVICE"


def test_env_var_with_unknown_device_names_what_is_available(monkeypatch):
    monkeypatch.setattr(device_module, "available_devices", lambda: ["cpu"])
    monkeypatch.setenv("COURSE_DEVICE", "tpu")
    with pytest.raises(CourseError, match=r"'tpu' is not a device type.*cpu \(available here\)"):
        course_helpers.get_device()


def test_env_var_with_unavailable_device_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(device_module, "available_devices", lambda: ["cpu"])
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    with pytest.raises(CourseError, match="CUDA, which is not available.*Available here: cpu"):
        course_helpers.get_device()


def test_cuda_index_out_of_range(monkeypatch):
    monkeypatch.setattr(device_module, "available_devices", lambda: ["cuda", "cpu"])
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("COURSE_DEVICE", "cuda:3")
    with pytest.raises(CourseError, match="cuda:0 .. cuda:0"):
        course_helpers.get_device()
