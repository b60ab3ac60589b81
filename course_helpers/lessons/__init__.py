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
            f"not {type(exercise_id).__name__}: the id comes first, as in "
            "check('01.arange_grid', answer) or hint('01.arange_grid')."
        )
    by_id = {e.id: e for e in catalog()}
    if exercise_id in by_id:
        return by_id[exercise_id]
    close = _close_ids(exercise_id, list(by_id))
    suggestion = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise CourseError(
        f"There is no exercise {exercise_id!r}.{suggestion} "
        "Copy the id from the exercise's check(...) line."
    )


def _close_ids(wrong: str, ids: list[str]) -> list[str]:
    """The ids a mistyped one most likely meant: the same name after the dot ("1.arange_grid"
    is '01.arange_grid', never '13.averaged_gradient'), else similar ids, those of the lesson
    its number names first."""
    import difflib

    number, _, name = wrong.strip().partition(".")
    same_name = [i for i in ids if i.partition(".")[2] == name]
    if same_name:
        return same_name[:3]
    lesson = f"{int(number):02d}." if number.isdigit() else ""
    in_lesson = [i for i in ids if lesson and i.startswith(lesson)]
    close = difflib.get_close_matches(wrong, in_lesson, n=3) if in_lesson else []
    if not close and name:  # the name alone, in the lesson named or anywhere
        by_name = {i.partition(".")[2]: i for i in (in_lesson or ids)}
        close = [by_name[n] for n in difflib.get_close_matches(name, by_name, n=3)]
    return close or difflib.get_close_matches(wrong, ids, n=3)


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
