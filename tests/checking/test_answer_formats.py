"""One answer format per kind (issue 12): a right value in the wrong form fails with a message
that rewrites the learner's own answer, and never tells whether it was right."""

import numpy as np
import pytest
import torch

from course_helpers.checking.checker import check
from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.lessons import catalog, get
from course_helpers.lessons.model import Exercise

TUPLE_PREDICTIONS = [
    e.id
    for e in catalog()
    if e.kind == "choice" and e.options is None and isinstance(e.reference, tuple)
]


def test_the_tuple_predictions_are_the_ones_the_issue_names():
    named = {"03.permute_shape", "03.permute_stride", "03.quiz_stride", "03.quiz_stack_shape"}
    named |= {"05.quiz_vjp_shape", "09.grad_has_graph", "10.state_dict_keys"}
    named |= {"11.loader_batches", "12.broadcast_shape"}
    assert named <= set(TUPLE_PREDICTIONS)
    assert any(i.startswith("04.") for i in TUPLE_PREDICTIONS)


@pytest.mark.parametrize("exercise_id", TUPLE_PREDICTIONS)
def test_a_list_fails_with_the_learners_items_in_round_brackets(exercise_id):
    right = get(exercise_id).reference
    for items in (list(right), list(reversed(right))):  # right or wrong: the same message
        result = check(exercise_id, items)
        assert result.status == "failed"
        mine = tuple(items)
        assert result.message == (
            f"Your answer is a list, {items}: answer with a tuple (round brackets), e.g. {mine!r}."
        )
    assert check(exercise_id, tuple(right)).passed


def test_a_torch_size_is_a_tuple():
    assert check("03.permute_shape", torch.Size([5, 3, 2, 4])).passed
    assert check("12.broadcast_shape", torch.empty(256, 256).shape).passed


@pytest.mark.parametrize("text", ["float32", "torch.float32", "float64", "torch.int8"])
def test_a_dtype_as_a_string_fails_and_is_rewritten_as_the_dtype(text):
    result = check("02.predict_promotion", text)
    assert result.status == "failed"
    name = text.removeprefix("torch.")
    assert result.message == (
        f"Your answer is the string {text!r}: answer with the dtype itself, torch.{name} "
        "(no quotes)."
    )


def test_a_string_that_is_no_dtype_says_so_without_naming_the_answer():
    result = check("02.predict_promotion", "floaty")
    assert "'floaty', which is not a dtype name" in result.message
    assert "float32" not in result.message
    assert check("02.predict_promotion", torch.float32).passed


@pytest.mark.parametrize(
    ("exercise_id", "tensor", "shown"),
    [
        ("02.uint8_wrap", torch.tensor(246, dtype=torch.uint8), "246"),
        ("02.uint8_wrap", torch.tensor([10]), "10"),
        ("06.predict_loop_grad", torch.tensor(12.0), "12.0"),
        ("08.quiz_version", torch.tensor(5), "5"),
    ],
)
def test_a_one_element_tensor_gets_one_clean_message(exercise_id, tensor, shown):
    result = check(exercise_id, tensor)
    assert result.status == "failed"
    form = "a 0-d tensor" if tensor.dim() == 0 else f"a tensor of shape {tuple(tensor.shape)}"
    assert result.message == (
        f"Your answer is {form}, but a Python number is expected: take the number out of it "
        f"with .item() (for your tensor that gives {shown})."
    )


def test_a_larger_tensor_for_a_number_names_its_shape():
    result = check("02.uint8_wrap", torch.tensor([1, 2]))
    assert result.message == (
        "Your answer is a tensor of shape (2,), but a single Python number is expected."
    )


# --------------------------------------------------------------------------- forms named
# Issue 34 (5): a message about an answer's form names the form it has: NumPy scalars and
# arrays, 0-d tensors, tuples of tensors, Python numbers, lists.


def _numpy_mean(counts):
    return np.float64(counts.float().mean())


def _numpy_array_mean(counts):
    return counts.float().numpy().mean(keepdims=True)


FORMS = [
    # (exercise, answer, the form the message must name)
    ("05.central_difference", np.float64(12.000001), "Your answer is a NumPy float64,"),
    ("05.central_difference", np.array(12.000001), "Your answer is a 0-d NumPy array (float64)"),
    ("05.central_difference", np.array([12.0]), "a NumPy array (float64, shape (1,))"),
    ("01.arange_grid", np.float32(1.5), "Your answer is a NumPy float32 (1.5)"),
    ("01.arange_grid", 1.5, "Your answer is a Python float (1.5)"),
    ("01.arange_grid", [[0, 1], [2, 3]], "Your answer is a list of 2 lists"),
    ("01.arange_grid", (torch.tensor(1), torch.tensor(2)), "a tuple of 2 0-d tensors"),
    ("01.arange_grid", [torch.zeros(4)] * 3, "a list of 3 tensors"),
    ("03.quiz_stride", (torch.tensor(20), torch.tensor(5), torch.tensor(1)), "a tuple of 3 0-d"),
    ("03.quiz_stride", (np.int64(20), np.int64(5), np.int64(1)), "a tuple of 3 NumPy int64s"),
    ("03.quiz_stride", (torch.tensor(2.5), 5, 1), "a tuple of 3 items (a 0-d tensor, a Python"),
    ("02.uint8_wrap", torch.tensor(3), "Your answer is a 0-d tensor,"),
    ("02.uint8_wrap", [1, 2], "Your answer is a list of 2 Python ints"),
    ("00.how_to_run", np.float64(1.0), "Your answer is a NumPy float64;"),
    ("00.how_to_run", torch.tensor(1), "Your answer is a 0-d tensor;"),
    ("00.how_to_run", (1,), "Your answer is a tuple of one Python int;"),
    ("02.mean_of_counts", _numpy_mean, "your function's output is a NumPy float64 (4.667)"),
    ("02.mean_of_counts", _numpy_array_mean, "output is a NumPy array (float32, shape (1,))"),
]


def _form_id(value) -> str:
    """A test id without memory addresses (xdist workers must collect the same ids)."""
    return value.__name__ if callable(value) else repr(value)[:30]


@pytest.mark.parametrize(("exercise_id", "answer", "form"), FORMS, ids=_form_id)
def test_a_message_about_the_form_names_the_form_the_answer_has(exercise_id, answer, form):
    result = check(exercise_id, answer)
    assert result.status == "failed"
    assert form in result.message
    if "NumPy" in form:  # never called a Python number
        assert "Python float" not in result.message
    if "function's output" in form:  # a NumPy value is no .item() result
        assert "you called .item()" not in result.message
    if "tensor" in form and "Python" not in form:
        assert "Python tuple" not in result.message


def test_a_tuple_of_whole_numbers_in_another_form_is_rewritten_as_ints():
    result = check("03.quiz_stride", (torch.tensor(20), torch.tensor(5), torch.tensor(1)))
    assert result.message == (
        "Your answer is a tuple of 3 0-d tensors: answer with a tuple of plain Python ints, "
        "e.g. (20, 5, 1) (int(...) or .item() takes the number out of each)."
    )


def test_a_numpy_number_is_recorded_as_one_and_judged_by_its_value():
    """A NumPy scalar keeps its name in the record (loadable with weights_only=True) and a
    right value still passes where a Python number is asked for."""
    import io

    from course_helpers.records import describe

    record = describe(np.float64(246.0))
    assert record == {"_r": "numpy_scalar", "dtype": "float64", "value": 246.0}
    buffer = io.BytesIO()
    torch.save(record, buffer)
    buffer.seek(0)
    assert torch.load(buffer, weights_only=True) == record
    assert check("02.uint8_wrap", np.int64(246)).passed
    assert check("02.uint8_wrap", np.float64(246.0)).passed


# --------------------------------------------------------------------------- error exercises
def test_the_stub_is_not_attempted_but_none_is_an_answer():
    assert check("03.transpose_error", ...).status == "not_attempted"
    result = check("03.transpose_error", None)
    assert result.status == "failed"
    assert "this code does raise one: run it and read the last line" in result.message
    assert "IndexError" not in result.message


@pytest.mark.parametrize(
    "exercise", [e for e in catalog() if e.kind == "error"], ids=lambda e: e.id
)
def test_none_never_names_the_class(exercise):
    result = check(exercise.id, None)
    assert result.status == "failed"
    assert exercise.reference.__name__ not in result.message


NO_ERROR = Exercise(
    id="99.runs_fine",
    title="Does it raise?",
    lesson="99_tests",
    kind="error",
    build_reference=lambda: None,
    hints=("Run it.", "Read the output."),
    solution="answer = None",
    explanations={"TypeError": "Both operands are tensors here."},
)


def _judge(exercise, answer):
    return judge(exercise, collect(exercise, answer))


def test_an_error_exercise_whose_answer_is_no_error():
    assert _judge(NO_ERROR, None).passed
    assert _judge(NO_ERROR, ...).status == "not_attempted"
    wrong = _judge(NO_ERROR, TypeError)
    assert wrong.status == "failed" and "Both operands are tensors here." in wrong.message
    assert _judge(NO_ERROR, ValueError).status == "failed"
    said = _judge(NO_ERROR, "None")
    assert said.status == "failed" and "answer None itself (no quotes)" in said.message
    assert _judge(NO_ERROR, "TypeError").status == "failed"
    assert _judge(NO_ERROR, 3).status == "failed"


def test_an_error_answered_as_a_string_is_rewritten_as_the_class():
    result = check("03.transpose_error", "typeerror")
    assert result.status == "failed"
    assert "the string 'typeerror': answer with the class itself, e.g. TypeError" in result.message


def test_an_item_of_the_answer_is_named_once_not_as_the_whole_answer():
    # the item's own verdict says "Your answer is ..."; under "Item 0 of your answer" that
    # "Your answer" would be the whole tuple again
    result = check("09.grad_has_graph", (np.bool_(True), np.bool_(False)))
    assert result.status == "failed"
    assert result.message.startswith("Item 0 of your answer is a NumPy bool"), result.message
    assert "Your answer" not in result.message
    assert check("09.grad_has_graph", (True, False)).passed
