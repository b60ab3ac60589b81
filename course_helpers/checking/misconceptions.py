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

__all__ = ["continued", "explain", "match"]


def match(exercise, answer: Any, judges: dict) -> Misconception | None:
    """The catalogued misconception that ``answer`` (a submission's answer record) is,
    or None. ``judges`` maps an exercise kind to its judge (``checking.JUDGES``).

    A wrong function matches an entry when it behaves the same on every test input: the
    same outputs, the same error type where the entry raises, and the same changes to its
    inputs where the entry changes them in place. A wrong autograd answer matches when it is
    the same kind of tensor as well (a leaf or not, requiring grad or not), whatever
    attributes the exercise compares: "your answer is u" is never said of ``a.grad``.

    A value or function whose result still records a graph, where the expected one records
    none, is matched again by its values alone: an entry about the values ("the first
    derivative") then explains them, and the graph is told once they are right."""
    found = _match(exercise, answer, judges)
    if found is None and exercise.kind in ("value", "function") and _records_a_graph(answer):
        if not _records_a_graph(_expected_record(exercise, answer)):
            found = _match(exercise, _without_graph(answer), judges)
    return found


def _match(exercise, answer: Any, judges: dict) -> Misconception | None:
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
        return (
            f"{entry.message}\nIf your code {ev.lead_in(entry.evidence)}: "
            f"{continued(entry.cause_for(None))}"
        )
    if not all(hits.values()):
        return entry.message
    seen = [_only(pattern, hits[pattern]) for pattern in entry.evidence]
    cause = entry.cause_for([hit for pattern in entry.evidence for hit in hits[pattern]])
    return f"{entry.message}\nYour code {ev.lead_in(seen)}: {continued(cause)}"


def continued(cause: str) -> str:
    """The cause after "Your code calls `x`: ", its first word in lower case when it is an
    ordinary capitalised word ("Wrapping the numbers ..."; "DDP", "torch.x" stay)."""
    word = cause.split(" ", 1)[0]
    if word[:1].isupper() and (len(word) == 1 or word[1:].isalpha() and word[1:].islower()):
        return cause[:1].lower() + cause[1:]
    return cause


def _only(pattern: str, found: list[str]) -> str:
    """``"call:detach|tensor"`` narrowed to the alternatives the code holds: ``"call:tensor"``."""
    kind = pattern.partition(":")[0]
    return f"{kind}:" + "|".join(hit.partition(":")[2] for hit in found)


def _records_a_graph(record: Any) -> bool:
    """Some tensor of ``record`` (a tensor, a sequence, a function's outputs) requires grad."""
    from course_helpers.checking import diagnosis as dx

    kind = dx.kind_of(record)
    if kind == "tensor":
        return bool(record.get("requires_grad"))
    if kind in ("list", "tuple"):
        return any(_records_a_graph(item) for item in record["items"])
    if kind == "function_run":
        return any(_records_a_graph(run.get("output")) for run in record["runs"])
    return False


def _without_graph(record: Any) -> Any:
    """``record`` as if every tensor in it had been detached (its values kept)."""
    from course_helpers.checking import diagnosis as dx

    kind = dx.kind_of(record)
    if kind == "tensor":
        return {**record, "requires_grad": False, "is_leaf": True, "grad_fn": None}
    if kind in ("list", "tuple"):
        return {**record, "items": [_without_graph(item) for item in record["items"]]}
    if kind == "function_run":
        runs = [{**run, "output": _without_graph(run.get("output"))} for run in record["runs"]]
        return {**record, "runs": runs}
    return record


def _expected_record(exercise, answer: Any) -> Any:
    """The reference's record in the form of ``answer`` (a function's: its runs' outputs)."""
    from course_helpers.checking import diagnosis as dx

    if exercise.kind != "function":
        return dx.describe(exercise.reference)
    from course_helpers.checking.function_judge import reference_runs
    from course_helpers.checking.submissions import CASE_SEED
    from course_helpers.environment.notebook import cpu_generator
    from course_helpers.lessons.model import fresh_rng

    cases = [tuple(args) for args in fresh_rng(lambda: exercise.cases(cpu_generator(CASE_SEED)))]
    return {"_r": "function_run", "runs": reference_runs(exercise, cases)}


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
