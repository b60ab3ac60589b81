import shutil
import subprocess
import sys
from pathlib import Path

from machine import expected_device, release

from course_helpers.environment import doctor


def _by_name():
    return {f.name: f for f in doctor.findings()}


def test_report_is_accurate_on_this_machine():
    import shutil

    import torch

    found = _by_name()
    # the installed package's version; torch.__version__ may add a local tag (+cu130, +cpu)
    assert release(found["torch"].detail) == release(torch.__version__)
    assert found["CUDA"].detail.startswith("available" if torch.cuda.is_available() else "not")
    assert found["course device"].detail.split(" ", 1)[0] == expected_device()
    assert found["graphviz dot"].ok == (shutil.which("dot") is not None)


def test_versions_are_compared_without_their_local_tag():
    # what a CUDA wheel from PyPI reports: metadata 2.11.0, torch.__version__ 2.11.0+cu130
    assert release("2.11.0+cu130") == release("2.11.0") == "2.11.0"
    assert release("2.13.0+cpu") != release("2.11.0+cpu")


def test_a_gpu_is_reported_with_its_name_and_chosen(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a GPU machine, simulated
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    found = _by_name()
    assert found["CUDA"].detail == "available: NVIDIA H100 80GB HBM3 (CUDA 13.0)"
    assert found["course device"].detail == "cuda (a CUDA GPU is available)"


def test_missing_dot_is_a_note_with_the_install_fix(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    dot = _by_name()["graphviz dot"]
    assert not dot.ok and not dot.required
    assert "apt-get install graphviz" in dot.fix
    assert "NOTE" in dot.line()


def test_a_missing_required_package_fails_the_report(monkeypatch):
    real = doctor._version
    monkeypatch.setattr(doctor, "_version", lambda d: None if d == "ipywidgets" else real(d))
    text, ok = doctor.report()
    assert not ok
    assert "[PROBLEM] ipywidgets" in text and "fix: pip install 'ipywidgets>=7.7,<9'" in text


def test_an_invalid_course_device_is_reported(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "tpu")
    text, ok = doctor.report()
    assert not ok and "'tpu' is not a device type" in text


def test_command_line_exit_status():
    ok = subprocess.run(
        [sys.executable, "-m", "course_helpers", "doctor"], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout
    assert "Everything the course needs is present." in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "course_helpers", "doctor"],
        capture_output=True,
        text=True,
        env={"COURSE_DEVICE": "nope", "PATH": ""},
    )
    assert bad.returncode == 1


def test_unknown_command_is_a_usage_error():
    out = subprocess.run(
        [sys.executable, "-m", "course_helpers", "frobnicate"], capture_output=True, text=True
    )
    assert out.returncode == 2 and "unknown command 'frobnicate'" in out.stderr


def test_dot_turned_off_by_the_course_setting_is_reported(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setenv("COURSE_GRAPHVIZ", "off")
    dot = _by_name()["graphviz dot"]
    assert not dot.ok and dot.detail == "turned off by COURSE_GRAPHVIZ"


def test_every_runtime_dependency_is_in_the_report():
    import re

    import tomllib

    root = Path(__file__).resolve().parents[2]
    requirements = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower() for r in requirements}
    assert names <= set(doctor.PACKAGES)


def test_a_broken_ipywidgets_install_is_found_by_importing_it(monkeypatch, tmp_path):
    # metadata says installed; the import itself fails (a half-upgraded environment)
    (tmp_path / "ipywidgets").mkdir()
    (tmp_path / "ipywidgets" / "__init__.py").write_text("raise ImportError('half installed')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    found = _by_name()["ipywidgets import"]
    assert not found.ok and found.required
    assert "half installed" in found.detail
    assert "force-reinstall" in found.fix


def test_ipywidgets_imports_cleanly_here():
    assert _by_name()["ipywidgets import"].ok


def test_a_widget_extension_that_does_not_match_ipywidgets_is_a_problem(monkeypatch):
    monkeypatch.setattr(doctor, "_extension_requirement", lambda: "~=9.9.0")
    found = _by_name()["widget extension"]
    assert not found.ok
    assert "needs jupyterlab_widgets~=9.9.0" in found.detail
    assert "pip install 'jupyterlab_widgets~=9.9.0'" in found.fix


def test_the_installed_widget_extension_matches_ipywidgets():
    assert doctor._extension_requirement()  # ipywidgets 8 pins its extension
    assert _by_name()["widget extension"].ok


IPYWIDGETS_7_REQUIRES = [  # ipywidgets 7.7.1's metadata, as Colab has it (older spec form)
    "ipykernel (>=4.5.1)",
    "widgetsnbextension (~=3.6.0)",
    'jupyterlab-widgets (>=1.0.0) ; python_version>="3.6"',
    "pytest (>=3.6.0) ; extra == 'test'",
]


def test_ipywidgets_7s_extension_requirement_is_read(monkeypatch):
    monkeypatch.setattr(doctor.metadata, "requires", lambda dist: IPYWIDGETS_7_REQUIRES)
    assert doctor._extension_requirement() == ">=1.0.0"


def test_an_extension_for_jupyterlab_3_under_jupyterlab_4_is_a_problem(monkeypatch):
    # ipywidgets 7.7 accepts jupyterlab_widgets 1.x, which JupyterLab 4 cannot load
    real = doctor._version
    monkeypatch.setattr(doctor.metadata, "requires", lambda dist: IPYWIDGETS_7_REQUIRES)
    monkeypatch.setattr(
        doctor, "_version", lambda d: {"jupyterlab_widgets": "1.1.11"}.get(d) or real(d)
    )
    found = _by_name()["widget extension"]
    assert not found.ok and found.required
    assert "jupyterlab_widgets 1.1.11 is for JupyterLab 3" in found.detail
    assert "pip install 'jupyterlab_widgets>=3,<4'" in found.fix


def test_no_fix_in_the_report_asks_for_ipywidgets_8(monkeypatch):
    # the course supports ipywidgets 7.7 (Colab) and 8: no advice may upgrade 7.7 to 8
    monkeypatch.setattr(doctor, "_version", lambda d: None)
    fixes = [doctor.PACKAGES[d][1] for d in doctor.PACKAGES] + [doctor._widget_extension().fix]
    assert all("ipywidgets>=8" not in fix for fix in fixes), fixes
    assert "'ipywidgets>=7.7,<9'" in doctor.PACKAGES["ipywidgets"][1]


def test_on_colab_jupyterlab_is_not_needed_and_ipywidgets_7_is_right(monkeypatch):
    real = doctor._version
    versions = {"jupyterlab": None, "jupyterlab_widgets": None, "ipywidgets": "7.7.1"}
    monkeypatch.setattr(doctor, "_on_colab", lambda: True)
    monkeypatch.setattr(doctor, "_version", lambda d: versions[d] if d in versions else real(d))
    monkeypatch.setattr(doctor, "_ipywidgets_imports", lambda: doctor.Finding("x", True, ""))
    found = _by_name()
    assert not found["jupyterlab"].ok and not found["jupyterlab"].required
    assert "widget extension" not in found
    assert found["widget front end"].ok and "ipywidgets 7.7.1" in found["widget front end"].detail
    text, ok = doctor.report()
    assert ok, text


def test_on_colab_ipywidgets_8_is_a_note_with_the_fix(monkeypatch):
    real = doctor._version
    monkeypatch.setattr(doctor, "_on_colab", lambda: True)
    monkeypatch.setattr(doctor, "_version", lambda d: "8.1.9" if d == "ipywidgets" else real(d))
    found = _by_name()["widget front end"]
    assert not found.ok and not found.required
    assert "pip install 'ipywidgets>=7.7,<8'" in found.fix


def test_this_machine_is_not_colab():
    assert doctor._on_colab() is False
