"""``@repair``: an exercise that rewrites one component of a script (lesson 12) keeps the
script's working version in use until the learner has written the new one.

An exercise notebook's stub of such a component is a ``def`` or ``class`` whose body is only
``...``. Run as it is, that stub would replace the script's function by one that returns
``None`` (or its class by an empty one), and every later cell that relies on the script would
silently misbehave. Decorated with ``@repair``, an untouched stub leaves the name bound to
the version it had before, marked *unanswered*: the script keeps working, and ``check``
still reports the exercise as not attempted. A stub with a body is the learner's repair and
replaces the old version as written.
"""

from __future__ import annotations

import functools
import sys

UNANSWERED = "__course_unanswered__"

# what every class body gets without the learner writing anything
_CLASS_METADATA = {
    "__module__",
    "__qualname__",
    "__doc__",
    "__firstlineno__",
    "__static_attributes__",
    "__dict__",
    "__weakref__",
    "__annotations__",
    "__annotate__",
    "__orig_bases__",
    "__classcell__",
}


def repair(component):
    """Use ``component`` (a function or class) from now on, unless its body is still only
    ``...``: then keep the version the name had before (the script's, or an earlier repair),
    marked so that ``check`` says "not attempted"."""
    if not _untouched(component):
        return component
    previous = sys._getframe(1).f_globals.get(component.__name__)
    if previous is None or previous is component or previous is ...:
        return component
    if unanswered(previous):
        return previous
    if isinstance(component, type) and isinstance(previous, type):
        namespace = {
            UNANSWERED: True,
            "__module__": previous.__module__,
            "__qualname__": previous.__qualname__,
            "__doc__": previous.__doc__,
        }
        return type(previous)(previous.__name__, (previous,), namespace)
    if callable(previous) and not isinstance(component, type):

        @functools.wraps(previous)
        def keep(*args, **kwargs):
            return previous(*args, **kwargs)

        setattr(keep, UNANSWERED, True)
        return keep
    return component


def unanswered(component) -> bool:
    """True for ``...`` and for a script's version kept by ``@repair`` in place of a stub."""
    if component is ...:
        return True
    return bool(getattr(component, "__dict__", {}).get(UNANSWERED, False))


def _untouched(component) -> bool:
    if isinstance(component, type):
        return not (set(vars(component)) - _CLASS_METADATA)
    return does_nothing(getattr(component, "__code__", None))


def does_nothing(code) -> bool:
    """The bytecode of ``def f(...): ...`` (or a body of only a docstring): return None."""
    import dis
    import types

    if not isinstance(code, types.CodeType):
        return False
    steps = [
        (i.opname, i.argval)
        for i in dis.get_instructions(code)
        if i.opname not in ("RESUME", "NOP", "CACHE")
    ]
    return steps in ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])
