"""Judging is silent of the warnings its test inputs make (issue 34, item 7).

A lesson-12 answer judged on the exercise's one-row test input made torch print
``std(): degrees of freedom is <= 0`` under the verdict: a warning about an input the
learner never wrote, from the learner's function run by ``collect`` and from the catalogued
wrong answer run by the misconception matcher. A warning the learner's own cell raises
outside ``check`` still shows."""

import warnings

import torch

from course_helpers import lessons
from course_helpers.checking.checker import check
from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.lessons import get


def _batch_statistics_entry():
    return next(
        m
        for m in lessons.for_exercise("12.normalize_device")
        if m.label == "the batch's own statistics"
    )


def test_a_check_on_a_one_row_test_input_prints_no_warning():
    entry = _batch_statistics_entry()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = check("12.normalize_device", entry.build_answer())
    assert entry.message in result.message  # judged, and explained
    assert [str(w.message) for w in caught] == []


def test_the_grader_judges_silently_too():
    entry = _batch_statistics_entry()
    exercise = get("12.normalize_device")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        submission = collect(exercise, entry.build_answer())  # the kernel's part
    from course_helpers.checking import function_judge

    function_judge._reference_cache.clear()  # the grader's process runs every reference anew
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        verdict = judge(exercise, submission)
    assert entry.message in verdict.message
    assert [str(w.message) for w in caught] == []


def test_a_warning_of_the_learners_own_code_still_shows():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ones(1, 3).std(dim=0)  # the learner's own cell, outside check
        check("01.arange_grid", torch.arange(12).reshape(3, 4))
        torch.ones(1, 3).std(dim=0)
    # before and after the check: the check leaves the learner's warning filters as they were
    assert len([w for w in caught if "degrees of freedom" in str(w.message)]) == 2
