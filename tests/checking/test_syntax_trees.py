"""Trees of Python source are built one thread at a time (course_helpers.checking.syntax_trees):
on CPython 3.11 two threads building at once can fail with "AST constructor recursion depth
mismatch" (an honest notebook of a generated class, graded with --jobs 2 in a CI run of
`make test`, came back "could not run" with it)."""

from __future__ import annotations

import ast
import re
import sys
import threading
import time
from pathlib import Path

from course_helpers.checking import syntax_trees

PACKAGE = Path(syntax_trees.__file__).resolve().parents[1]
SOURCE = (PACKAGE / "lessons" / "lesson05" / "exercises.py").read_text()


class _Finaliser:
    def __del__(self):
        time.sleep(0)  # Python code run by the garbage collector: a thread may switch here


def _errors_while_two_threads_parse(parse, seconds: float = 2.0) -> list[str]:
    """SystemErrors seen while two threads parse a lesson module over and over, each making
    garbage whose finalisers run in the middle of the other's tree building."""
    import gc

    errors: list[str] = []
    deadline = time.monotonic() + seconds

    def work():
        while time.monotonic() < deadline:
            a, b = _Finaliser(), _Finaliser()
            a.other, b.other = b, a
            del a, b
            try:
                parse(SOURCE)
            except SystemError as error:
                errors.append(str(error))

    threshold = gc.get_threshold()
    gc.set_threshold(50)
    try:
        threads = [threading.Thread(target=work) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.set_threshold(*threshold)
    return errors


def test_two_threads_building_trees_here_never_fail():
    assert _errors_while_two_threads_parse(syntax_trees.build) == []


def test_the_race_is_real_on_python_3_11():
    """The same load with ast.parse itself: on 3.11 it fails, so the test above can fail."""
    errors = _errors_while_two_threads_parse(ast.parse)
    if sys.version_info[:2] == (3, 11):
        assert errors and "recursion depth mismatch" in errors[0], errors


def test_every_tree_of_the_package_is_built_here():
    direct = re.compile(r"\bast\.(parse|literal_eval)\(|\bcompile\([^)]*PyCF_ONLY_AST")
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "syntax_trees.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if direct.search(line)
    ]
    assert found == []


def test_literal_reads_what_literal_eval_reads():
    assert syntax_trees.literal("'05.leaf_grads'") == "05.leaf_grads"
    assert syntax_trees.literal(' "x" ') == "x"
