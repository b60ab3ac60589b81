import random
import subprocess
import sys

import numpy as np
import torch

from course_helpers import cpu_generator, setup_notebook


def test_setup_seeds_every_generator():
    setup_notebook(seed=3)
    first = (random.random(), np.random.rand(), torch.rand(2))
    setup_notebook(seed=3)
    second = (random.random(), np.random.rand(), torch.rand(2))
    assert first[0] == second[0] and first[1] == second[1]
    assert torch.equal(first[2], second[2])


def test_setup_returns_the_course_device_and_prints_nothing(capsys):
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


def test_an_unavailable_course_device_warns_once_and_continues_on_the_cpu(monkeypatch, capsys):
    # cuda:99 is missing on every machine: no CUDA at all, or fewer than 100 GPUs
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
