"""The exception types the helpers raise: bad input (``CourseError``), hidden answer keys."""


class OneLineTraceback:
    """Mixin for exceptions a learner should see as one clear line in a notebook."""

    def _render_traceback_(self):
        # IPython calls this instead of printing the full traceback, so a learner
        # sees one clear line rather than the helpers' internals.
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


class CourseError(OneLineTraceback, Exception):
    """A helper was used in a way it cannot handle.

    The message always names the problem and the fix. In notebooks it is shown
    without a traceback into the helpers' internals (``_render_traceback_``).
    """


class ReferenceHidden(CourseError):
    """Raised by a reference while a notebook is being graded (see ``grading.redact``)."""


def require_flag(value, name: str, where: str) -> bool:
    """``value`` if it is ``True`` or ``False``; else a ``CourseError`` naming ``name``."""
    if value is True or value is False:
        return value
    raise CourseError(f"{where}: {name} is True or False, not {_shown(value)}.")


def require_whole_number(value, name: str, where: str, low: int, high: int) -> int:
    """``value`` as an ``int`` if it is a whole number from ``low`` to ``high``; else a
    ``CourseError`` naming ``name`` and the range."""
    import numbers

    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if low <= int(value) <= high:
            return int(value)
    raise CourseError(
        f"{where}: {name} is a whole number from {low} to {high}, not {_shown(value)}."
    )


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"
