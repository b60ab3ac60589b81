"""Compact error display for notebooks: the learner's frames and the whole message, without
the frames inside torch and other libraries (installed by ``setup_notebook()``)."""

from __future__ import annotations

import os
import sys

TRACEBACKS_ENV = "COURSE_TRACEBACKS"  # "full": show every frame, as plain IPython does


def compact_tracebacks(enable: bool = True) -> bool:
    """Show errors in this IPython kernel without the frames inside libraries.

    A ``RuntimeError`` from deep inside torch otherwise prints screens of torch's own code
    before the one line that matters. With this on, a traceback keeps: every frame of the
    learner's code (notebook cells and the learner's own files), the exception type and its
    complete message, chained exceptions (each filtered the same way), and one closing line
    saying how many frames were hidden and that ``%tb`` prints the whole traceback.
    Hidden: frames in installed packages (site-packages, so torch, numpy, ...), in Python's
    standard library and in ``course_helpers``. The error itself is unchanged (type, message,
    ``sys.last_traceback``, ``%debug``), so nbval compares it as before.
    ``COURSE_TRACEBACKS=full`` (or ``compact_tracebacks(False)``) turns it off.

    Returns whether it is on (False outside IPython).
    """
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return False
    if not enable:
        if id(shell) in _installed:  # only undo our own handler, never someone else's
            shell.set_custom_exc((), None)
            _installed.discard(id(shell))
        return False
    shell.set_custom_exc((Exception,), _show_compact)
    _installed.add(id(shell))
    return True


_installed: set[int] = set()


def _library_dirs() -> tuple[str, ...]:
    import site
    import sysconfig

    dirs = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        dirs.update(site.getsitepackages())
    except AttributeError:  # some virtualenv versions
        pass
    dirs.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # course_helpers
    return tuple(sorted(os.path.join(os.path.realpath(d), "") for d in dirs if d))


def _library(filename: str, dirs: tuple[str, ...]) -> str:
    """The package a frame's file belongs to ("torch", "numpy", ...), or "" for the learner's."""
    if not filename or filename.startswith("<"):
        return ""  # code typed into a cell or exec()'d: the learner's
    path = os.path.realpath(filename)
    parts = path.replace(os.sep, "/").split("/")
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            rest = parts[parts.index(marker) + 1 :]
            return rest[0].split(".")[0] if rest else marker
    for folder in dirs:
        if path.startswith(folder):
            if os.path.basename(folder.rstrip(os.sep)) == "course_helpers":
                return "course_helpers"
            return STDLIB
    return ""


STDLIB = "Python's standard library"


def _filtered(tb, dirs, keep_first: bool, hidden: dict[str, int]):
    """A copy of the traceback chain ``tb`` without library frames (counted in ``hidden``)."""
    import types

    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    kept = []
    for index, item in enumerate(frames):
        owner = (
            "" if keep_first and index == 0 else _library(item.tb_frame.f_code.co_filename, dirs)
        )
        if owner:
            hidden[owner] = hidden.get(owner, 0) + 1
        else:
            kept.append(item)
    new = None
    for item in reversed(kept):
        new = types.TracebackType(new, item.tb_frame, item.tb_lasti, item.tb_lineno)
    return new


def _chain(value) -> list:
    """The exception and those chained to it (``raise ... from``, or raised while handling)."""
    seen, todo, out = set(), [value], []
    while todo:
        exc = todo.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        out.append(exc)
        todo += [exc.__cause__, exc.__context__]
    return out


def hidden_note(hidden: dict[str, int]) -> str:
    total = sum(hidden.values())
    owners = ", ".join(sorted(hidden, key=lambda name: (-hidden[name], name)))
    frames = "frame" if total == 1 else "frames"
    return f"({total} {frames} inside {owners} hidden; run %tb to see the full traceback)"


def _show_compact(shell, etype, value, tb, tb_offset=None):
    """IPython custom exception handler: the learner's frames and the whole message."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    if sys.version_info >= (3, 12):
        sys.last_exc = value
    if os.environ.get(TRACEBACKS_ENV, "").strip().lower() == "full" or hasattr(
        value, "_render_traceback_"
    ):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    dirs = _library_dirs()
    hidden: dict[str, int] = {}
    chain = _chain(value)
    saved = [(exc, exc.__traceback__) for exc in chain]
    try:
        filtered_tb = _filtered(tb, dirs, keep_first=True, hidden=hidden)
        for exc, original in saved:
            if exc is not value:
                exc.__traceback__ = _filtered(original, dirs, keep_first=False, hidden=hidden)
        stb = shell.InteractiveTB.structured_traceback(
            etype, value, filtered_tb, tb_offset=tb_offset
        )
    except Exception:  # never lose an error: show it the usual way
        for exc, original in saved:
            exc.__traceback__ = original
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    finally:
        for exc, original in saved:
            exc.__traceback__ = original
    if hidden:
        stb = [*stb, hidden_note(hidden)]
    shell._showtraceback(etype, value, stb)
    return None
