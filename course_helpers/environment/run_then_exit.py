"""Run a script as ``__main__``, then end the process at once: lesson 13's torchrun workers.

``python -m course_helpers.environment.run_then_exit script.py ARGS...`` runs the script
exactly as ``python script.py ARGS...`` would (same ``sys.argv``, same ``__main__``, an
uncaught exception printed and exit status 1, ``sys.exit(n)`` kept), then flushes stdout and
stderr and calls ``os._exit`` with that status. It skips the interpreter's shutdown and C++
static destructors: there, a gloo process group that outlived ``destroy_process_group()``
(torch 2.13 keeps it alive once ``torch._dynamo`` is imported after ``init_process_group``,
as the first ``torch.optim`` optimizer does) still has worker threads, and on a loaded
machine one of them can abort the process as it exits ("terminate called without an
active exception") after the script's work is done and saved.

It also makes stdout and stderr write each line whole. torchrun starts its workers with
``python -u``, which writes every piece of a ``print`` (each argument, each separator)
separately; the ranks share the launch's stdout, so two ranks printing at once cut into
each other's lines ("rankrank 0 threads 1"). Line buffering writes a line in one go.
"""

from __future__ import annotations

import io
import os
import runpy
import sys
import traceback


def run(argv: list[str]) -> int:
    """Run ``argv[0]`` with ``argv[1:]`` as ``__main__``; return its exit status."""
    if not argv:
        print(
            "usage: python -m course_helpers.environment.run_then_exit SCRIPT [ARGS...]",
            file=sys.stderr,
        )
        return 2
    script = argv[0]
    if not os.path.isfile(script):
        print(
            f"run_then_exit: no script at {script!r} (give the path of a .py file)", file=sys.stderr
        )
        return 2
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python script.py` sets it
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)  # sys.exit("message") prints it, status 1
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _write_whole_lines() -> None:
    """Line-buffer stdout and stderr, which ``python -u`` leaves unbuffered."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True, write_through=False)
        except (AttributeError, ValueError, io.UnsupportedOperation):  # not a text stream
            pass


def main() -> None:
    _write_whole_lines()
    code = run(sys.argv[1:])
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing left to flush
            pass
    os._exit(code)  # no interpreter shutdown, no C++ static destructors


if __name__ == "__main__":
    main()
