"""The r4 walkthrough's findings about the checking internals
(numbered as that beginner walkthrough found them; its scripts are in benchmarks/walkthrough/).

A verdict says what was observed; its generic advice holds for this exercise
(``Exercise.context``, ``must_build_no_graph``) and gives way to a more specific line (a
catalogued misconception, a method note) instead of coming before it and contradicting it.
Each test names the finding it covers; each failed on the code before the fix.
"""

from __future__ import annotations

import torch
from answer_cells import check_answer_cell, run_in_kernel

from course_helpers import check
from course_helpers.checking import diagnosis as dx
from course_helpers.lessons import get

# ------------------------------------------------------------------ learners' functions


def mean_of_counts(counts):
    return counts.double().mean()


def as_batch_len(x):
    if len(x) == 3:  # the size of dim 0, not the number of dims
        return x.unsqueeze(0)
    return x


def flatten_images(batch):
    return batch.flatten()


def pairwise_sq_dists(a, b):
    return torch.cdist(a, b)


def predict(weight, inputs):
    return inputs @ weight


def first_derivative_with_its_graph(x):
    x = x.detach().requires_grad_()
    (d1,) = torch.autograd.grad(torch.tanh(x).sum(), x, create_graph=True)
    return d1


def l2_penalty(model):
    return torch.tensor(sum(p.pow(2).sum().item() for p in model.parameters()))


# ------------------------------------------------------------------ helpers


def _hook_graph():
    a = torch.tensor(2.0, requires_grad=True)
    u = a**2
    u.register_hook(lambda g: g / 2)
    f = u + 3 * a
    f.backward()
    return a, u


def _paragraphs(message: str) -> list[str]:
    return [line for line in message.splitlines() if line.strip()]


# ------------------------------------------------------------------ findings


def test_4_a_dtype_not_taken_from_the_input_is_not_said_to_be():
    message = check("02.mean_of_counts", mean_of_counts).message
    assert "has dtype torch.float64 but torch.float32 is expected" in message
    assert "this one input's dtype" not in message and "own dtype" not in message


def test_5_an_explanation_continuing_a_sentence_is_not_glued_on_a_new_line():
    for answer in (-10, 245):
        message = check("02.uint8_wrap", answer).message
        lines = _paragraphs(message)
        assert not any(line[:1].islower() for line in lines), message
        assert "Work through it again by hand" not in message  # the explanation says how


def test_8_a_shape_in_another_arrangement_names_no_reshape_the_code_may_not_have():
    pairs = get("03.pair_columns").reference
    message = check("03.pair_columns", torch.cat([pairs[:, 0], pairs[:, 1]])).message
    assert "right number of elements (6) in a different shape" in message
    assert "reshape" not in message and "view" not in message.split("\n")[0]


def test_10_a_missing_dimension_is_not_blamed_on_a_step_that_drops_it():
    message = check("03.as_batch", as_batch_len).message
    assert "missing the size-1 dimension at dim 0" in message
    assert "input's own shape" in message
    assert "squeeze" not in message and "integer index" not in message
    assert "drops it" not in message


def test_11_a_catalogued_mistake_replaces_the_generic_list_of_mechanisms():
    message = check("03.flatten_images", flatten_images).message
    assert "a reduction over the wrong dim" not in message
    assert "reshaping its result" not in message  # the misconception line says more
    assert "batch dimension" in message


def test_13_the_method_note_joins_the_cause_that_names_the_same_call():
    message = check("04.pairwise_sq_dists", pairwise_sq_dists).message
    assert "`.cdist()`" not in message  # the code calls torch.cdist(a, b): a function
    assert message.count("Your code calls `cdist`") == 1
    cause = next(p for p in _paragraphs(message) if p.startswith("Your code calls `cdist`"))
    assert "built with broadcasting" in cause  # the task's reason, in the same paragraph


def test_15_a_gradient_handed_in_is_not_told_it_is_the_intermediate():
    a, _ = _hook_graph()
    message = check("05.hook_halve", a.grad).message
    assert "not its .grad" in message
    assert "Your answer is u" not in message


def test_16_an_intermediate_handed_in_is_not_also_told_to_keep_its_gradient():
    _, u = _hook_graph()
    message = check("05.hook_halve", u).message
    assert "The answer is a" in message
    assert "retain_grad" not in message  # the generic fix, contradicted by the line after it


def test_17_a_right_value_in_the_wrong_form_is_not_sent_back_to_the_hand_calculation():
    t, h = 2.0, 1e-3
    as_float = ((t + h) ** 3 - (t - h) ** 3) / (2 * h)
    message = check("05.central_difference", as_float).message
    assert "Work through it again by hand" not in message
    assert "dtype=torch.float64" in message  # torch.tensor(...) alone would give float32
    t32 = torch.tensor(2.0)
    message = check("05.central_difference", ((t32 + h) ** 3 - (t32 - h) ** 3) / (2 * h)).message
    assert "has dtype torch.float32 but torch.float64 is expected" in message
    assert "Work through it again by hand" not in message


def test_18_the_generic_fix_is_not_repeated_by_the_misconception_after_it():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    u = a * b
    f = u * a + u
    f.backward()
    message = check("05.keep_intermediate_grad", u).message
    assert "keeps .grad only for leaves" in message
    assert "Call .retain_grad() on it before backward()" not in message
    assert message.count("too late") == 1


def test_21_a_task_that_must_build_no_graph_is_never_advised_detach():
    message = check("07.predict_no_grad", predict).message
    assert "requires_grad=True" in message
    assert "Use .detach()" not in message and "use .detach()" not in message


def test_26_wrong_values_that_also_record_a_graph_are_named_by_their_values_first():
    message = check("09.second_derivative_tanh", first_derivative_with_its_graph).message
    assert "first derivative" in message
    assert "requires_grad=True" not in message and ".detach()" not in message


def test_27_a_gradient_that_carries_a_graph_is_not_told_to_detach():
    g = torch.Generator().manual_seed(29)
    names = {"torch": torch, "w": torch.randn(3, generator=g).requires_grad_()}
    names["xs"] = torch.randn(6, 3, generator=g)
    code = (
        "loss = (xs @ w).pow(2).mean()\n"
        "loss.backward(create_graph=True)\n"
        "penalty = 0.1 * w.grad.pow(2).sum()\n"
        "(loss + penalty).backward()\n"
        "answer = w\n"
    )
    result = check_answer_cell("09.gradient_penalty", code, names)
    message = result.message
    assert result.status == "failed" and "leak" in message  # the catalogued mistake
    assert ".detach()" not in message and "torch.no_grad()" not in message


def test_30_a_penalty_cut_off_from_the_graph_is_not_told_to_make_a_new_leaf():
    message = check("12.keep_penalty_graph", l2_penalty).message
    assert "requires_grad=False" in message
    assert "Create it with requires_grad=True" not in message
    assert "create it with requires_grad=True" not in message


def test_3_a_float64_value_is_not_guessed_to_come_from_numpy():
    message = check("01.linspace_points", torch.linspace(-1, 1, 5, dtype=torch.float64)).message
    assert "float64 but torch.float32 is expected" in message
    assert "NumPy" not in message


def test_32_two_equal_values_have_no_constant_factor_worth_naming():
    message = dx.diagnose(torch.tensor([2.678, 2.678]), torch.tensor([2.0, 2.0])).message
    assert "times the expected" not in message and "constant factor" not in message
    # different values with one factor still show it
    assert "3 times" in dx.diagnose(torch.tensor([3.0, 6.0]), torch.tensor([1.0, 2.0])).message


def test_34_a_tensor_in_place_of_the_id_is_named_by_its_type_not_printed():
    result = check(torch.arange(12).view(3, 4))
    assert "tensor(" not in str(result) and "[[" not in str(result)
    assert result.exercise_id == "(Tensor where an exercise id belongs)"
    assert "check('01.arange_grid', answer)" in result.message


def test_34_a_lesson_number_without_its_zero_suggests_the_same_exercise():
    message = check("1.arange_grid", torch.zeros(3, 4)).message
    assert "'01.arange_grid'" in message and "13.averaged_gradient" not in message


def test_31_a_run_failure_printed_by_the_cell_is_shown_once_and_the_hint_follows_it():
    failure = (
        "The run failed on rank 1 with FileNotFoundError: [Errno 2] No such file or "
        "directory: 'model.pt'\nIn your code (in save_then_load): state = torch.load(path)"
    )
    nb = run_in_kernel(
        [
            "import os\nos.environ['COURSE_PROGRESS'] = 'off'\n"
            "from course_helpers import check, hint\n"
            "from course_helpers.environment.two_ranks import _run_failed",
            f"answer = _run_failed({failure!r})\ncheck('13.rank0_checkpoint', answer)",
            "hint('13.rank0_checkpoint')",
        ]
    )
    shown = "".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in nb.cells[1].outputs
    )
    assert shown.count("No such file or directory") == 1, shown
    assert "printed above" in shown
    hint_text = "".join(o.get("data", {}).get("text/plain", "") for o in nb.cells[2].outputs)
    assert "wait" in hint_text and "Count the writes" not in hint_text, hint_text
