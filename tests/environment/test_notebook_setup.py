import random
import subprocess
import sys

import numpy as np
import pytest
import torch
from answer_cells import run_in_kernel
from machine import expected_device

from course_helpers import cpu_generator, setup_notebook


def test_setup_seeds_every_generator():
    setup_notebook(seed=3)
    first = (random.random(), np.random.rand(), torch.rand(2))
    setup_notebook(seed=3)
    second = (random.random(), np.random.rand(), torch.rand(2))
    assert first[0] == second[0] and first[1] == second[1]
    assert torch.equal(first[2], second[2])


def test_setup_returns_the_course_device_and_prints_nothing(capsys):
    # CUDA on a GPU machine, the CPU on a machine without one (COURSE_DEVICE is unset here)
    assert setup_notebook() == torch.device(expected_device())
    assert capsys.readouterr() == ("", "")


def test_setup_picks_a_gpu_that_torch_sees_and_the_cpu_when_asked(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a GPU machine, simulated
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert setup_notebook() == torch.device("cuda")
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert setup_notebook() == torch.device("cpu")
    assert capsys.readouterr() == ("", "")


def test_cpu_generator_is_reproducible_and_on_cpu():
    g1, g2 = cpu_generator(7), cpu_generator(7)
    assert g1.device.type == "cpu"
    assert torch.equal(torch.randn(5, generator=g1), torch.randn(5, generator=g2))


def test_print_options_are_short():
    setup_notebook()
    assert repr(torch.tensor([1 / 3])) == "tensor([0.3333])"


def test_import_is_cheap_and_has_no_side_effects():
    code = (
        "import sys, course_helpers\n"
        "heavy = [m for m in ('torch', 'matplotlib', 'ipywidgets', 'graphviz', 'torchviz', 'numpy')"
        " if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert out.stderr == ""


def test_public_names_resolve():
    import course_helpers

    for name in course_helpers.__all__:
        assert callable(getattr(course_helpers, name))


@pytest.mark.parametrize("gpus", [None, 1], ids=["this machine", "a machine with one GPU"])
def test_an_unavailable_course_device_warns_once_and_continues_on_the_cpu(
    gpus, monkeypatch, capsys
):
    # cuda:99 is missing on every machine: no CUDA at all, or fewer than 100 GPUs
    if gpus is not None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    monkeypatch.setenv("COURSE_DEVICE", "cuda:99")
    assert setup_notebook() == torch.device("cpu")
    out, err = capsys.readouterr()
    assert out == ""
    assert "COURSE_DEVICE='cuda:99'" in err
    assert "continues on the CPU" in err
    assert len(err.strip().splitlines()) == 2  # one message, no traceback


def test_a_misspelt_course_device_is_named_and_the_cpu_used(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_DEVICE", "gpu")
    assert setup_notebook() == torch.device("cpu")
    assert "is not a device type" in capsys.readouterr().err


def _run_cells(sources, env=None):
    import os
    import re

    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        nb = run_in_kernel(sources, allow_errors=True)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    errors = []
    for cell in nb.cells:
        for output in cell.outputs:
            if output.output_type == "error":
                text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(output.traceback))
                errors.append((output.ename, output.evalue, text))
    return errors


ERROR_CELLS = [
    "import torch\nfrom course_helpers import setup_notebook\ndevice = setup_notebook()",
    # an error raised inside torch's own Python code, called from a learner's function
    "def run_twice(x):\n    y = (x * 2).sum()\n    y.backward()\n    y.backward()\n\n\n"
    "run_twice(torch.ones(3, requires_grad=True))",
    # the same error, chained to another one
    "try:\n    run_twice(torch.ones(3, requires_grad=True))\nexcept RuntimeError as err:\n"
    "    raise ValueError('the graph was freed') from err",
]


def test_setup_shows_errors_without_torch_internals_but_with_the_whole_message():
    errors = _run_cells(ERROR_CELLS)
    assert len(errors) == 2
    (ename, evalue, text), (chained_name, chained_value, chained) = errors
    assert ename == "RuntimeError"  # what nbval compares is untouched
    assert evalue.startswith("Trying to backward through the graph a second time")
    assert f"RuntimeError: {evalue}" in text  # the whole message
    assert "----> 7 run_twice(torch.ones(3, requires_grad=True))" in text  # the learner's lines
    assert "----> 4     y.backward()" in text
    assert "site-packages" not in text and "torch/" not in text
    assert text.rstrip().endswith("frames inside torch hidden; run %tb to see the full traceback)")
    assert (chained_name, chained_value) == ("ValueError", "the graph was freed")
    assert f"RuntimeError: {evalue}" in chained and "----> 4     y.backward()" in chained
    assert "site-packages" not in chained


def test_full_tracebacks_on_request():
    ((_, _, full),) = _run_cells(ERROR_CELLS[:2], env={"COURSE_TRACEBACKS": "full"})
    assert "site-packages/torch" in full and "hidden" not in full


def test_library_frames_are_told_from_the_learners():
    import torch

    from course_helpers.environment.tracebacks import _library, _library_dirs, hidden_note

    dirs = _library_dirs()
    assert _library(torch.__file__, dirs) == "torch"
    assert _library(__file__, dirs) == ""  # a file of the learner's (here: this test)
    assert _library("/tmp/ipykernel_12/345.py", dirs) == ""  # a notebook cell
    assert _library("<ipython-input-3>", dirs) == ""
    assert _library(random.__file__, dirs) == "Python's standard library"
    assert _library("/x/lib/python3.11/site-packages/six.py", dirs) == "six"
    assert hidden_note({"torch": 3, "numpy": 1}) == (
        "(4 frames inside torch, numpy hidden; run %tb to see the full traceback)"
    )
