"""Every exercise of every lesson module: well formed, and its reference passes its own check."""

import re

import pytest
import torch

from course_helpers.checking.checker import check
from course_helpers.environment.notebook import cpu_generator
from course_helpers.lessons import catalog
from course_helpers.lessons.model import KINDS

LESSON_STEMS = (
    "00_start_here",
    "01_tensors",
    "02_dtype_and_device",
    "03_shapes_and_views",
    "04_broadcasting_and_matmul",
    "05_autograd_graphs",
    "06_gradient_accumulation",
    "07_detach_and_no_grad",
    "08_inplace_operations",
    "09_graph_lifetime",
    "10_parameters_and_modules",
    "11_training_loops",
    "12_capstone_debugging",
    "13_distributed_data_parallel",
)
EXERCISES = catalog()
IDS = [e.id for e in EXERCISES]


def test_catalog_is_not_empty_and_ids_are_unique():
    assert EXERCISES
    assert len(IDS) == len(set(IDS))


def test_catalog_is_in_course_order():
    order = [LESSON_STEMS.index(e.lesson) for e in EXERCISES]
    assert order == sorted(order)


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_exercise_is_well_formed(exercise):
    assert exercise.lesson in LESSON_STEMS
    assert re.fullmatch(r"\d\d\.[a-z0-9_]+", exercise.id)
    assert exercise.id.split(".")[0] == exercise.lesson[:2]
    assert exercise.kind in KINDS
    assert len(exercise.hints) >= 2 and all(h.strip() for h in exercise.hints)
    assert exercise.title.strip() and exercise.solution.strip()
    if exercise.kind == "choice" and exercise.options is not None:
        assert str(exercise.reference) in exercise.options
    if exercise.kind == "error":  # the class itself, or None for code that raises nothing
        reference = exercise.reference
        assert reference is None or (
            isinstance(reference, type) and issubclass(reference, Exception)
        )


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_reference_passes_its_own_check_in_strict_mode(exercise, monkeypatch):
    monkeypatch.setenv("COURSE_STRICT", "1")
    assert check(exercise.id, exercise.reference).passed


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_stub_answer_is_not_attempted(exercise):
    assert check(exercise.id, ...).status == "not_attempted"


# Edge cases that no structural test can see; each names what makes it an edge case.
SEMANTIC_EDGE_CASES = {
    "12.train": "a run shorter than one evaluation period (30 steps)",
}


def _is_edge(value, depth=0):
    """A size-1, empty or 0-dim tensor; 0 or 1; an empty container; a module without
    parameters or with such a parameter."""
    if depth > 3:
        return False
    if isinstance(value, torch.Tensor):
        return value.ndim == 0 or 0 in value.shape or 1 in value.shape
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value in (0, 1)
    if isinstance(value, (str, list, tuple, dict)) and len(value) == 0:
        return True
    if isinstance(value, (list, tuple)):
        return any(_is_edge(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_is_edge(v, depth + 1) for v in value.values())
    if isinstance(value, torch.nn.Module):
        params = list(value.parameters())
        return not params or any(_is_edge(p, depth + 1) for p in params)
    return False


@pytest.mark.parametrize(
    "exercise", [e for e in EXERCISES if e.kind == "function"], ids=lambda e: e.id
)
def test_function_cases_include_an_edge_case(exercise):
    cases = list(exercise.cases(cpu_generator(0)))
    assert len(cases) >= 2
    if exercise.id not in SEMANTIC_EDGE_CASES:
        assert any(_is_edge(value) for args in cases for value in args), (
            "add an edge case: a size-1 or empty dimension, a 0-dim tensor, n=0 or 1, ..."
        )
    again = list(exercise.cases(cpu_generator(0)))
    for first, second in zip(cases, again, strict=True):  # seeded: the grader sees the same
        for a, b in zip(first, second, strict=True):
            if isinstance(a, torch.Tensor) and a.device.type == "meta":  # no data to compare
                assert (a.shape, a.dtype, b.device) == (b.shape, b.dtype, a.device)
            elif isinstance(a, torch.Tensor):
                assert torch.equal(a, b)


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_a_wrong_answer_fails(exercise):
    """No check that cannot fail: a string answer, another option, a changed tensor."""
    assert not check(exercise.id, "surely not the answer").passed
    reference = exercise.reference
    if exercise.kind == "choice" and exercise.options is not None:
        for key in exercise.options:
            if str(key) != str(reference):
                assert not check(exercise.id, key).passed
    if exercise.kind == "value" and isinstance(reference, torch.Tensor) and reference.numel():
        changed = reference.detach().clone()
        changed = ~changed if changed.dtype == torch.bool else changed + 1
        assert not check(exercise.id, changed.requires_grad_(reference.requires_grad)).passed


def test_autograd_attributes_are_validated():
    from course_helpers.lessons.model import AUTOGRAD_ATTRIBUTES, Exercise

    assert AUTOGRAD_ATTRIBUTES == (
        "requires_grad",
        "is_leaf",
        "grad_fn",
        "version",
        "value",
        "grad",
    )
    common = dict(
        id="99.x", title="x", lesson="99_tests", kind="autograd", build_reference=lambda: None
    )
    common.update(hints=("a", "b"), solution="")
    for bad in (("grad", "gradient"), ("_version",), "grad"):
        with pytest.raises(ValueError, match="attributes="):
            Exercise(**common, attributes=bad)
    assert Exercise(**common, attributes=("value", "version")).attributes == ("value", "version")


def test_the_exercise_has_no_unused_fields():
    from dataclasses import fields

    from course_helpers.lessons.model import Exercise

    names = {f.name for f in fields(Exercise)}
    assert not names & {"question", "device"}
    assert not hasattr(Exercise, "lesson_number")


ERROR_EXERCISES = [e for e in EXERCISES if e.kind == "error"]


@pytest.mark.parametrize("exercise", ERROR_EXERCISES, ids=[e.id for e in ERROR_EXERCISES])
def test_a_wrong_error_class_is_not_told_the_right_one(exercise):
    # feedback to a wrong guess explains why it is wrong; naming the right class would make
    # the next attempt a copy (hints may lead there, tier by tier, when asked for)
    right = exercise.reference.__name__
    for wrong, text in exercise.explanations.items():
        assert right not in text, f"{exercise.id}: the explanation for {wrong} names {right}"
