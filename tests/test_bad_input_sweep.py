"""Issue 37, item 13: bad input to every public helper and every command-line option gets a
clear message, never a traceback from inside the helpers, never a hang.

The helpers: every name of ``course_helpers.__all__`` that is called (not the exception
types or the result record), each of its parameters in turn given each value of ``BAD``
(the others valid), the result displayed as a notebook would, then a tensor printed (a call
may not break later output: ``setup_notebook(precision=-1)`` did). An outcome is fine when
the call returns or raises ``CourseError``. The command lines: each option of each command
given a value that cannot work (a missing file, a folder, a FIFO, a number out of range),
the rest valid: the exit status must be non-zero and the output hold no traceback.
"""

import contextlib
import inspect
import io
import os
import signal
from pathlib import Path

import pytest
import torch

import course_helpers
from course_helpers.errors import CourseError

FIXTURES = Path(__file__).parent / "fixtures" / "grading"
SECONDS = 30  # any one call: longer is a hang


class Hang(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: int = SECONDS):
    def stop(*_):
        raise Hang(f"no answer in {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _graph():
    x = torch.ones(2, requires_grad=True)
    return (x * 2).sum()


def _freed():
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    return y


BAD = {
    "None": lambda: None,
    "-1": lambda: -1,
    "2**70": lambda: 2**70,
    "nan": lambda: float("nan"),
    "inf": lambda: float("inf"),
    "True": lambda: True,
    "empty text": lambda: "",
    "text": lambda: "nonsense",
    "list of an id": lambda: ["01.arange_grid"],
    "dict": lambda: {"a": 1},
    "bytes": lambda: b"x",
    "object": object,
    "tensor": lambda: torch.zeros(2),
    "leaf": lambda: torch.ones(2, requires_grad=True),
    "freed graph": _freed,
    "2.5": lambda: 2.5,
    "tuple": lambda: (1, 2),
}
VALID = {  # helper -> parameter -> a valid value (others keep their defaults)
    "draw_graph": {"output": _graph},
    "replay_backward": {"output": _graph},
    "torchviz_graph": {"output": _graph},
    "check": {"exercise_id": lambda: "00.how_to_run", "answer": lambda: "b"},
    "hint": {"exercise_id": lambda: "00.how_to_run"},
    "quiz": {"exercise_id": lambda: "01.quiz_numel"},
    "GraphPicture": {"nodes": lambda: course_helpers.draw_graph(_graph()).nodes, "title": str},
    "repair": {"component": lambda: lambda x: x},
    "unanswered": {"component": lambda: lambda x: x},
    "show_broadcast": {
        "column": lambda: torch.tensor([[1], [2]]),
        "row": lambda: torch.tensor([[10, 20, 30]]),
    },
}
EXTRA = [  # calls the parameter sweep cannot make: options passed through **options
    ("torchviz_graph", {"output": _freed, "show_saved": lambda: True}),
    ("torchviz_graph", {"output": _freed, "show_attrs": lambda: True}),
    ("torchviz_graph", {"output": _graph, "nonsense": lambda: 1}),
    ("draw_graph", {"output": _graph, "max_nodes": lambda: -1}),
    ("draw_graph", {"output": _graph, "nonsense": lambda: 1}),
    ("replay_backward", {"output": _freed}),
]
NOT_CALLED = {"CheckResult", "CourseError", "ExerciseFailed"}  # types, not helpers


def _helper_calls():
    calls = []
    for name in course_helpers.__all__:
        if name in NOT_CALLED:
            continue
        helper = getattr(course_helpers, name)
        named = [
            p
            for p in inspect.signature(helper).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        valid = VALID.get(name, {})
        for parameter in named:
            for label, bad in BAD.items():
                values = {k: v for k, v in valid.items() if k != parameter.name}
                values[parameter.name] = bad
                calls.append(pytest.param(name, values, id=f"{name}({parameter.name}={label})"))
    for name, values in EXTRA:
        shown = ", ".join(values)
        calls.append(pytest.param(name, values, id=f"{name}({shown})"))
    return calls


@pytest.fixture
def _quiet_session(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_PROGRESS", "off")
    monkeypatch.chdir(tmp_path)
    yield
    torch.set_printoptions(profile="default")
    torch.set_printoptions(precision=4, sci_mode=False)


@pytest.mark.parametrize(("name", "values"), _helper_calls())
def test_a_helper_answers_bad_input_with_a_clear_message(name, values, _quiet_session):
    helper = getattr(course_helpers, name)
    arguments = {key: make() for key, make in values.items()}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        with _deadline():
            try:
                shown = helper(**arguments)
                repr(shown)
                for method in ("_repr_mimebundle_", "_repr_html_"):
                    if hasattr(shown, method):
                        getattr(shown, method)()
            except CourseError:
                pass
    repr(torch.tensor([1.5, 2.25]))  # later output still works


# --------------------------------------------------------------------------- command lines


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """Paths that cannot be what an option asks for."""
    root = tmp_path_factory.mktemp("places")
    (root / "folder").mkdir()
    (root / "folder" / "keep.txt").write_text("not empty")
    os.mkfifo(root / "fifo")
    os.mkfifo(root / "fifo.ipynb")
    (root / "text.txt").write_text("not json, not a key, not a notebook")
    (root / "short.key").write_bytes(b"tiny")
    (root / "report.json").write_text('{"format": 3, "notebooks": []}')
    return root


MY_WORK = str(FIXTURES / "attacks" / "my_work.ipynb")  # no exercises: graded with no kernel
GRADE_BAD = [
    ("--timeout", ["0", "-5", "abc", str(10**9)]),
    ("--judge-timeout", ["inf", "nan", "-1", "0", "1e300"]),
    ("--memory-mb", ["0", "-1", "x", str(10**12)]),
    ("--disk-mb", ["1", "0", "-3", str(10**12)]),
    ("--processes", ["0", "-1", "many"]),
    ("--judge-memory-mb", ["0", "-1", "1.5"]),
    ("--jobs", ["0", "-2", "100000", "two"]),
    ("--kernel", [""]),
    ("--shard", ["0/3", "4/3", "1/0", "x", "1/2/3"]),
    ("--json", ["{folder}", "{root}/missing/x.json"]),
    ("--junit", ["{folder}", "{root}/missing/x.xml"]),
    ("--csv", ["{folder}", "{root}/missing/x.csv"]),
    ("--per-student", ["{text}", "{fifo}"]),
    ("--key-file", ["{folder}", "{short}", "{fifo}", "{text}"]),
    ("--results-format", ["moodle"]),
    ("--assignment", ["01_tensors"]),  # without --results-format
    ("--results", ["{root}/r.json"]),  # without --results-format
]


def _command_lines():
    lines = [
        ([], "usage"),
        (["nosuch"], "unknown command"),
        (["doctor", "--nonsense"], "unrecognized"),
        (["workspace", "--root", "{root}/missing"], "not the course's folder"),
        (["workspace", "--root", "{text}"], "not the course's folder"),
        (["workspace", "--root", "{fifo}"], "not the course's folder"),
        # (each with a path that is not a notebook: a bare `build` would build the course)
        (["build", "--jobs", "0", "{root}/missing.ipynb"], "jobs"),
        (["build", "--jobs", "x"], "invalid int"),
        (["build", "{root}/missing.ipynb"], "missing.ipynb"),
        (["build", "{fifo}"], "fifo"),
        (["build", "{folder}"], "folder"),
        (["progress", "--db", "{folder}"], "not a progress file"),
        (["progress", "--db", "{fifo}"], "not a progress file"),
        (["progress", "--db", "{text}", "--reset"], "nothing was deleted"),
        (["progress", "--nonsense"], "unrecognized"),
        (["grade"], "required"),
        (["grade", "{root}/missing.ipynb"], "no such file"),
        (["grade", "{folder}"], "nothing to grade"),
        (["grade", "{fifo}"], "refused: not a regular file"),
        (["grade", MY_WORK, MY_WORK], "keyed"),
        (["grade", MY_WORK, "--results-format", "gradescope"], "needs --assignment"),
        (["grade", MY_WORK, "--results-format", "gradescope", "--assignment", "99"], "no lesson"),
        (
            ["grade", MY_WORK, "--results-format", "prairielearn", "--assignment", "01"]
            + ["--results", "{folder}"],
            "is a folder",
        ),
        (["grade", "merge"], "required"),
        (["grade", "merge", "{report}"], "--key-file"),
        (["grade", "merge", "{root}/missing.json", "--key-file", "{key}"], "cannot be read"),
        (["grade", "merge", "{folder}", "--key-file", "{key}"], "not a regular file"),
        (["grade", "merge", "{fifo}", "--key-file", "{key}"], "not a regular file"),
        (["grade", "merge", "{text}", "--key-file", "{key}"], "not a readable JSON"),
        (["grade", "merge", "{report}", "--key-file", "{fifo}"], "not a regular file"),
        (["grade", "merge", "{report}", "--key-file", "{root}/missing.key"], "cannot be read"),
        (["autograder"], "required"),
        (["autograder", "{folder}", "--assignment", "01"], "not an empty folder"),
        (["autograder", "{text}", "--assignment", "01"], "not an empty folder"),
        (["autograder", "{root}/new", "--assignment", "nosuch"], "no lesson"),
        (["autograder", "{root}/new"], "--assignment"),
    ]
    for option, values in GRADE_BAD:
        for value in values:
            lines.append((["grade", MY_WORK, option, value], option.lstrip("-").split("-")[0]))
    return [pytest.param(argv, says, id=" ".join(argv)) for argv, says in lines]


@pytest.mark.parametrize(("argv", "says"), _command_lines())
def test_a_command_line_answers_bad_input_with_a_clear_message(argv, says, places, tmp_path):
    from course_helpers.__main__ import main

    filled = {
        "root": places,
        "folder": places / "folder",
        "fifo": places / "fifo",
        "text": places / "text.txt",
        "short": places / "short.key",
        "report": places / "report.json",
        "key": tmp_path / "grading.key",
    }
    (tmp_path / "grading.key").write_bytes(os.urandom(32))
    argv = [part.format(**filled) for part in argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _deadline():
        try:
            status = main(argv)
        except SystemExit as stop:
            status = stop.code
    said = out.getvalue() + err.getvalue()
    assert status not in (0, None), said
    assert "Traceback" not in said
    assert says.lower() in said.lower(), said
