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
