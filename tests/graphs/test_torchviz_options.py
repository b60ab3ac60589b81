"""Issue 23, item 11: an unknown torchviz_graph option is a CourseError, not a TypeError."""

import pytest
import torch

from course_helpers import torchviz_graph
from course_helpers.errors import CourseError


def test_an_unknown_option_names_the_options_make_dot_takes():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(CourseError, match="unknown option.*colour.*show_attrs"):
        torchviz_graph((x * 2).sum(), colour="red")
