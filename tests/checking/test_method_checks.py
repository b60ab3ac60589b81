"""Method checks (issue 12): a right value reached by a forbidden method does not pass."""

import ast
from unittest import mock

import pytest
import torch
from answer_cells import as_answer_cell, check_answer_cell
from torch import nn

from course_helpers import check
from course_helpers.checking import method_checks
from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.lessons import catalog, get


def predict_detached(weight, inputs):
    return (inputs @ weight).detach()


def predict_data(weight, inputs):
    with torch.no_grad():
        return inputs @ weight.data


def predict_solution(weight, inputs):
    with torch.no_grad():
        return inputs @ weight


def test_detach_after_the_forward_pass_fails_a_must_build_no_graph_function():
    result = check("07.predict_no_grad", predict_detached)
    assert result.status == "failed"
    assert "recorded" in result.message and "torch.no_grad()" in result.message
    assert ".detach()" not in result.message.replace("detached", "")  # no advice to detach


def test_data_fails_with_its_reason():
    result = check("07.predict_no_grad", predict_data)
    assert result.status == "failed"
    assert "`.data`" in result.message and "behind autograd's back" in result.message


def test_the_solution_passes_and_records_nothing():
    ex = get("07.predict_no_grad")
    submission = collect(ex, predict_solution)
    assert submission["method"] == {
        "checked": True,
        "where": "function source",
        "found": [],
        "missing": [],
        "graph_ops": 0,
    }
    assert judge(ex, submission).passed


def test_the_findings_travel_in_the_submission_and_survive_a_save():
    # the grader judges a saved submission outside the kernel: same verdict
    import io

    ex = get("07.predict_no_grad")
    submission = collect(ex, predict_detached)
    buffer = io.BytesIO()
    torch.save(submission, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    assert judge(ex, loaded).status == "failed"
    assert judge(ex, loaded).message == judge(ex, submission).message


EVAL_SETUP = """
torch.manual_seed(7)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
g = cpu_generator(7)
batches = [(torch.randn(10, 4, generator=g), torch.randn(10, 1, generator=g)) for _ in range(3)]
"""
EVAL_SOLUTION = """total = 0.0
with torch.no_grad():
    for xb, yb in batches:
        loss = nn.functional.mse_loss(model(xb), yb)
        total += loss.item()
mean_loss = total / len(batches)
answer = (mean_loss, loss)
"""
EVAL_DETACH = """total = 0.0
for xb, yb in batches:
    loss = nn.functional.mse_loss(model(xb), yb).detach()
    total += loss.item()
mean_loss = total / len(batches)
answer = (mean_loss, loss)
"""


def _run_cell(source: str):
    from course_helpers.environment.notebook import cpu_generator

    names = {"torch": torch, "nn": nn, "cpu_generator": cpu_generator}
    exec(EVAL_SETUP + source, names)
    return names["answer"]


def test_eval_loop_fix_with_detach_fails_and_names_no_grad():
    code = EVAL_SETUP + EVAL_DETACH + 'check("07.eval_loop_fix", answer)\n'
    with as_answer_cell(code):
        result = check("07.eval_loop_fix", _run_cell(EVAL_DETACH))
    assert result.status == "failed"
    assert "`.detach()`" in result.message and "with torch.no_grad():" in result.message


def test_eval_loop_fix_solution_passes_in_its_cell():
    code = EVAL_SETUP + EVAL_SOLUTION + 'check("07.eval_loop_fix", answer)\n'
    with as_answer_cell(code):
        result = check("07.eval_loop_fix", _run_cell(EVAL_SOLUTION))
    assert result.passed, result.message


def test_outside_ipython_the_cell_is_not_checked_and_nothing_fails_for_it():
    with mock.patch("IPython.get_ipython", return_value=None):
        submission = collect(get("07.eval_loop_fix"), _run_cell(EVAL_DETACH))
    assert submission["method"]["checked"] is False
    assert judge(get("07.eval_loop_fix"), submission).passed  # the values are right


RELU_DATA = """a = torch.tensor([-0.5, 0.2, 1.5], requires_grad=True)
h = torch.tanh(a)
h.data[h.data < 0] = 0
loss = (h**2).sum()
loss.backward()
answer = a
"""
RELU_SOLUTION = """a = torch.tensor([-0.5, 0.2, 1.5], requires_grad=True)
h = torch.tanh(a)
h = h.clamp(min=0.0)
loss = (h**2).sum()
loss.backward()
answer = a
"""


@pytest.mark.parametrize(("code", "passes"), [(RELU_DATA, False), (RELU_SOLUTION, True)])
def test_relu_fix_data_fails_and_the_solution_passes(code, passes):
    names = {"torch": torch}
    result = check_answer_cell("08.relu_fix", code, names)
    assert result.passed is passes, result.message
    if not passes:
        assert "`.data`" in result.message and "torch.no_grad()" in result.message


@pytest.mark.parametrize(
    ("source", "pattern", "found"),
    [
        ("y = x.squeeze()", "call:squeeze()", True),
        ("y = x.squeeze(1)", "call:squeeze()", False),
        ("y = x.detach()", "call:detach", True),
        ("# x.detach() in a comment\ny = x", "call:detach", False),
        ("w.data.mul_(2)", "attr:data", True),
        ("with torch.no_grad():\n    y = x", "with:no_grad", True),
        ("with torch.enable_grad():\n    y = x", "with:no_grad", False),
        ("y = a @ b", "op:matmul", True),
        ("a @= b", "op:matmul", True),
        ("y = a * b", "op:matmul", False),
        ("y = torch.matmul(a, b)", "call:matmul", True),
        ("y = a.mm(b)", "call:mm", True),
    ],
)
def test_patterns(source, pattern, found):
    assert (pattern in method_checks.uses(ast.parse(source), [pattern])) is found


def test_every_declared_pattern_has_a_reason_and_is_valid():
    for ex in catalog():
        for pattern in ex.forbid + ex.require:
            assert method_checks.valid_pattern(pattern), (ex.id, pattern)
            assert pattern in method_checks.WHY, (ex.id, pattern)


def test_a_missing_required_method_is_named_only_when_the_values_are_right():
    # "numbers typed by hand give the same grid" is true of a right grid, not of a wrong one
    ex = get("01.arange_grid")
    found = {"checked": True, "where": "answer cell", "found": [], "missing": ["call:arange"]}
    right = collect(ex, torch.arange(12).reshape(3, 4)) | {"method": dict(found, graph_ops=None)}
    wrong = collect(ex, torch.zeros(3, 4, dtype=torch.int64)) | {
        "method": dict(found, graph_ops=None)
    }
    assert "torch.arange" in judge(ex, right).message
    assert judge(ex, right).status == "failed"
    assert judge(ex, wrong).status == "failed"
    assert "torch.arange" not in judge(ex, wrong).message


TIMES_TABLE_MATMUL = "n = torch.arange(1, 6)\nanswer = n[:, None] @ n[None, :]\n"
TIMES_TABLE_BROADCAST = "n = torch.arange(1, 6)\nanswer = n[:, None] * n[None, :]\n"


def test_an_integer_matrix_product_is_not_accepted_for_the_times_table():
    # right values on the CPU, but CUDA has no integer matmul: the cell would fail on a GPU
    result = check_answer_cell("04.times_table", TIMES_TABLE_MATMUL, {"torch": torch})
    assert result.status == "failed"
    assert "The values are right, but not the way the task asks" in result.message
    assert "Your code uses `@`" in result.message
    assert "\"addmm_cuda\" not implemented for 'Long'" in result.message
    assert check_answer_cell("04.times_table", TIMES_TABLE_BROADCAST, {"torch": torch}).passed


# ------------------------------------------------------------------ issue 34: state in depth


def test_what_a_function_leaves_behind_is_named_and_put_back():
    from course_helpers.checking import left_behind

    def leaves_recording_off(x):
        torch.set_grad_enabled(False)
        return x

    state = left_behind.snapshot(leaves_recording_off)
    leaves_recording_off(torch.ones(1))
    assert left_behind.restore(state) == ["grad_mode_off"]
    assert torch.is_grad_enabled()


GLOBAL_STATS = torch.tensor([1.0, 2.0])


def _moves_a_global(x):
    global GLOBAL_STATS
    GLOBAL_STATS = GLOBAL_STATS.to(x.device) * 2
    return x


def _changes_a_global_in_place(x):
    GLOBAL_STATS.mul_(2)
    return x


def test_a_global_rebound_or_changed_in_place_is_named_and_put_back():
    from course_helpers.checking import left_behind

    before = GLOBAL_STATS
    for function, code in (
        (_moves_a_global, "global:GLOBAL_STATS"),
        (_changes_a_global_in_place, "global_tensor:GLOBAL_STATS"),
    ):
        state = left_behind.snapshot(function)
        function(torch.ones(1))
        assert left_behind.restore(state) == [code]
        assert GLOBAL_STATS is before and GLOBAL_STATS.tolist() == [1.0, 2.0]


def test_a_function_that_leaves_grad_mode_off_fails_even_with_the_right_values():
    def predict(weight, inputs):
        torch.set_grad_enabled(False)
        return inputs @ weight

    result = check("07.predict_no_grad", predict)
    assert result.status == "failed"
    assert "gradient recording was still off" in result.message
    assert torch.is_grad_enabled()


def test_the_training_flag_of_every_submodule_is_compared():
    from course_helpers.checking.submissions import _mutation

    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    before = model
    import copy

    after = copy.deepcopy(model)
    after.eval()
    after.training = True  # the module's own flag back, its children still in eval mode
    assert _mutation(before, after) == "training:1 (Dropout)"
    after.train()
    assert _mutation(before, after) == ""


def test_a_submission_records_grad_mode_for_a_cell_answer():
    ex = get("07.eval_loop_fix")
    with as_answer_cell(EVAL_SETUP + EVAL_SOLUTION):
        torch.set_grad_enabled(False)
        try:
            submission = collect(ex, _run_cell(EVAL_SOLUTION))
        finally:
            torch.set_grad_enabled(True)
    # recorded for every exercise now, with the statement that did it ("" here: the cell
    # read switches nothing, the test switched it)
    assert submission["notebook"] == {"grad_mode": False, "switch": ""}
    verdict = judge(ex, submission)
    assert verdict.status == "failed" and "switched off in your notebook" in verdict.message


def test_counted_calls_are_named_once_the_values_are_right():
    ex = get("06.accumulated_grad")

    def whole_batch(w, x, y, micro):
        w = w.clone().requires_grad_(True)
        ((x @ w - y) ** 2).mean().backward()
        return w.grad

    submission = collect(ex, whole_batch)
    assert [calls.get("backward", 0) for calls in submission["method"]["calls"]] == [1, 1, 1, 1]
    verdict = judge(ex, submission)
    assert verdict.status == "failed"
    assert (
        "For input 1, your function calls `backward()` once; the task asks for one backward() "
        "per micro-batch: 3 times here."
    ) in verdict.message


def test_rows_counted_by_the_launcher_show_a_sample_evaluated_twice(monkeypatch):
    from course_helpers.environment import two_ranks

    ex = get("13.exact_evaluation")
    right = ex.reference
    monkeypatch.setattr(two_ranks, "LAST_RUN", {"main": "evaluate", "rows": [5, 5]})
    verdict = judge(ex, collect(ex, right))
    assert verdict.status == "failed" and "10 rows in all, for 5 samples" in verdict.message
    monkeypatch.setattr(two_ranks, "LAST_RUN", {"main": "evaluate", "rows": [3, 2]})
    assert judge(ex, collect(ex, right)).passed


def test_rows_of_a_run_in_another_cell_are_not_held_against_the_answer(monkeypatch):
    from course_helpers.environment import two_ranks

    ex = get("13.exact_evaluation")
    monkeypatch.setattr(two_ranks, "LAST_RUN", {"main": "other", "rows": [5, 5], "cell": 41})
    monkeypatch.setattr(two_ranks, "execution_count", lambda: 42)
    submission = collect(ex, ex.reference)
    assert submission["method"]["rank_rows"] is None
    assert judge(ex, submission).passed


def test_a_forbidden_pattern_names_only_the_alternatives_the_code_holds():
    code = (
        "a = torch.tensor(1.5, requires_grad=True)\nb = torch.tensor(-2.0, requires_grad=True)\n"
        "(a**2 * b + b).backward()\nanswer = torch.stack([a.grad, b.grad])\n"
    )
    result = check_answer_cell("05.hand_chain_rule", code, {"torch": torch})
    assert result.status == "failed"
    # the lead-in says what the code holds, as the evidence lines do ("calls `backward`")
    assert "Your code calls `backward` and uses `.grad`: the task asks for the derivatives" in (
        result.message
    )
    assert "jacobian" not in result.message and result.message.count("worked out by hand") == 1
