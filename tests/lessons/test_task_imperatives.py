"""When a task says how, the check looks (issue 34, item 2).

Every imperative of a task text (``task_texts.IMPERATIVES``, and every phrase in bold) must be
declared in its exercise's ``task_says``: either ``check:NAME``, naming a check that the
exercise really has, or ``advice: why``, for what no check can see. A new task text with an
undeclared "must", "without", "by hand" or bold phrase fails here.
"""

from __future__ import annotations

import re

import pytest
from task_texts import IMPERATIVES, imperatives, normalise, task_texts

from course_helpers.lessons import catalog

TASKS = task_texts()
EXERCISES = {ex.id: ex for ex in catalog()}

# checks that are part of a judge rather than declared patterns: what each requires
JUDGE_CHECKS = {
    # the compared value shows it (a reason in parentheses says how)
    "value": lambda ex: ex.kind in ("value", "autograd", "function"),
    # a function's test inputs include the case the task names
    "cases": lambda ex: ex.kind == "function",
    # the function judge compares every input before and after the call (a module's
    # parameters, buffers and the training flag of every submodule included)
    "inputs_unchanged": lambda ex: ex.kind == "function" and not ex.mutates_input,
    # what a function leaves behind (grad mode, globals) / a cell's grad mode at the check
    "state_left": lambda ex: ex.kind == "function" or ex.context == "no_graph",
    # lesson 13: the launcher's counts (torch.save calls, all-reduces, rows) are compared
    "counts": lambda ex: isinstance(ex.reference, dict) or ex.id == "13.exact_evaluation",
    # lesson 13: what each rank's function returned (a Python number), read from the run
    "rank_value": lambda ex: bool(ex.rank_value),
    "must_build_no_graph": lambda ex: ex.must_build_no_graph,
    "check_step_order": lambda ex: ex.check_step_order,
    "keep_lines": lambda ex: bool(ex.keep_lines),
    "reach_parameters": lambda ex: ex.reach_parameters,
    "check_leaf_grads": lambda ex: ex.check_leaf_grads,
}
NEEDS_REASON = ("value", "cases", "counts")


def _declared(ex) -> list[tuple[str, str]]:
    return list(dict(getattr(ex, "task_says", {})).items())


def honoured(ex, how: str) -> str:
    """ "" when ``how`` is a check the exercise has (or advice), else what is wrong with it."""
    if how.startswith("advice:"):
        return "" if how.removeprefix("advice:").strip() else "advice without a reason"
    name, _, reason = how.removeprefix("check:").partition(" (")
    name = name.strip()
    if name.startswith("attributes:"):
        attribute = name.removeprefix("attributes:")
        ok = ex.kind == "autograd" and attribute in ex.attributes
        return "" if ok else f"{attribute} is not among the attributes compared"
    if name.startswith("min_calls:"):
        called = name.removeprefix("min_calls:")
        return "" if called in ex.min_calls else f"min_calls does not count {called}"
    if ":" in name:  # a code pattern
        ok = name in tuple(ex.forbid) + tuple(ex.require)
        return "" if ok else f"{name} is in neither forbid nor require"
    if name not in JUDGE_CHECKS:
        return f"{name!r} is no known check"
    if name in NEEDS_REASON and not reason.strip():
        return f"check:{name} needs a reason in parentheses"
    return "" if JUDGE_CHECKS[name](ex) else f"the exercise has no {name} check"


def test_the_task_texts_are_found():
    # a sanity check of the reader: an exercise of each solution notebook has its text
    for lesson in range(1, 14):
        found = [
            i for i, (text, _) in TASKS.items() if i.startswith(f"{lesson:02d}.") and "##" in text
        ]
        assert found, lesson
    text, bold = TASKS["05.hand_chain_rule"]
    assert "by hand and put them in answer" in text
    assert [text[a:b] for a, b in bold] == ["by hand"]


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        ("No Python loop: one line of tensor arithmetic does it.", ["No Python loop", "one line"]),
        ("Work it out without running the code", ["without running"]),
        ("This loop runs without any error", []),  # a description, not an instruction
        ("Most exercises use this small data set", []),
        ("Use autograd to get the gradient, and do not modify w", ["Use", "do not"]),
        ("the tests do not compare the next cell's output", []),
        ("call backward() once per loss", ["once per loss"]),
        ("Update it in place: the check reads w._version", ["Update it in place"]),
    ],
)
def test_the_curated_list_finds_instructions_not_descriptions(text, phrases):
    assert [p for _, _, p in imperatives(normalise(text))] == phrases


def test_every_imperative_has_an_explanation():
    for pattern, why in IMPERATIVES:
        assert re.compile(pattern) and len(why) > 20, pattern


@pytest.mark.parametrize("exercise_id", sorted(TASKS))
def test_every_imperative_of_a_task_is_checked_or_declared_advice(exercise_id):
    ex = EXERCISES[exercise_id]
    text, bold = TASKS[exercise_id]
    declared = _declared(ex)
    covered = []
    for phrase, _ in declared:
        key = normalise(phrase)
        spans = [(m.start(), m.end()) for m in re.finditer(re.escape(key), text, flags=re.I)]
        assert spans, f"{exercise_id}: task_says names {phrase!r}, which the task does not say"
        covered.extend(spans)
    missing = [
        phrase
        for start, end, phrase in imperatives(text, bold)
        if not any(a <= start and end <= b for a, b in covered)
    ]
    assert not missing, (
        f"{exercise_id}: the task says {missing}: declare each in task_says as a check the "
        "exercise has (check:NAME) or as advice (advice: why)"
    )


@pytest.mark.parametrize(
    "exercise_id", sorted(i for i, ex in EXERCISES.items() if getattr(ex, "task_says", {}))
)
def test_every_declared_check_is_one_the_exercise_has(exercise_id):
    ex = EXERCISES[exercise_id]
    problems = [f"{phrase!r}: {p}" for phrase, how in _declared(ex) if (p := honoured(ex, how))]
    assert not problems, f"{exercise_id}: {problems}"


def test_the_rule_fails_an_undeclared_must():
    # the test above cannot pass vacuously: a new "must" in a checked exercise is found
    text = normalise("Write f(x). It must not use a Python loop, and by hand is fine.")
    start = text.index("by hand")
    found = [p for _, _, p in imperatives(text, [(start, start + 7)])]
    assert found == ["must not", "by hand"]
    ex = EXERCISES["01.celsius_to_fahrenheit"]
    assert honoured(ex, "check:loop:python") == ""
    assert honoured(ex, "check:call:register_hook") != ""
    assert honoured(ex, "check:value") != ""  # a reason is needed
    assert honoured(ex, "check:must_build_no_graph") != ""
