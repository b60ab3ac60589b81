"""Issue 23, item 11: bad seeds get a clear CourseError, never a silent change or traceback."""

import numpy as np
import pytest
import torch

from course_helpers import cpu_generator, setup_notebook
from course_helpers.errors import CourseError


@pytest.mark.parametrize("seed", [1.7, "3", None, True, -1, 2**64])
def test_cpu_generator_refuses_seeds_it_would_change_or_choke_on(seed):
    # cpu_generator(1.7) silently used seed 1
    with pytest.raises(CourseError, match="cpu_generator: the seed must be"):
        cpu_generator(seed)


@pytest.mark.parametrize("seed", [1.7, "0", -3, 2**32])
def test_setup_notebook_refuses_bad_seeds(seed):
    with pytest.raises(CourseError, match="setup_notebook: the seed must be"):
        setup_notebook(seed, compact_errors=False)


def test_whole_number_seeds_still_work():
    a = torch.rand(3, generator=cpu_generator(np.int64(7)))
    assert torch.equal(a, torch.rand(3, generator=cpu_generator(7)))
    setup_notebook(2**32 - 1, compact_errors=False)
    setup_notebook(0, compact_errors=False)
