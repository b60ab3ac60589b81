"""The course's content for checking: every lesson's exercises and typical wrong answers.

Each lesson is one small package, ``lessonNN/``, with two modules side by side:

- ``exercises.py``: a list ``EXERCISES`` of :class:`~course_helpers.lessons.model.Exercise`;
- ``misconceptions.py``: a list ``MISCONCEPTIONS`` of
  :class:`~course_helpers.lessons.model.Misconception`, the typical wrong answers to those
  exercises and what each one must be told.

``catalog()`` lists every exercise in course order and ``get(exercise_id)`` finds one;
``catalogue()`` and ``for_exercise(exercise_id)`` do the same for misconceptions. The
lesson modules are imported only when a list is first asked for. Adding lesson 14 means
adding ``lesson14/`` with those two modules (and its notebooks).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from course_helpers.errors import CourseError
from course_helpers.lessons.model import KINDS, Exercise, Misconception

__all__ = [
    "Exercise",
    "KINDS",
    "Misconception",
    "catalog",
    "catalogue",
    "for_exercise",
    "get",
    "lessons",
]


def _lesson_modules(kind: str) -> list:
    """Every lesson's ``exercises`` or ``misconceptions`` module, in course order."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("lesson"))
    return [importlib.import_module(f"{__name__}.{name}.{kind}") for name in names]


@functools.lru_cache(maxsize=1)
def catalog() -> tuple[Exercise, ...]:
    """Every exercise, in course order (lesson by lesson, in definition order)."""
    found: list[Exercise] = []
    for module in _lesson_modules("exercises"):
        found.extend(module.EXERCISES)
    ids = [e.id for e in found]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RuntimeError(f"duplicate exercise ids in the catalog: {duplicates}")
    return tuple(found)


def get(exercise_id: str) -> Exercise:
    """The exercise with this id; a clear ``CourseError`` for an unknown or mistyped id."""
    if not isinstance(exercise_id, str):
        raise CourseError(
            "An exercise id is a string such as '01.arange_grid', "
            f"not {type(exercise_id).__name__}."
        )
    by_id = {e.id: e for e in catalog()}
    if exercise_id in by_id:
        return by_id[exercise_id]
    import difflib

    close = difflib.get_close_matches(exercise_id, by_id, n=3)
    suggestion = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise CourseError(
        f"There is no exercise {exercise_id!r}.{suggestion} "
        "Copy the id from the exercise's check(...) line."
    )


def lessons() -> list[str]:
    """Lesson stems that have exercises, in course order."""
    seen: dict[str, None] = {}
    for e in catalog():
        seen.setdefault(e.lesson, None)
    return list(seen)


@functools.lru_cache(maxsize=1)
def catalogue() -> tuple[Misconception, ...]:
    """Every catalogued misconception, lesson by lesson."""
    found: list[Misconception] = []
    for module in _lesson_modules("misconceptions"):
        found.extend(module.MISCONCEPTIONS)
    return tuple(found)


def for_exercise(exercise_id: str) -> tuple[Misconception, ...]:
    """The misconceptions catalogued for one exercise (possibly none)."""
    return tuple(m for m in catalogue() if m.exercise_id == exercise_id)
