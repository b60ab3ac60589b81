"""What the method checks read (issue 34, item 4): the cells run for an exercise, the check's
cell, a function with the helpers it calls; and the pattern language they read it with."""

from __future__ import annotations

import ast
from unittest import mock

import pytest
import torch

from course_helpers.checking import answer_code
from course_helpers.checking.code_patterns import shown, uses, valid_pattern


class FakeShell:
    """An IPython shell whose input history grows as cells run."""

    def __init__(self):
        self.history_manager = mock.Mock()
        self.history_manager.input_hist_raw = [""]

    def run(self, source: str, check_id: str | None = None) -> list[str]:
        """Run a cell; when it checks ``check_id``, the cells read for that check."""
        self.history_manager.input_hist_raw.append(source)
        if check_id is None:
            return []
        cells = answer_code.cells_run(check_id)
        answer_code.note_check(check_id)
        return cells


@pytest.fixture
def shell():
    answer_code.forget()
    fake = FakeShell()
    with mock.patch("IPython.get_ipython", return_value=fake):
        yield fake
    answer_code.forget()


def test_the_cells_since_the_last_check_of_another_exercise_are_read(shell):
    shell.run("import torch")
    assert shell.run("answer = 1; check('01.a', answer)", "01.a") == [
        "import torch",
        "answer = 1; check('01.a', answer)",
    ]
    shell.run("u.register_hook(h)")
    cells = shell.run("f.backward(); check('05.b', a)", "05.b")
    assert cells == ["u.register_hook(h)", "f.backward(); check('05.b', a)"]


def test_a_second_attempt_that_reruns_only_the_check_cell_reads_like_the_first(shell):
    shell.run("u.register_hook(h)")
    first = shell.run("check('05.b', a)", "05.b")
    again = shell.run("check('05.b', a)", "05.b")  # unchanged: counted once
    assert first == again == ["u.register_hook(h)", "check('05.b', a)"]
    edited = shell.run("f.backward()\ncheck('05.b', a)", "05.b")
    assert edited[0] == "u.register_hook(h)" and edited[-1].startswith("f.backward()")


def test_an_earlier_attempt_of_the_same_exercise_no_longer_counts(shell):
    """r4 walkthrough #1/#14/#25: a required call made in an earlier, failed attempt (the
    same cell before it was edited) does not count for the answer checked now."""
    shell.run("answer = torch.arange(12).reshape(4, 3)\ncheck('01.a', answer)", "01.a")
    typed = "answer = torch.tensor([[0, 1, 2, 3]])\ncheck('01.a', answer)"
    assert shell.run(typed, "01.a") == [typed]


def test_a_cell_before_the_attempts_still_counts_after_the_check_cell_is_edited(shell):
    shell.run("u.register_hook(h)")
    shell.run("f = u + a\ncheck('05.b', a)", "05.b")  # forgot backward()
    edited = "f = u + a\nf.backward()\ncheck('05.b', a)"
    assert shell.run(edited, "05.b") == ["u.register_hook(h)", edited]


def test_a_cell_that_only_checks_again_reads_the_attempt_that_built_the_answer(shell):
    built = "answer = torch.arange(12).reshape(3, 4)\ncheck('01.a', answer)"
    shell.run("answer = torch.zeros(3)\ncheck('01.a', answer)", "01.a")
    shell.run(built, "01.a")
    assert shell.run("check('01.a', answer)", "01.a") == [built, "check('01.a', answer)"]


def test_after_another_exercise_s_check_the_earlier_cells_no_longer_count(shell):
    shell.run("u.register_hook(h)")
    shell.run("check('05.b', a)", "05.b")
    shell.run("check('05.c', x)", "05.c")
    assert shell.run("check('05.b', a)", "05.b") == ["check('05.b', a)"]


def test_outside_ipython_nothing_is_read():
    answer_code.forget()
    with mock.patch("IPython.get_ipython", return_value=None):
        assert answer_code.cells_run("01.a") == []
        assert answer_code.check_cell() == ""
        answer_code.note_check("01.a")  # no error


def _helper(x):
    return x.detach()


def _calls_a_helper(x):
    return _helper(x) * 2


def test_a_function_is_read_with_the_notebook_functions_it_calls():
    sources = answer_code.function_sources(_calls_a_helper)
    assert [s.splitlines()[0] for s in sources] == [
        "def _calls_a_helper(x):",
        "def _helper(x):",
    ]
    assert answer_code.function_sources(torch.relu) == []  # torch's own code is not read


@pytest.mark.parametrize(
    ("source", "pattern", "found"),
    [
        ("y = [c * 2 for c in x.tolist()]", "loop:python", True),
        ("y = x.clone().apply_(lambda c: c * 2)", "loop:python", True),
        ("for row in x:\n    pass", "loop:python", True),
        ("y = list(map(f, x))", "loop:python", True),
        ("y = x * 9 / 5 + 32", "loop:python", False),
        ("a.backward()\nb.backward()", "many:backward", True),
        ("for loss in losses:\n    loss.backward()", "many:backward", True),
        ("(a + b).backward()", "many:backward", False),
        ("a.backward(retain_graph=True)", "kw:backward|grad.retain_graph", True),
        ("a.backward(retain_graph=False)", "kw:backward|grad.retain_graph", False),
        ("torch.autograd.grad(l, w, retain_graph=True)", "kw:backward|grad.retain_graph", True),
        ("torch.autograd.grad(l, w, create_graph=True)", "kw:backward.create_graph", False),
        ("l.backward(create_graph=True)", "kw:backward.create_graph", True),
        ("@torch.no_grad()\ndef f(x):\n    return x", "with:no_grad", True),
        ("with torch.set_grad_enabled(False):\n    y = x", "with:no_grad", True),
        ("with torch.set_grad_enabled(True):\n    y = x", "with:no_grad", False),
        ("@torch.inference_mode()\ndef f(x):\n    return x", "with:no_grad|inference_mode", True),
        ("dist.monitored_barrier()", "call:barrier|monitored_barrier", True),
        ("y = torch.cdist(a, b) ** 2", "call:cdist", True),
        ("d = math.isfinite(x)", "call:isfinite", False),
    ],
)
def test_the_patterns(source, pattern, found):
    assert valid_pattern(pattern)
    assert (pattern in uses(ast.parse(source), [pattern])) is found


def test_patterns_read_as_a_learner_reads_them():
    assert shown("loop:python") == "a Python loop"
    assert shown("many:backward|grad") == "`.backward()` or `.grad()` more than once"
    assert shown("kw:backward.create_graph") == "`backward(create_graph=...)`"
    assert not valid_pattern("loop:anything") and not valid_pattern("kw:backward.")


def test_the_grader_reads_the_cells_run_for_an_exercise_the_same_way(tmp_path):
    # the grader replays the notebook in its own kernel and judges the records it wrote: a
    # hook one cell before the check passes there too, autograd in a by-hand cell does not
    import nbformat

    from course_helpers.grading.grade import grade_notebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(source)
        for source in (
            "import torch\nfrom course_helpers import check",
            "a = torch.tensor(2.0, requires_grad=True)\nu = a**2\nu.register_hook(lambda g: g / 2)",
            'f = u + 3 * a\nf.backward()\ncheck("05.hook_halve", a)',
            "a = torch.tensor(1.5, requires_grad=True)\n"
            "b = torch.tensor(-2.0, requires_grad=True)\n(a**2 * b + b).backward()\n"
            'check("05.hand_chain_rule", torch.stack([a.grad, b.grad]))',
        )
    ]
    path = tmp_path / "05_autograd_graphs.ipynb"
    nbformat.write(nb, path)
    grade = grade_notebook(str(path), timeout=60)
    by_id = {e.exercise_id: e for e in grade.exercises}
    assert grade.run == "completed"
    assert by_id["05.hook_halve"].status == "passed"
    assert by_id["05.hand_chain_rule"].status == "failed"
    assert "worked out by hand" in by_id["05.hand_chain_rule"].message


def test_a_keyword_pattern_without_a_call_finds_the_keyword_in_any_call():
    assert valid_pattern("kw:retain_graph")
    tree = ast.parse("torch.autograd.grad(l, w, retain_graph=True)")
    assert "kw:retain_graph" in uses(tree, ["kw:retain_graph"])
    assert "kw:backward.retain_graph" not in uses(tree, ["kw:backward.retain_graph"])


def test_the_answer_s_own_code_is_still_offered_to_other_readers():
    from course_helpers.checking import method_checks
    from course_helpers.lessons import get

    text, where = method_checks._source_of(get("01.celsius_to_fahrenheit"), _calls_a_helper)
    assert where == "function source" and text.startswith("def _calls_a_helper")
    assert method_checks._parse("x = 1") is not None


def test_a_plain_name_imported_from_torch_counts_as_its_call():
    tree = ast.parse("from torch.autograd import grad\n(d1,) = grad(y, x, create_graph=True)")
    assert "call:grad" in uses(tree, ["call:grad"])
    # a function of the learner's own that happens to share the name does not count
    assert "call:step" not in uses(ast.parse("def step(w):\n    pass\nstep(w)"), ["call:step"])


# a learner's attempts in a real kernel (r4 walkthrough #1, #14, #25): after tries with the
# right tool, typed numbers are read as typed numbers; a split answer still counts
ATTEMPTS = [
    "import os\nos.environ['COURSE_PROGRESS'] = 'off'\n"
    "import torch\nfrom course_helpers import check",
    "answer = torch.arange(12).reshape(4, 3)\ncheck('01.arange_grid', answer)",
    "answer = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])\n"
    "check('01.arange_grid', answer)",
    "a = torch.tensor(2.0, requires_grad=True)\nu = a**2\na.register_hook(lambda g: g / 2)\n"
    "f = u + 3 * a\nf.backward()\nanswer = a\ncheck('05.hook_halve', answer)",
    "a = torch.tensor(2.0, requires_grad=True)\nu = a**2\nf = u + 3 * a\nf.backward()\n"
    "a.grad = torch.tensor(5.0)\nanswer = a\ncheck('05.hook_halve', answer)",
    "a = torch.tensor(2.0, requires_grad=True)\nu = a**2\nu.register_hook(lambda g: g / 2)",
    "f = u + 3 * a\nanswer = a\ncheck('05.hook_halve', answer)",  # forgot backward()
    "f = u + 3 * a\nf.backward()\nanswer = a\ncheck('05.hook_halve', answer)",
    "x = torch.tensor(1.5, requires_grad=True)\n"
    "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\n"
    "d1.backward()\nanswer = x\ncheck('09.third_derivative', answer)",
    "x = torch.tensor(1.5, requires_grad=True)\n"
    "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\n"
    "(d2,) = torch.autograd.grad(d1, x, create_graph=True)\nx.grad = torch.tensor(36.0)\n"
    "answer = x\ncheck('09.third_derivative', answer)",
]


def test_typed_numbers_after_a_try_with_the_right_tool_are_read_as_typed_in_a_real_kernel():
    from answer_cells import run_in_kernel

    nb = run_in_kernel(ATTEMPTS)
    shown = [
        "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in c.outputs)
        for c in nb.cells
    ]
    assert "Not yet" in shown[1] and "Not yet" in shown[3]  # the tries with the right tool
    assert "not the way the task asks" in shown[2] and "torch.arange" in shown[2]
    assert "not the way the task asks" in shown[4] and "a hook on u" in shown[4]
    assert "✓ Passed" in shown[7], shown[7]  # the hook one cell earlier still counts
    assert "Not yet" in shown[8]
    assert "not the way the task asks" in shown[9] and "`.backward()`" in shown[9]
