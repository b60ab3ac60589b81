"""The misconception catalogue: typical wrong answers and what each one must be told.

A learner's wrong answer usually comes from one of a few misunderstandings. Each entry
here is one of them for one exercise: the wrong answer itself (built lazily, like a
reference) and the message that names the misunderstanding. When a checked answer fails
and it *is* a catalogued wrong answer (judged exactly like an answer against a reference:
same shape, dtype and values, the same outputs on every test input, the same option), the
feedback explains that misunderstanding instead of only saying that the answer is wrong.

Entries live per lesson in ``course_helpers/misconceptions/lessonNN.py`` as a list named
``MISCONCEPTIONS``; ``tests/test_misconceptions.py`` checks every entry: it must fail its
exercise and its message must be what the learner sees.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Misconception", "catalogue", "for_exercise", "match"]


@dataclass(frozen=True)
class Misconception:
    """One typical wrong answer to one exercise.

    exercise_id  the exercise, e.g. "03.permute_shape".
    label        a few words naming the misunderstanding (for tests and reports).
    build_answer zero-argument callable returning the wrong answer, in the form the learner
                 would pass to ``check`` (a tensor, a number, a function, an option key,
                 an exception class).
    message      what the learner is told: names the misunderstanding and how to think
                 instead, without giving the answer away.
    hint         optional: the first hint after this mistake (a question that leads away
                 from it); by default the hint restates ``message``.
    """

    exercise_id: str
    label: str
    build_answer: Callable[[], Any]
    message: str
    hint: str = ""

    @property
    def hint_text(self) -> str:
        return self.hint or self.message


@functools.lru_cache(maxsize=1)
def catalogue() -> tuple[Misconception, ...]:
    """Every catalogued misconception, lesson by lesson."""
    found: list[Misconception] = []
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("lesson"))
    for name in names:
        found.extend(importlib.import_module(f"{__name__}.{name}").MISCONCEPTIONS)
    return tuple(found)


def for_exercise(exercise_id: str) -> tuple[Misconception, ...]:
    """The misconceptions catalogued for one exercise (possibly none)."""
    return tuple(m for m in catalogue() if m.exercise_id == exercise_id)


def match(exercise, answer: Any, judges: dict) -> Misconception | None:
    """The catalogued misconception that ``answer`` (a submission's answer record) is,
    or None. ``judges`` maps an exercise kind to its judge (``checking._JUDGES``).

    A wrong function matches an entry when it behaves the same on every test input: the
    same outputs, the same error type where the entry raises, and the same changes to its
    inputs where the entry changes them in place."""
    for entry in for_exercise(exercise.id):
        as_reference = dataclasses.replace(exercise, build_reference=entry.build_answer)
        try:
            if not judges[exercise.kind](as_reference, answer).passed:
                continue
            if exercise.kind != "function" or _same_changes(as_reference, answer):
                return entry
        except Exception:  # a broken entry must never break the learner's check
            continue
    return None


def _same_changes(as_reference, answer: dict) -> bool:
    """The function changed its inputs exactly as the entry's function does."""
    from course_helpers import checking
    from course_helpers import diagnosis as dx
    from course_helpers.notebook import cpu_generator

    made = checking.fresh_rng(lambda: as_reference.cases(cpu_generator(checking.CASE_SEED)))
    cases = [tuple(args) for args in made]
    wanted = checking._reference_runs(as_reference, cases)
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
