"""Issue 24 (5): an unanswered stub never replaces a function or class that an earlier cell
defines: the build refuses it unless the stub is decorated with ``@repair``."""

from __future__ import annotations

import nbformat
import pytest

from course_helpers.authoring.stubs import MarkerError, make_exercise_notebook

SCRIPT = "def train(steps):\n    return steps\n\n\nclass Model:\n    size = 1\n"


def _notebook(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return nb


@pytest.mark.parametrize(
    "answer",
    [
        "def train(steps):\n    ### BEGIN SOLUTION\n    return 2 * steps\n    ### END SOLUTION\n",
        "### BEGIN SOLUTION\nclass Model:\n    size = 2\n### END SOLUTION\n",
    ],
)
def test_a_stub_that_would_shadow_the_script_is_refused(answer):
    with pytest.raises(MarkerError, match="earlier cell defines"):
        make_exercise_notebook(_notebook(SCRIPT, answer), name="nb")


def test_a_repair_stub_is_accepted_and_keeps_its_decorator():
    answer = (
        "@repair\nclass Model:\n    ### BEGIN SOLUTION\n    size = 2\n    ### END SOLUTION\n\n\n"
        "@repair\ndef train(steps):\n    ### BEGIN SOLUTION\n    return 2 * steps\n"
        "    ### END SOLUTION\n"
    )
    nb = make_exercise_notebook(_notebook(SCRIPT, answer), name="nb")
    assert nb.cells[1].source.count("@repair") == 2
    assert "...  # YOUR CODE HERE" in nb.cells[1].source


def test_repair_keeps_the_earlier_version_until_a_body_is_written():
    from course_helpers import repair, unanswered

    def helper():
        return "script"

    namespace = {"helper": helper, "repair": repair}
    exec("@repair\ndef helper():\n    ...\n", namespace)
    assert namespace["helper"]() == "script" and unanswered(namespace["helper"])
    exec("@repair\ndef helper():\n    return 'mine'\n", namespace)
    assert namespace["helper"]() == "mine" and not unanswered(namespace["helper"])
