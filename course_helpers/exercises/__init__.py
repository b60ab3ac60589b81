"""The course's exercise catalog.

``catalog()`` lists every exercise in course order; ``get(exercise_id)`` finds
one. Exercises are defined per lesson in ``lessonNN.py`` modules (a list named
``EXERCISES``), imported only when the catalog is first asked for.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from course_helpers.errors import CourseError
from course_helpers.exercises.model import KINDS, Exercise

__all__ = ["Exercise", "KINDS", "catalog", "get", "lessons"]


@functools.lru_cache(maxsize=1)
def catalog() -> tuple[Exercise, ...]:
    """Every exercise, in course order (lesson by lesson, in definition order)."""
    found: list[Exercise] = []
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("lesson"))
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
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
