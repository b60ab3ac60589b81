"""Recognise a typical wrong answer: is a failed answer one of the catalogued misconceptions?

A learner's wrong answer usually comes from one of a few misunderstandings. The catalogue
(``course_helpers.lessons``, one ``misconceptions.py`` per lesson) holds, for an exercise,
the typical wrong answers and what each one must be told. When a checked answer fails and
it *is* one of them (judged exactly like an answer against a reference: same shape, dtype
and values, the same outputs on every test input, the same option), the feedback explains
that misunderstanding instead of only saying that the answer is wrong.

:func:`match` judges by behaviour alone, so it cannot know *how* the values were made.
:func:`explain` therefore says what was observed (``Misconception.message``), and states a
mechanism (``Misconception.cause``) as fact only when the learner's recorded code holds its
``evidence`` (``checking.evidence``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from course_helpers.lessons import for_exercise
from course_helpers.lessons.model import Misconception

__all__ = ["explain", "match"]


def match(exercise, answer: Any, judges: dict) -> Misconception | None:
    """The catalogued misconception that ``answer`` (a submission's answer record) is,
    or None. ``judges`` maps an exercise kind to its judge (``checking.JUDGES``).

    A wrong function matches an entry when it behaves the same on every test input: the
    same outputs, the same error type where the entry raises, and the same changes to its
    inputs where the entry changes them in place. A wrong autograd answer matches when it is
    the same kind of tensor as well (a leaf or not, requiring grad or not), whatever
    attributes the exercise compares: "your answer is u" is never said of ``a.grad``."""
    for entry in for_exercise(exercise.id):
        as_reference = dataclasses.replace(exercise, build_reference=entry.build_answer)
        try:
            if not judges[exercise.kind](as_reference, answer).passed:
                continue
            if exercise.kind == "autograd" and not _same_kind_of_tensor(as_reference, answer):
                continue
            if exercise.kind != "function" or _same_changes(as_reference, answer):
                return entry
        except Exception:  # a broken entry must never break the learner's check
            continue
    return None


def explain(entry: Misconception, code: Any) -> str:
    """What the learner is told about ``entry``, given the submission's recorded ``code``
    (None when none was read): the observation; then the cause, as fact when every
    evidence pattern is in the code ("Your code calls `cdist`: ..."), as a possibility when
    the code could not be read ("If your code calls `cdist`: ..."), and not at all when the
    code was read and does not hold it (then the mechanism is known not to be it)."""
    if not entry.evidence:
        return entry.message
    from course_helpers.checking import evidence as ev

    hits = ev.found(code, entry.evidence)
    if hits is None:
        return f"{entry.message}\nIf your code {ev.lead_in(entry.evidence)}: {entry.cause}"
    if not all(hits.values()):
        return entry.message
    seen = [_only(pattern, hits[pattern]) for pattern in entry.evidence]
    return f"{entry.message}\nYour code {ev.lead_in(seen)}: {entry.cause}"


def _only(pattern: str, found: list[str]) -> str:
    """``"call:detach|tensor"`` narrowed to the alternatives the code holds: ``"call:tensor"``."""
    kind = pattern.partition(":")[0]
    return f"{kind}:" + "|".join(hit.partition(":")[2] for hit in found)


def _same_kind_of_tensor(as_reference, answer: Any) -> bool:
    from course_helpers.checking import diagnosis as dx

    entry = dx.describe(as_reference.reference)
    if dx.kind_of(entry) != "tensor" or dx.kind_of(answer) != "tensor":
        return True
    return all(entry[flag] == answer[flag] for flag in ("requires_grad", "is_leaf"))


def _same_changes(as_reference, answer: dict) -> bool:
    """The function changed its inputs exactly as the entry's function does."""
    from course_helpers.checking import diagnosis as dx
    from course_helpers.checking.function_judge import reference_runs
    from course_helpers.checking.submissions import CASE_SEED
    from course_helpers.environment.notebook import cpu_generator
    from course_helpers.lessons.model import fresh_rng

    made = fresh_rng(lambda: as_reference.cases(cpu_generator(CASE_SEED)))
    cases = [tuple(args) for args in made]
    wanted = reference_runs(as_reference, cases)
    for run, want in zip(answer["runs"], wanted, strict=True):
        if run["mutated"] != want["mutated"]:
            return False
        for mine, theirs, changed in zip(
            run["args_after"], want["args_after"], want["mutated"], strict=True
        ):
            if changed and theirs is not None:
                if not dx.diagnose_tensor(mine, theirs).passed:
                    return False
    return True
