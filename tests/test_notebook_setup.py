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
