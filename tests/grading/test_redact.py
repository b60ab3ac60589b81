"""The exercise catalogue that graded kernels see: every exercise, no answer keys."""

import importlib.util
import inspect

import pytest

from course_helpers.grading import redact
from course_helpers.lessons import catalog

LESSONS = sorted(redact.SOURCE.glob("lesson*/exercises.py"))


@pytest.fixture(scope="module")
def redacted(tmp_path_factory):
    folder = redact.write_redacted_lessons(tmp_path_factory.mktemp("keys") / "lessons")
    modules = {}
    for path in sorted(folder.glob("lesson*/exercises.py")):
        lesson = path.parent.name
        spec = importlib.util.spec_from_file_location(f"redacted_{lesson}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[lesson] = (module, path.read_text())
    return modules


def test_every_lesson_module_is_copied(redacted):
    assert sorted(redacted) == [p.parent.name for p in LESSONS]


def test_the_same_exercises_remain_without_references_or_solutions(redacted):
    for exercise in catalog():
        module, _ = redacted[f"lesson{exercise.id[:2]}"]
        twin = next(e for e in module.EXERCISES if e.id == exercise.id)
        assert (twin.kind, twin.hints, twin.cases is None) == (
            exercise.kind,
            exercise.hints,
            exercise.cases is None,
        )
        assert twin.solution == ""
        with pytest.raises(redact.ReferenceHidden, match="not available while a notebook"):
            twin.build_reference()


def test_reference_functions_are_gone_from_the_source(redacted):
    checked = 0
    for exercise in catalog():
        reference = exercise.reference
        if exercise.kind != "function" or reference.__qualname__ != reference.__name__:
            continue  # closures (e.g. 11.evaluate's probe) are covered by their inner function
        _, text = redacted[f"lesson{exercise.id[:2]}"]
        assert inspect.getsource(reference).strip() not in text, exercise.id
        assert f"def {reference.__name__}(" not in text, exercise.id
        checked += 1
    assert checked >= 10


def test_what_the_kernel_needs_to_record_an_answer_stays(redacted):
    module, text = redacted["lesson13"]
    assert callable(module.run_on_two_ranks)  # imported by lesson 13's exercise notebook
    module, _ = redacted["lesson11"]
    assert callable(module.probe)


def test_nothing_singles_out_a_choice_exercises_answer(redacted, tmp_path):
    # issue 23, item 5: the right option was the only one without an entry in `explanations`
    # (and the misconceptions name wrong answers): 2/2 in all 22 choice exercises
    choices = [e for e in catalog() if e.kind == "choice" and e.options]
    assert len(choices) >= 20
    for exercise in choices:
        module, _ = redacted[f"lesson{exercise.id[:2]}"]
        twin = next(e for e in module.EXERCISES if e.id == exercise.id)
        assert dict(twin.explanations) == {}, exercise.id
    folder = redact.write_redacted_lessons(tmp_path / "lessons")
    for path in sorted(folder.glob("lesson*/misconceptions.py")):
        spec = importlib.util.spec_from_file_location(f"redacted_m_{path.parent.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.MISCONCEPTIONS == [], path.parent.name


def test_notebooks_that_start_together_share_one_redacted_copy(monkeypatch):
    """The grader's first notebooks ask for the copy at once (--jobs): it is written once."""
    import threading

    from course_helpers.grading import sandbox

    monkeypatch.setattr(sandbox, "_REDACTED", [])
    written = []
    real = redact.write_redacted_lessons
    monkeypatch.setattr(
        redact, "write_redacted_lessons", lambda target: written.append(target) or real(target)
    )
    copies = []
    threads = [threading.Thread(target=lambda: copies.append(sandbox._redacted_lessons()))]
    threads.append(threading.Thread(target=lambda: copies.append(sandbox._redacted_lessons())))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(written) == 1 and copies == [written[0], written[0]]
