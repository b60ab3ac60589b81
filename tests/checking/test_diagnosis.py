"""The ordered diagnosis of an answer against the reference (course_helpers.checking.diagnosis)."""

import io

import numpy as np
import pytest
import torch

from course_helpers.checking.diagnosis import describe, diagnose, fmt_number
from course_helpers.checking.predictions import diagnose_prediction


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def failed_with(answer, expected, *fragments, **options):
    result = diagnose(answer, expected, **options)
    assert result.status == "failed", result
    for fragment in fragments:
        assert fragment in result.message, result.message
    return result.message


# --------------------------------------------------------------------------- not attempted, type


@pytest.mark.parametrize("answer", [..., None])
def test_ellipsis_and_none_are_not_attempted(answer):
    result = diagnose(answer, torch.zeros(3))
    assert result.status == "not_attempted"
    assert "`...`" in result.message


def test_list_gets_the_exact_wrapping_fix():
    failed_with(
        [1.0, 2.0],
        torch.zeros(2),
        "a list of 2 Python floats",
        "torch.tensor(",
        "dtype=torch.float32",
    )


def test_list_of_tensors_gets_stack():
    failed_with(
        [torch.zeros(2), torch.ones(2)], torch.zeros(2, 2), "a list of 2 tensors", "torch.stack("
    )


def test_ndarray_gets_from_numpy_and_the_cast():
    failed_with(
        np.zeros(3),
        torch.zeros(3),
        "a NumPy array (float64, shape (3,))",
        "torch.from_numpy",
        ".float()",
    )


def test_python_number_where_a_tensor_is_expected():
    failed_with(2.5, torch.tensor(2.5), "a Python float (2.5)", "torch.tensor(2.5")


def test_tensor_where_a_python_number_is_expected():
    failed_with(torch.tensor(3.0), 3.0, ".item()")


def test_python_numbers_compare_with_tolerance_and_int_float_mix():
    assert diagnose(3, 3.0).passed
    assert diagnose(0.1 + 0.2, 0.3).passed
    failed_with(2.5, 3.0, "2.5", "3.0")


# --------------------------------------------------------------------------- shape


def test_column_vs_vector_never_broadcasts():
    expected = torch.full((3,), 2.0)
    answer = expected[:, None]
    assert torch.allclose(answer, expected)  # the naive check is fooled by broadcasting
    failed_with(
        answer,
        expected,
        "shape (3, 1) but (3,) is expected",
        "extra size-1 dimension at dim 1",
        ".squeeze(1)",
        "broadcast silently to (3, 3)",
    )


def test_missing_size_one_dim_suggests_unsqueeze_and_keepdim():
    failed_with(torch.zeros(3), torch.zeros(3, 1), ".unsqueeze(1)", "keepdim=True")


def test_one_element_tensor_vs_scalar_both_ways():
    assert torch.allclose(torch.tensor([5.0]), torch.tensor(5.0))  # naive check passes
    failed_with(torch.tensor([5.0]), torch.tensor(5.0), "shape (1,) but () is expected", "0-dim")
    failed_with(torch.tensor(5.0), torch.tensor([5.0]), "shape () but (1,)", ".reshape(1)")


def test_transpose_is_named():
    x = torch.randn(3, 4, generator=gen())
    failed_with(x.T, x, "transpose", ".T")


def test_same_numel_reshaped_values_right():
    x = torch.arange(12.0).reshape(3, 4)
    failed_with(x.reshape(4, 3), x, "the values are right", ".reshape(3, 4)")


def test_permuted_dims_give_the_undoing_permute():
    x = torch.randn(2, 3, 4, generator=gen())
    answer = x.permute(2, 0, 1)
    assert torch.equal(answer.permute(1, 2, 0), x)
    failed_with(answer, x, ".permute(1, 2, 0)")


def test_different_sizes_name_the_dimension():
    failed_with(torch.zeros(3, 5), torch.zeros(3, 4), "dim 1 has size 5 instead of 4")


def test_reduction_over_the_wrong_dim_from_the_shape():
    x = torch.randn(3, 4, generator=gen())
    failed_with(x.sum(0), x.sum(1), "reduced over dim 0, but dim 1", inputs=(x,))


def test_reduction_over_the_wrong_dim_of_a_square_input():
    x = torch.randn(3, 3, generator=gen())
    failed_with(x.mean(0), x.mean(1), "reduced over dim 0, but dim 1", inputs=(x,))


# --------------------------------------------------------------------------- dtype, device, grad


def test_int64_vs_float32_says_values_are_right():
    failed_with(
        torch.tensor([1, 2, 3]),
        torch.tensor([1.0, 2.0, 3.0]),
        "dtype torch.int64 but torch.float32",
        ".float()",
        "The values themselves are right",
    )


def test_float64_vs_float32():
    failed_with(torch.zeros(2, dtype=torch.float64), torch.zeros(2), "torch.float64", ".float()")


def test_device_is_checked_only_when_asked():
    assert diagnose(torch.zeros(2), torch.zeros(2)).passed
    failed_with(torch.zeros(2), torch.zeros(2), "on the cpu device", ".to(device)", device="cuda")


def test_requires_grad_both_ways_and_leaf():
    w = torch.ones(3, requires_grad=True)
    failed_with(w * 2, torch.full((3,), 2.0), "requires_grad=True", ".detach()")
    failed_with(torch.ones(3), torch.ones(3, requires_grad=True), "requires_grad=False")
    failed_with(w * 1, torch.ones(3, requires_grad=True), "not a leaf", "MulBackward0")


# --------------------------------------------------------------------------- NaN / Inf, values


def test_nan_in_the_answer_is_named():
    answer = torch.tensor([1.0, float("nan"), 3.0])
    failed_with(answer, torch.tensor([1.0, 2.0, 3.0]), "1 NaN", "index (1,)")


def test_inf_in_the_answer_is_named():
    answer = torch.tensor([1.0, float("inf")])
    failed_with(answer, torch.tensor([1.0, 2.0]), "infinite", "index (1,)")


def test_nan_expected_at_the_same_place_passes():
    expected = torch.tensor([1.0, float("nan")])
    assert diagnose(expected.clone(), expected).passed


def test_values_count_worst_index_and_excerpt():
    expected = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    answer = expected.clone()
    answer[1, 0] = 30.0
    answer[0, 1] = 2.5
    message = failed_with(answer, expected, "2 of 4 values differ", "index (1, 0)")
    assert "expected 3.0, got 30.0" in message
    assert "Expected: [[1.0, 2.0], [3.0, 4.0]]" in message


def test_large_tensor_excerpt_is_a_window_around_the_worst_value():
    expected = torch.randn(5, 20, generator=gen())
    answer = expected.clone()
    answer[2, 13] += 1.0
    message = failed_with(answer, expected, "1 of 100 values differs", "index (2, 13)")
    assert "Expected[2, 10:17]" in message


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda e: -e, "wrong sign"),
        (lambda e: 2 * e, "2 times the expected"),
        (lambda e: e / 4, "1/4 of the expected"),
        (lambda e: e + 0.5, "off by the same amount (0.5)"),
    ],
)
def test_value_patterns(make, fragment):
    expected = torch.tensor([1.0, -2.0, 3.0, 5.0])
    failed_with(make(expected), expected, fragment)


def test_one_number_repeated_is_told_no_factor_or_offset():
    # lesson 13's answers hold each rank's copy of one mean: any two such tensors have a ratio
    # and an offset, so neither says anything about the mistake
    expected = torch.tensor([0.6373, 0.6373])
    for answer in (torch.tensor([0.711, 0.711]), torch.tensor([0.5373, 0.5373])):
        message = failed_with(answer, expected, "2 of 2 values differ")
        assert "constant factor" not in message and "same amount" not in message, message
    failed_with(-expected, expected, "wrong sign")
    ones = torch.ones(3)
    failed_with(2 * ones, ones, "exactly 2 times the expected gradient", grad_context=True)


def test_square_transpose_in_values():
    x = torch.randn(3, 3, generator=gen())
    failed_with(x.T, x, "transpose")


def test_gradient_accumulation_factor():
    expected = torch.tensor([1.0, 2.0])
    failed_with(2 * expected, expected, "2 times the expected gradient", grad_context=True)


# --------------------------------------------------------------------------- tolerances


def test_float32_tolerance_follows_assert_close():
    expected = torch.tensor([1.0, 100.0])
    assert diagnose(expected + torch.tensor([5e-6, 1e-4]), expected).passed
    assert not diagnose(expected + torch.tensor([5e-5, 0.0]), expected).passed


def test_float64_is_stricter_than_float32():
    expected = torch.tensor([1.0], dtype=torch.float64)
    assert not diagnose(expected + 5e-6, expected).passed
    assert diagnose(expected.float() + 5e-6, expected.float()).passed


def test_integers_and_bools_are_exact():
    assert not diagnose(torch.tensor([1, 2]), torch.tensor([1, 3])).passed
    assert not diagnose(torch.tensor([True]), torch.tensor([False])).passed
    assert diagnose(torch.tensor([True, False]), torch.tensor([True, False])).passed


def test_tolerance_override():
    expected = torch.tensor([1.0])
    assert not diagnose(expected + 0.01, expected).passed
    assert diagnose(expected + 0.01, expected, atol=0.1).passed


# --------------------------------------------------------------------------- correct answers


def test_non_contiguous_and_view_answers_pass():
    x = torch.randn(4, 6, generator=gen())
    assert not x.T.contiguous().T.is_contiguous()
    assert diagnose(x.T.contiguous().T, x).passed
    assert diagnose(x[:, ::2], x[:, ::2].clone()).passed


def test_another_valid_formula_passes():
    x = torch.randn(5, generator=gen())
    assert diagnose(x + x, 2 * x).passed


# --------------------------------------------------------------------------- predictions, records


def test_prediction_of_a_shape_accepts_a_tuple_and_a_size_not_a_list():
    for answer in [(2, 3), torch.Size([2, 3])]:
        assert diagnose_prediction(answer, (2, 3)).passed
    # one format per kind (issue 12): a list is rewritten as a tuple, right or wrong alike
    for items, expected in (([2, 3], (2, 3)), ([3, 2], (2, 3)), ([7], (4,))):
        listed = diagnose_prediction(items, expected)
        assert listed.status == "failed" and listed.wrong_format
        rewritten = "(" + ", ".join(map(str, items)) + ("," if len(items) == 1 else "") + ")"
        assert listed.message == (
            f"Your answer is a list, {items}: answer with a tuple (round brackets), "
            f"e.g. {rewritten}."
        )
    wrong = diagnose_prediction((3, 2, 1), (2, 3))
    assert wrong.status == "failed"
    assert "2 dimensions" in wrong.message
    assert "(2, 3)" not in wrong.message  # a prediction is not given away


def test_prediction_of_a_dtype_takes_the_dtype_not_its_name():
    for text in ("float32", "torch.float32", " float64"):
        result = diagnose_prediction(text, torch.float32)
        assert result.status == "failed" and result.wrong_format, text
        name = text.strip().removeprefix("torch.")
        assert result.message == (
            f"Your answer is the string {text!r}: answer with the dtype itself, torch.{name} "
            "(no quotes)."
        )
    assert diagnose_prediction(torch.float32, torch.float32).passed
    assert not diagnose_prediction(torch.int64, torch.float32).passed


def test_records_survive_a_safe_save_and_load():
    x = torch.randn(3, 4, generator=gen(), requires_grad=True)
    (x * 2).sum().backward()
    record = describe(x)
    buffer = io.BytesIO()
    torch.save(record, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    assert diagnose(loaded, describe(x)).passed
    assert torch.equal(loaded["grad"]["data"], torch.full((3, 4), 2.0))


def test_record_is_a_copy():
    x = torch.zeros(3)
    record = describe(x)
    x += 1
    assert torch.equal(record["data"], torch.zeros(3))


def test_numbers_get_enough_digits_to_differ():
    assert fmt_number(1.00001, 1.00002) != fmt_number(1.00002, 1.00001)
    assert fmt_number(3.0) == "3.0"
    assert fmt_number(7) == "7"


def test_keepdim_mismatch_on_the_right_dim():
    x = torch.randn(3, 4, generator=gen())
    failed_with(
        x.sum(1),
        x.sum(1, keepdim=True),
        "right dim (1), but your result drops that dim",
        inputs=(x,),
    )


def test_size_one_dims_in_other_places_fall_back_to_reshape():
    failed_with(torch.zeros(1, 1, 3), torch.zeros(3, 1), ".reshape(3, 1)")


def test_empty_tensors():
    assert diagnose(torch.zeros(0, 4), torch.zeros(0, 4)).passed
    failed_with(torch.zeros(0, 4), torch.zeros(0), "2 dimensions but 1 is expected")


def test_lists_compare_item_by_item_and_name_the_item():
    assert diagnose((0.5, 0.25), [0.5, 0.25]).passed
    failed_with([0.5, 0.3], [0.5, 0.25], "Item 1 of your list is 0.3 but 0.25 is expected")
    failed_with(["a", "c"], ["a", "b"], "Item 1 of your list: ")
    failed_with([1.0], [1.0, 2.0], "has 1 item but 2 are expected")
    failed_with([1.0, 2.0], [1.0], "has 2 items but 1 is expected")
    failed_with(torch.tensor([1.0, 2.0]), [1.0, 2.0], "a list of 2 items is expected")


def test_dicts_compare_keys_then_values():
    expected = {"w": torch.zeros(2), "b": 1.0}
    assert diagnose({"b": 1.0, "w": torch.zeros(2)}, expected).passed
    failed_with({"w": torch.zeros(2)}, expected, "lacks the key 'b'")
    failed_with({"w": torch.zeros(3), "b": 1.0}, expected, "The value for key 'w'", "shape (3,)")


def test_prediction_of_a_tuple_of_flags_takes_a_tuple():
    assert diagnose_prediction((True, False), (True, False)).passed
    listed = diagnose_prediction([True, False], (True, False))
    assert listed.wrong_format and "e.g. (True, False)" in listed.message
    wrong = diagnose_prediction((True, True), (True, False))
    assert wrong.status == "failed" and wrong.message.startswith("Item 1 of your answer")


def test_sets_compare_as_sets():
    assert diagnose({"b", "a"}, {"a", "b"}).passed
    assert not diagnose({"a"}, {"a", "b"}).passed


def test_an_uncomparable_reference_is_an_error_never_a_pass():
    class Thing:
        pass

    result = diagnose(Thing(), Thing())
    assert result.status == "error"


# --------------------------------------------------------------------------- follow-up reports


def test_close_numbers_get_enough_digits_to_show_the_difference():
    assert fmt_number(12.006, 12.000001) == "12.006"
    assert fmt_number(12.000001, 12.006) == "12.000001"  # not a round-looking "12.0"
    assert fmt_number(3.0, 3.5) == "3.0"
    failed_with(
        torch.tensor(12.006, dtype=torch.float64),
        torch.tensor(12.000001, dtype=torch.float64),
        "holds 12.006 but 12.000001 is expected",
        rtol=0.0,
        atol=1e-9,
    )


def test_dtype_note_uses_the_exercise_tolerance():
    expected = torch.tensor(12.000001, dtype=torch.float64)
    loose = failed_with(torch.tensor(12.0), expected, "torch.float64 is expected")
    assert "values themselves are right" in loose
    tight = failed_with(torch.tensor(12.0), expected, "not enough", rtol=0.0, atol=1e-9)
    assert "values themselves are right" not in tight
    assert "expected 12.000001, got 12.0" in tight


def test_a_factor_in_plain_values_is_stated_without_derivative_talk():
    expected = torch.tensor([1.0, -2.0, 3.0])
    message = failed_with(10 * expected, expected, "Every value is 10 times the expected one")
    assert "derivative" not in message
    failed_with(
        expected / 2, expected, "1/2 of the expected gradient", "derivative", grad_context=True
    )


def test_requires_grad_on_a_leaf_mentions_freezing_it():
    failed_with(torch.zeros(2, requires_grad=True), torch.zeros(2), ".requires_grad_(False)")
    computed = torch.zeros(2, requires_grad=True) * 1
    message = failed_with(computed, torch.zeros(2), ".detach()")
    assert "requires_grad_(False)" not in message


def test_function_output_that_is_a_python_number():
    message = failed_with(
        2.0,
        torch.tensor(2.0),
        "a Python float (2.0)",
        "if you called .item(), return the tensor itself",
        subject="Your function's output",
        in_function=True,
    )
    assert "wrap it" not in message
    failed_with(2.0, torch.tensor(2.0), "wrap it: torch.tensor(2.0")  # a value answer


def test_extra_dim_in_function_output_vs_value_answer():
    x = torch.zeros(1, 3)
    failed_with(x, torch.zeros(3), ".squeeze(0)")
    message = failed_with(x, torch.zeros(3), "one dimension too many", in_function=True)
    assert ".squeeze(" not in message


def test_meta_tensors_compare_shape_dtype_and_device():
    meta = torch.empty(2, 3, device="meta")
    assert diagnose(torch.empty(2, 3, device="meta"), meta).passed
    failed_with(torch.empty(3, 2, device="meta"), meta, "shape (3, 2)")
    failed_with(torch.zeros(2, 3), meta, "a 'meta' tensor")
    failed_with(meta, torch.zeros(2, 3), "no values to compare")
    failed_with(torch.zeros(2, 3), meta, "the expected output is on 'meta'", in_function=True)


def test_prediction_of_a_dtype_that_is_not_a_dtype_name():
    result = diagnose_prediction("b", torch.float32)
    assert "the string 'b', which is not a dtype name" in result.message
    assert "torch.b" not in result.message and "float32" not in result.message
    assert "torch.int64 is not it" in diagnose_prediction(torch.int64, torch.float32).message
    assert diagnose_prediction(torch.float, torch.float32).passed  # an alias of float32
    assert "not a dtype name" in diagnose_prediction("Size", torch.float32).message


@pytest.mark.parametrize(
    "answer, expected",
    [((3, 2), (2, 3)), (7, 6), ("0.bias", "0.weight"), (True, False), (torch.int64, torch.float32)],
)
def test_wrong_predictions_do_not_tell_to_run_code(answer, expected):
    result = diagnose_prediction(answer, expected)
    assert result.status == "failed"
    assert "run the code" not in result.message.lower()
    assert "step by step" in result.message


def test_predicted_items_in_the_wrong_order_or_count():
    expected = ("0.weight", "0.bias")
    assert diagnose_prediction(("0.weight", "0.bias"), expected).passed
    assert diagnose_prediction(["0.weight", "0.bias"], expected).wrong_format  # list for tuple
    swapped = diagnose_prediction(("0.bias", "0.weight"), expected)
    assert "right items, but in the wrong order" in swapped.message
    short = diagnose_prediction(("0.weight",), expected)
    assert short.message == (
        "Your answer has 1 item but 2 are expected: 1 of them is right, 1 is missing."
    )
    long = diagnose_prediction(("0.weight", "0.bias", "1.weight"), expected)
    assert "3 items but 2 are expected: 2 of them are right, 1 is extra" in long.message
    assert "0.bias" not in short.message + long.message  # the answer is not given away


def test_predicted_set_compares_without_order():
    assert diagnose_prediction({"b", "a"}, {"a", "b"}).passed
    assert "a set is expected" in diagnose_prediction(("a", "b"), {"a", "b"}).message
    assert "1 of them is right" in diagnose_prediction({"a"}, {"a", "b"}).message


def test_a_list_of_names_counts_right_missing_and_order():
    expected = ["b.bias", "b.weight", "out_w"]
    assert diagnose(["b.bias", "b.weight", "out_w"], expected).passed
    assert "right items, but in the wrong order" in (
        diagnose(["out_w", "b.bias", "b.weight"], expected).message
    )
    assert diagnose(["b.bias", "b.weight"], expected).message == (
        "Your answer has 2 items but 3 are expected: 2 of them are right, 1 is missing."
    )
    failed_with(["b.bias", "b.weight", "out_b"], expected, "Item 2 of your list: 'out_b'")


# --------------------------------------------------------------------------- after the review


def test_a_truncating_cast_does_not_make_the_values_right():
    message = failed_with(
        torch.tensor([1.5, 2.5, 3.9]), torch.tensor([1, 2, 3]), "torch.float32", "torch.int64"
    )
    assert "values themselves are right" not in message
    # whole numbers in the wrong dtype are still told their values are right
    assert "The values themselves are right." in failed_with(
        torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1, 2, 3])
    )


def test_an_item_left_as_ellipsis_is_named():
    result = diagnose([torch.ones(2), ...], [torch.ones(2), torch.zeros(2)])
    assert result.status == "not_attempted"
    assert result.message == (
        "Item 1 of your list is still `...`: fill it in and run the cell again."
    )


def test_a_module_is_described_as_a_module():
    from course_helpers.records import python_type_name

    record = describe(torch.nn.Linear(2, 1))
    assert record == {"_r": "module", "name": "Linear"}
    assert python_type_name(record) == "a module (Linear)"
    assert describe(len) == {"_r": "callable", "name": "len"}
