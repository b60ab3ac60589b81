"""``check(exercise_id, answer)``: collect an answer, judge it, show the verdict.

Checking is split in two so that grading can happen outside the learner's kernel:

- :func:`collect` runs where the answer lives (the learner's kernel) and turns it into a
  *submission*: plain records (see ``course_helpers.diagnosis.describe``). For a function
  exercise it calls the learner's function on deep copies of the exercise's cases and
  records outputs, exceptions and whether an input was modified.
- :func:`judge` compares a submission with the reference. It is pure and runs anywhere:
  in the kernel for instant feedback, and in the grader's own process for grading.

``COURSE_STRICT=1`` makes a check that does not pass raise :class:`ExerciseFailed`;
``COURSE_GRADING_DIR`` (set by the grader) makes ``check`` keep every submission in memory
for the grader, which collects them after the notebook ran (``dump_for_grader``).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_helpers import diagnosis as dx
from course_helpers import predictions as pred
from course_helpers.errors import CourseError, OneLineTraceback
from course_helpers.exercises.model import AUTOGRAD_ATTRIBUTES, fresh_rng

STRICT_ENV = "COURSE_STRICT"
GRADING_ENV = "COURSE_GRADING_DIR"
SUBMISSION_FORMAT = 1
CASE_SEED = 0  # function exercises: cases(cpu_generator(CASE_SEED)), same in kernel and grader
AUTOGRAD_ORDER = AUTOGRAD_ATTRIBUTES  # the order in which they are checked


class ExerciseFailed(OneLineTraceback, AssertionError):
    """Raised by ``check`` in strict mode (``COURSE_STRICT=1``) when an answer does not pass."""


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one ``check``: ``.passed``, ``.status``, ``.message`` (plain text).

    Displays itself as a compact coloured verdict in Jupyter (text/html) and as plain
    text elsewhere; both forms are deterministic.
    """

    exercise_id: str
    title: str
    status: str
    message: str
    hint_count: int = 0  # hints on offer for this result (0: none, e.g. a bug in the course)
    # from the progress file (0 when progress is off): this check's attempt number, and the
    # attempt on which the exercise first passed
    attempt: int = 0
    first_passed: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        from course_helpers.feedback import result_text

        return result_text(self)

    def __repr__(self) -> str:
        return str(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from course_helpers.feedback import result_bundle

        return result_bundle(self)

    def _ipython_display_(self):
        from course_helpers.feedback import show_result

        show_result(self)


# --------------------------------------------------------------------------- check


def check(exercise_id: str, answer: Any = ..., *, demo: bool = False) -> CheckResult:
    """Check your answer to exercise ``exercise_id`` and show what, if anything, is wrong.

    ``answer`` is what the exercise asks for: a tensor, a number, your function itself,
    an option key, or an exception class. Never raises while you learn; with
    ``COURSE_STRICT=1`` a failed check raises ``ExerciseFailed``.
    ``demo=True`` (for a lesson's worked example, not the learner's attempt) shows the
    verdict but records nothing: no progress, no attempt for the grader.
    """
    from course_helpers.exercises import get

    try:
        exercise = get(exercise_id)
    except CourseError as err:
        return _finish(CheckResult(str(exercise_id), "", "error", str(err)))
    except Exception as err:  # e.g. a lesson module with a bug: still no traceback here
        message = f"The exercise list could not be loaded ({type(err).__name__}: {err})."
        return _finish(CheckResult(str(exercise_id), "", "error", message))
    try:
        submission = collect(exercise, answer)
    except Exception as err:  # a bug in the checker must not become the learner's traceback
        return _finish(_internal_error(exercise, err))
    try:
        if not demo:
            _save_for_grader(exercise.id, submission)
    except Exception as err:
        _note_once(f"answer not recorded for grading: {err}")
    verdict = judge(exercise, submission)
    # an "error" that is the course's fault (not the learner's code) offers no hint
    helps = verdict.status != "error" or verdict.learner_error
    result = CheckResult(
        exercise.id,
        exercise.title,
        verdict.status,
        verdict.message,
        len(exercise.hints) if helps else 0,
    )
    if not demo:
        _note_for_hints(exercise, verdict)
        attempts = _record_progress(exercise, result)
        if attempts is not None:
            result = dataclasses.replace(
                result, attempt=attempts.count, first_passed=attempts.first_passed
            )
    return _finish(result)


def strict_mode() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _finish(result: CheckResult) -> CheckResult:
    if strict_mode() and not result.passed:
        raise ExerciseFailed(f"{result.exercise_id} ({result.status}): {result.message}")
    return result


def _internal_error(exercise, err: Exception) -> CheckResult:
    return CheckResult(exercise.id, exercise.title, "error", _checker_failed(err))


def _checker_failed(err: Exception) -> str:
    return (
        f"The checker itself failed ({type(err).__name__}: {err}). This is a bug in the "
        "course, not in your answer: please report it."
    )


def _record_progress(exercise, result: CheckResult):
    """Record the result; the attempts so far (None when progress is off or failed)."""
    try:
        from course_helpers.progress_store import record

        return record(exercise.id, exercise.lesson, result.status)
    except Exception as err:  # progress must never break a learner's cell
        _note_once(f"progress not saved: {err}")
        return None


def _note_for_hints(exercise, verdict: dx.Diagnosis) -> None:
    """The next hint addresses the mistake this verdict diagnosed (if any)."""
    from course_helpers.hints import note_check

    note_check(exercise.id, "" if verdict.passed else verdict.mistake)


_noted: set[str] = set()


def _note_once(text: str) -> None:
    """One line on stderr, once per process for each kind of trouble."""
    kind = text.split(":", 1)[0]
    if kind not in _noted:
        _noted.add(kind)
        print(f"note: {text}", file=sys.stderr)


_grader_log: list[tuple[str, dict]] = []  # every attempt, in order, while being graded


def _save_for_grader(exercise_id: str, submission: dict) -> None:
    """While graded (``COURSE_GRADING_DIR`` set), keep every attempt in memory; the grader
    asks for them with :func:`dump_for_grader` only after the notebook's own cells ran, into a
    folder it creates then (so no cell can pre-fill it)."""
    if os.environ.get(GRADING_ENV):
        _grader_log.append((exercise_id, submission))


def dump_for_grader(folder: str | os.PathLike) -> None:
    """Write the attempts kept by ``check`` into ``folder`` (called by the grader only)."""
    import torch

    torch.save(
        {"format": SUBMISSION_FORMAT, "attempts": list(_grader_log)}, Path(folder) / "log.pt"
    )


def submission_path(folder: str | os.PathLike, exercise_id: str) -> Path:
    """Where the grader finds the last submission for ``exercise_id``."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in exercise_id)
    return Path(folder) / f"{safe}.pt"


def load_submission(path: str | os.PathLike) -> dict:
    """Read a submission safely (``weights_only=True``: no code runs while loading)."""
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)


# --------------------------------------------------------------------------- collect


def collect(exercise, answer: Any) -> dict:
    """Turn ``answer`` into a serialisable submission for ``exercise`` (runs in the kernel)."""
    submission = {
        "format": SUBMISSION_FORMAT,
        "exercise_id": exercise.id,
    }
    if exercise.kind == "function" and callable(answer):
        submission["answer"] = _run_function(exercise, answer)
    else:
        submission["answer"] = dx.describe(answer)
    if dx.is_record(answer):  # a hand-made record is not an answer (the grader rejects it)
        submission["learner_record"] = True
    from course_helpers import method_checks

    if method_checks.wants_inspection(exercise):
        try:  # what the learner's code uses; "not checked" on trouble
            submission["method"] = method_checks.inspect_answer(exercise, answer)
        except Exception:
            submission["method"] = method_checks.not_checked()
    return submission


def _run_function(exercise, function) -> dict:
    from course_helpers.notebook import cpu_generator

    runs = []
    for args in fresh_rng(lambda: exercise.cases(cpu_generator(CASE_SEED))):
        # the cases are built afresh on every call: the function gets them, ``before`` is the
        # one copy kept to see what it changed
        given = tuple(args)
        run = _call_and_record(function, given)
        runs.append(run)
    name = getattr(function, "__name__", type(function).__name__)
    return {"_r": "function_run", "name": name, "runs": runs, "stub": _is_untouched_stub(function)}


def _call_and_record(function, given: tuple) -> dict:
    """Call ``function(*given)``: its output or error, what it changed, the tensors after."""
    before = copy.deepcopy(given)
    run = {"output": None, "error": None, "mutated": [], "args_after": []}
    try:
        run["output"] = dx.describe(function(*given))
    except Exception as err:
        run["error"] = {"type": type(err).__name__, "message": _first_line(str(err))}
    run["mutated"] = [_mutation(b, a) for b, a in zip(before, given, strict=True)]
    run["args_after"] = [dx.describe(a) if _is_tensor(a) else None for a in given]
    return run


def _is_untouched_stub(function) -> bool:
    """True for a function whose body is still only ``...`` (a docstring may stay), or that
    calls such a function defined next to it (a probe around a stub, as in 11.evaluate)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    if _does_nothing(code):
        return True
    names = getattr(function, "__globals__", {})
    return any(_does_nothing(getattr(names.get(name), "__code__", None)) for name in code.co_names)


def _does_nothing(code) -> bool:
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


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _mutation(before: Any, after: Any) -> str:
    """What the function changed in an input ("" for nothing): "values", "requires_grad"
    or "training" (a module's mode). Looks inside lists, tuples, dicts, modules (their
    parameters and buffers) and optimizers (their state)."""
    import torch

    if isinstance(before, torch.nn.Module) and isinstance(after, torch.nn.Module):
        if before.training != after.training:
            return "training"
        return _mutation(before.state_dict(keep_vars=True), after.state_dict(keep_vars=True))
    if isinstance(before, torch.optim.Optimizer) and isinstance(after, torch.optim.Optimizer):
        return _mutation(before.state_dict(), after.state_dict())
    if isinstance(before, dict) and isinstance(after, dict):
        if list(before) != list(after):
            return "values"
        return _first_change(list(before.values()), list(after.values()))
    if isinstance(before, (list, tuple)) and isinstance(after, (list, tuple)):
        if type(before) is not type(after) or len(before) != len(after):
            return "values"
        return _first_change(before, after)
    if isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor):
        if before.shape != after.shape or before.dtype != after.dtype:
            return "values"
        if before.device != after.device or before.stride() != after.stride():
            return "values"
        if before.device.type != "meta":  # meta tensors have no values to compare
            if not bool(dx.close_mask(after.detach().cpu(), before.detach().cpu()).all()):
                return "values"
        if before.requires_grad != after.requires_grad:
            return "requires_grad"
        return ""
    if isinstance(before, torch.Tensor) or isinstance(after, torch.Tensor):
        return "values"  # a tensor replaced by something else, or the other way round
    plain = (bool, int, float, complex, str, type(None))
    if isinstance(before, plain) and isinstance(after, plain):
        return "values" if before != after and before == before else ""  # nan == nan here
    return ""  # other objects (a deep copy is never `==` the original): nothing to say


def _first_change(before, after) -> str:
    for b, a in zip(before, after, strict=True):
        change = _mutation(b, a)
        if change:
            return change
    return ""


# --------------------------------------------------------------------------- judge


def judge(exercise, submission: dict) -> dx.Diagnosis:
    """Compare a submission with the exercise's reference. Pure; never raises."""
    try:
        if submission.get("exercise_id") != exercise.id:
            return dx.Diagnosis("error", "This submission belongs to another exercise.")
        if submission.get("format") != SUBMISSION_FORMAT:
            return dx.Diagnosis(
                "error",
                f"This answer was recorded in format {submission.get('format')!r}, but this "
                f"version of the course reads format {SUBMISSION_FORMAT}: run the notebook again "
                "with the current course_helpers.",
            )
        answer = submission.get("answer")
        if _not_answered(exercise, answer):
            return dx.not_attempted()
        judge_kind = _JUDGES[exercise.kind]
        verdict = judge_kind(exercise, answer)
        if verdict.wrong_format and exercise.kind in ("choice", "error"):
            return verdict  # a prediction in the wrong form: say that, and nothing else
        if not getattr(exercise, "reveal_values", True):  # before the explanation, kept
            from course_helpers.reveal import conceal

            verdict = conceal(exercise, answer, verdict)
        if verdict.status == "failed" or verdict.learner_error:
            verdict = _explain_misconception(exercise, answer, verdict)
        if "method" in submission and verdict.status in ("passed", "failed"):
            verdict = _with_method_note(exercise, submission["method"], verdict)
        return verdict
    except Exception as err:
        from course_helpers.redact import ReferenceHidden

        if isinstance(err, ReferenceHidden):  # a graded kernel: recorded, judged by the grader
            return dx.Diagnosis("error", str(err))
        return dx.Diagnosis("error", _checker_failed(err))


def _not_answered(exercise, answer) -> bool:
    """The stub ``...`` (or None, except for an error exercise, where None means "no error")."""
    if exercise.kind == "error":
        return dx.kind_of(answer) == "ellipsis"
    return dx.is_missing(answer)


def _with_method_note(exercise, record, verdict: dx.Diagnosis) -> dx.Diagnosis:
    """A right value reached by a method the task forbids does not pass."""
    from course_helpers.method_checks import verdict_note

    note = verdict_note(exercise, record, values_right=verdict.passed)
    if not note:
        return verdict
    if verdict.passed:
        text = "The values are right, but not the way the task asks. " + note
        return dx.Diagnosis("failed", text, mistake=note)
    return dx.Diagnosis("failed", f"{verdict.message}\n{note}", mistake=verdict.mistake or note)


def _explain_misconception(exercise, answer, verdict: dx.Diagnosis) -> dx.Diagnosis:
    """A failed answer that is a catalogued typical mistake gets that mistake explained."""
    from course_helpers import misconceptions

    found = misconceptions.match(exercise, answer, _JUDGES)
    if found is None:
        return verdict
    generic = f": {pred.WORK_IT_OUT}."
    if verdict.message.endswith(generic):  # a prediction: the explanation replaces the nudge
        text = f"{verdict.message.removesuffix(generic)}: {found.message}"
    else:
        text = f"{verdict.message}\n{found.message}"
    # a function that raises keeps its "error" status (its own code raised)
    return dx.Diagnosis(verdict.status, text, verdict.learner_error, mistake=found.hint_text)


def _judge_value(exercise, answer) -> dx.Diagnosis:
    verdict = dx.diagnose(
        answer,
        exercise.reference,
        rtol=exercise.rtol,
        atol=exercise.atol,
    )
    return _with_passed_note(verdict, answer)


def _with_passed_note(verdict: dx.Diagnosis, answer) -> dx.Diagnosis:
    if verdict.passed and dx.kind_of(answer) == "tensor" and answer["data"] is None:
        return dx.passed(
            f"Correct: shape {dx.fmt_shape(answer['shape'])}, dtype torch.{answer['dtype']}, "
            "on the 'meta' device (a meta tensor has no values to compare)."
        )
    if verdict.passed and dx.kind_of(answer) == "tensor":
        return dx.passed(
            f"Correct: shape {dx.fmt_shape(answer['shape'])}, dtype torch.{answer['dtype']}, "
            "and the values match."
        )
    return verdict


def _judge_choice(exercise, answer) -> dx.Diagnosis:
    reference = exercise.reference
    if exercise.options is None:
        return pred.diagnose_prediction(answer, reference, rtol=exercise.rtol, atol=exercise.atol)
    keys = list(exercise.options)
    listed = ", ".join(repr(k) for k in keys)
    if not isinstance(answer, (str, int)) or isinstance(answer, bool):
        return dx.failed(
            f"Your answer is {dx.python_type_name(answer)}; answer with one option key: {listed}."
        )
    key = _match_option(str(answer), exercise.options)
    if key is None:
        return dx.failed(f"{answer!r} is not one of the options; answer with one of {listed}.")
    explanation = str(exercise.explanations.get(key, ""))
    if str(key) == str(reference):
        return dx.passed(("Correct. " + explanation).strip())
    return dx.failed((f"{key!r} is not the right option. " + explanation).strip())


def _match_option(answer: str, options):
    """The option key the answer names: the key itself, any case, or the option's text."""
    text = answer.strip()
    for matches in (
        lambda k, v: str(k) == text,
        lambda k, v: str(k).lower() == text.lower(),
        lambda k, v: str(v).strip().lower() == text.lower(),
    ):
        found = [k for k, v in options.items() if matches(k, v)]
        if len(found) == 1:
            return found[0]
    return None


def _judge_error(exercise, answer) -> dx.Diagnosis:
    expected = exercise.reference
    kind = dx.kind_of(answer)
    if kind == "none" or expected is None:
        return _judge_no_error(exercise, answer)
    if kind in ("exception_class", "exception"):
        name = answer["name"]
    elif kind == "str":
        return _error_as_string(answer, expected)
    else:
        return dx.wrong_format(
            f"Your answer is {dx.python_type_name(answer)}; answer with an exception class "
            f"itself, such as {ERROR_EXAMPLE} (no quotes), or None for no error."
        )
    name = _canonical_error_name(name, expected.__mro__, exercise.explanations)
    explanation = exercise.explanations.get(name, "")
    if name == expected.__name__:
        return dx.passed(("Correct. " + explanation).strip())
    if name in {c.__name__ for c in expected.__mro__[1:]}:
        return dx.failed(
            f"{name} is too general: the error raised is a more specific kind of {name}. "
            "Run the code and read the first word of the error's last line."
        )
    import builtins

    known = isinstance(getattr(builtins, name, None), type) or name.endswith(("Error", "Exception"))
    if not known:
        return dx.failed(
            f"{name!r} is not the name of an exception class: answer with a class such as "
            f"{ERROR_EXAMPLE}."
        )
    return dx.failed((f"{name} is not the error this code raises. " + explanation).strip())


# the class named in format messages: an example of the form, never an exercise's answer
ERROR_EXAMPLE = "KeyError"


def _error_as_string(answer: str, expected: type | None) -> dx.Diagnosis:
    """One format per kind: the class itself. Rewrite the learner's own string as a class."""
    import builtins

    mro = expected.__mro__ if expected is not None else (BaseException,)
    name = _canonical_error_name(answer.strip().rsplit(".", 1)[-1], mro, {})
    if name == "None":
        return dx.wrong_format(
            f"Your answer is the string {answer!r}: for no error, answer None itself (no quotes)."
        )
    if not (isinstance(getattr(builtins, name, None), type) or name in {c.__name__ for c in mro}):
        return dx.wrong_format(
            f"Your answer is the string {answer!r}, which is not the name of an exception "
            f"class either: answer with a class itself, such as {ERROR_EXAMPLE} (no quotes)."
        )
    return dx.wrong_format(
        f"Your answer is the string {answer!r}: answer with the class itself, e.g. {name} (no "
        "quotes), not its name as a string."
    )


def _judge_no_error(exercise, answer) -> dx.Diagnosis:
    """None answers "no error"; an exercise whose code raises nothing has reference None."""
    said_none = dx.kind_of(answer) == "none"
    explanations = exercise.explanations
    if exercise.reference is None and said_none:
        return dx.passed(("Correct. " + str(explanations.get("None", ""))).strip())
    if said_none:
        return dx.failed(
            "None means the code raises no error, but this code does raise one: run it and "
            "read the last line of the error message; it starts with the class."
        )
    if isinstance(answer, str):
        return _error_as_string(answer, None)
    if dx.kind_of(answer) not in ("exception_class", "exception"):
        return dx.wrong_format(
            f"Your answer is {dx.python_type_name(answer)}; answer with an exception class "
            f"itself, such as {ERROR_EXAMPLE} (no quotes), or None for no error."
        )
    name = answer["name"]
    return dx.failed((f"{name} is not it. " + str(explanations.get(name, ""))).strip())


def _canonical_error_name(name: str, mro, explanations) -> str:
    """'indexerror' -> 'IndexError' when exactly one known exception name matches."""
    import builtins

    known = {c.__name__ for c in mro} | {"None"}
    known |= {
        k for k, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
    }
    known |= {str(k) for k in explanations}
    if name in known:
        return name
    matches = {k for k in known if k.lower() == name.lower()}
    return matches.pop() if len(matches) == 1 else name


def _judge_autograd(exercise, answer) -> dx.Diagnosis:
    expected = dx.describe(exercise.reference)
    if dx.kind_of(answer) != "tensor":
        return dx.failed(
            f"Your answer is {dx.python_type_name(answer)}, but the tensor itself is expected "
            "(pass the tensor whose autograd state is checked)."
        )
    if _looks_like_its_grad(answer, expected):
        return dx.failed(
            "Your answer looks like a gradient (its values are the expected tensor's .grad): "
            "pass the tensor itself (e.g. w), not its .grad (w.grad)."
        )
    wanted = set(exercise.attributes)
    for attribute in AUTOGRAD_ORDER:
        if attribute not in wanted:
            continue
        verdict = _AUTOGRAD_CHECKS[attribute](exercise, answer, expected)
        if not verdict.passed:
            return verdict
    shown = ", ".join(a for a in AUTOGRAD_ORDER if a in wanted)
    return dx.passed(f"Correct: {shown} as expected.")


def _looks_like_its_grad(got: dict, expected: dict) -> bool:
    """The answer is a plain tensor equal to the reference's .grad (e.g. check(ID, w.grad))."""
    grad = expected["grad"]
    if grad is None or got["requires_grad"] or got["grad"] is not None:
        return False
    # a gradient that equals the tensor's own values proves nothing
    return _same_values(got, grad) and not _same_values(got, expected)


def _same_values(a: dict, b: dict) -> bool:
    if a["shape"] != b["shape"] or a["dtype"] != b["dtype"]:
        return False
    if a["data"] is None or b["data"] is None:
        return False
    return dx._all_close(a["data"], b["data"])


# requires_grad advice per Exercise.context: (when True is expected, when False is)
_REQUIRES_GRAD_ADVICE = {
    "no_graph": (
        "it should be computed with grad mode on, from tensors that require grad.",
        "compute it under `with torch.no_grad():` so no graph is recorded (a .detach() at "
        "the end still records one first).",
    ),
    "keep_graph": (
        "it must stay connected to the graph: build it with torch operations from the "
        "tensors that require grad (no .item(), no torch.tensor(...) of numbers, no "
        "torch.no_grad()); a new leaf with requires_grad=True would be cut off from them.",
        "it should not track gradients here.",
    ),
}


def _check_flag(name: str, explain_true: str, explain_false: str):
    def checker(exercise, got, expected) -> dx.Diagnosis:
        if got[name] == expected[name]:
            return dx.passed()
        when_true, when_false = explain_true, explain_false
        context = getattr(exercise, "context", "")
        if name == "requires_grad" and context in _REQUIRES_GRAD_ADVICE:
            when_true, when_false = _REQUIRES_GRAD_ADVICE[context]
        return dx.failed(
            f"Your tensor has {name}={got[name]} but {name}={expected[name]} is expected: "
            + (when_true if expected[name] else when_false)
        )

    return checker


def _check_grad_fn(exercise, got, expected) -> dx.Diagnosis:
    mine, wanted = got["grad_fn"], expected["grad_fn"]
    if mine == wanted:
        return dx.passed()
    if wanted is None:
        return dx.failed(
            f"Your tensor has grad_fn {mine}, but no grad_fn is expected: it should be a leaf or "
            "detached from the graph (.detach() or torch.no_grad())."
        )
    if mine is None:
        return dx.failed(
            f"Your tensor has no grad_fn, but {wanted} is expected: it should be the result of "
            "an operation on a tensor that requires grad."
        )
    return dx.failed(
        f"Your tensor's grad_fn is {mine} but {wanted} is expected: the last operation that "
        "made it is not the expected one."
    )


def _check_version(exercise, got, expected) -> dx.Diagnosis:
    mine, wanted = got["version"], expected["version"]
    if mine == wanted:
        return dx.passed()
    return dx.failed(
        f"Your tensor's _version is {mine} but {wanted} is expected: _version counts the "
        "in-place operations on a tensor (add_, mul_, +=, x[...] = ...), so yours had "
        f"{mine} and the expected one {wanted}."
    )


def _check_value(exercise, got, expected) -> dx.Diagnosis:
    return dx.diagnose_tensor(
        got,
        expected,
        rtol=exercise.rtol,
        atol=exercise.atol,
    )


def _check_grad(exercise, got, expected) -> dx.Diagnosis:
    mine, wanted = got["grad"], expected["grad"]
    if wanted is None and mine is None:
        return dx.passed()
    if wanted is None:
        return dx.failed(
            "Your tensor has a .grad, but none is expected: backward() should not reach it "
            "(or its .grad should be reset to None)."
        )
    if mine is None:
        return dx.failed(_grad_is_none(got))
    return dx.diagnose_tensor(
        mine,
        wanted,
        rtol=exercise.rtol,
        atol=exercise.atol,
        subject="Your tensor's .grad",
        grad_context=True,
    )


def _grad_is_none(got: dict) -> str:
    """Why a tensor has no .grad, as far as its record tells."""
    if not got["requires_grad"]:
        return (
            "Your tensor's .grad is None, and it does not require grad, so backward() never "
            "fills it: it should be a tensor that requires grad (or made from one)."
        )
    if not got["is_leaf"]:
        return (
            f"Your tensor's .grad is None: it is not a leaf (grad_fn {got['grad_fn']}), and "
            "backward() keeps .grad only for leaves. Call .retain_grad() on it before "
            "backward() (calling it afterwards is too late), or, if backward() never ran, "
            "call it on the result."
        )
    return (
        "Your tensor's .grad is None: it is a leaf that requires grad, so backward() has not "
        "reached it: call .backward() on a result computed from it (or, if you set .grad to "
        "None yourself, run backward() again afterwards)."
    )


_AUTOGRAD_CHECKS = {
    "requires_grad": _check_flag(
        "requires_grad",
        "create it with requires_grad=True (or call .requires_grad_()).",
        "use .detach() or compute it inside `with torch.no_grad():` (for a leaf such as a "
        "parameter: create it without requires_grad=True, or freeze it with "
        ".requires_grad_(False)).",
    ),
    "is_leaf": _check_flag(
        "is_leaf",
        "a leaf is a tensor you created yourself, not the result of an operation on tensors "
        "that require grad.",
        "it should be the result of an operation on a tensor that requires grad.",
    ),
    "grad_fn": _check_grad_fn,
    "version": _check_version,
    "value": _check_value,
    "grad": _check_grad,
}


def _judge_function(exercise, answer) -> dx.Diagnosis:
    if dx.kind_of(answer) != "function_run":
        return dx.failed(
            f"Your answer is {dx.python_type_name(answer)}, but this exercise checks your "
            "function itself: pass the function without calling it, e.g. check(ID, my_function)."
        )
    from course_helpers.notebook import cpu_generator

    made = fresh_rng(lambda: exercise.cases(cpu_generator(CASE_SEED)))
    cases = [tuple(args) for args in made]
    runs = answer["runs"]
    if len(runs) != len(cases):
        return dx.Diagnosis("error", "The submission does not match this exercise's test inputs.")
    reference = exercise.reference
    expected_runs = _reference_runs(exercise, cases)
    names = _parameter_names(reference)
    all_none = all(
        run["error"] is None and dx.kind_of(run["output"]) == "none" and not any(run["mutated"])
        for run in runs
    )
    reference_acts = exercise.mutates_input or any(
        dx.kind_of(r["output"]) != "none" for r in expected_runs
    )
    if all_none and reference_acts:
        # only the untouched stub is "not attempted" (a submission without "stub" is older)
        if answer.get("stub", True):
            return dx.not_attempted(
                "Not attempted yet: your function does nothing yet (it returns None and changes "
                "nothing). Write its body in place of the `...`."
            )
        if exercise.mutates_input:
            return dx.failed(
                "Your function changes nothing for every input: it should modify its input in "
                "place (e.g. x.mul_(...), x[...] = ...)."
            )
        return dx.failed("Your function returns None for every input: did you forget `return`?")
    if all(r["error"] and r["error"]["type"] == "NotImplementedError" for r in runs):
        return dx.not_attempted("Not attempted yet: your function raises NotImplementedError.")
    for number, (args, run, wanted) in enumerate(
        zip(cases, runs, expected_runs, strict=True), start=1
    ):
        where = f"For input {number} of {len(cases)} ({_describe_args(args, names)})"
        verdict = _judge_run(exercise, args, run, wanted, where)
        if not verdict.passed:
            return verdict
    return dx.passed(f"Correct on all {len(cases)} test inputs, edge cases included.")


_reference_cache: dict[tuple, list[dict]] = {}


def _reference_runs(exercise, cases: list[tuple]) -> list[dict]:
    """The reference's records on the cases; computed once per exercise and process
    (the cases come from a fixed seed, so they are the same every time)."""
    key = (exercise.id, exercise.build_reference, exercise.cases)
    if key not in _reference_cache:
        reference = exercise.reference
        _reference_cache[key] = [_reference_run(reference, args) for args in cases]
    return _reference_cache[key]


def _reference_run(reference, args: tuple) -> dict:
    return _call_and_record(reference, copy.deepcopy(args))  # ``args`` stay as they were


def _judge_run(exercise, args: tuple, run: dict, wanted: dict, where: str) -> dx.Diagnosis:
    error = run["error"]
    if wanted["error"] is not None:
        if error is not None and error["type"] == wanted["error"]["type"]:
            return dx.passed()
        return dx.failed(
            f"{where}: your function should raise {wanted['error']['type']}, "
            + ("but it returned normally." if error is None else f"but it raised {error['type']}.")
        )
    if error is not None:
        return dx.Diagnosis(
            "error",
            f"{where}, your function raised {error['type']}: {error['message']}",
            learner_error=True,
        )
    if exercise.mutates_input:
        for i, (mine, theirs) in enumerate(
            zip(run["args_after"], wanted["args_after"], strict=True)
        ):
            if theirs is None:
                continue
            verdict = dx.diagnose_tensor(
                mine,
                theirs,
                rtol=exercise.rtol,
                atol=exercise.atol,
                subject=f"argument {i} after your function ran",
            )
            if not verdict.passed:
                return dx.failed(f"{where}: {_lower_first(verdict.message)}")
    else:
        # a change the reference makes too (e.g. training a model) is part of the task
        allowed = wanted["mutated"]
        for i, changed in enumerate(run["mutated"]):
            if changed == allowed[i]:
                continue
            if changed == "training":
                return dx.failed(
                    f"{where}: your function switched its input argument {i} (a module) between "
                    "training and evaluation mode and left it there. Put it back as it was, "
                    "e.g. was_training = model.training ... model.train(was_training)."
                )
            if changed == "requires_grad":
                return dx.failed(
                    f"{where}: your function changed its input argument {i}'s requires_grad "
                    "(e.g. x.requires_grad_()). Leave the input as it is; if you need a tensor "
                    "that tracks gradients, make a new one, e.g. x.detach().requires_grad_()."
                )
            if changed:
                return dx.failed(
                    f"{where}: your function changed its input argument {i} in place (e.g. "
                    "x += 1, x.add_(...), x[...] = ...). Work on a copy or use out-of-place "
                    "operations such as x = x + 1."
                )
    if dx.kind_of(wanted["output"]) == "none":
        return dx.passed()  # an in-place function: its return value is not checked
    inputs = tuple(a for a in run["args_after"] if a is not None)
    verdict = dx.diagnose(
        run["output"],
        wanted["output"],
        rtol=exercise.rtol,
        atol=exercise.atol,
        inputs=inputs,
        subject="Your function's output",
        in_function=True,
    )
    if verdict.status == "not_attempted":
        return dx.failed(f"{where}: your function returned None; did you forget `return`?")
    if verdict.passed:
        return verdict
    return dx.Diagnosis(
        verdict.status, f"{where}: {_lower_first(verdict.message)}", verdict.learner_error
    )


def _lower_first(text: str) -> str:
    if text.startswith(("Your ", "Item ", "Every ")):
        return text[0].lower() + text[1:]
    return text


def _parameter_names(function) -> list[str]:
    import inspect

    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def _describe_args(args: tuple, names: list[str]) -> str:
    parts = []
    for i, value in enumerate(args):
        label = names[i] if i < len(names) else f"argument {i}"
        if _is_tensor(value):
            dtype = dx.dtype_name(value.dtype)
            where = " on meta" if value.device.type == "meta" else ""  # never cpu/cuda: stable
            parts.append(f"{label}: shape {dx.fmt_shape(value.shape)} {dtype}{where}")
        elif isinstance(value, (bool, int, float, str)) or value is None:
            parts.append(f"{label}={value!r}")
        else:
            parts.append(f"{label}: {type(value).__name__}")
    return ", ".join(parts) if parts else "no arguments"


_JUDGES = {
    "value": _judge_value,
    "function": _judge_function,
    "autograd": _judge_autograd,
    "choice": _judge_choice,
    "error": _judge_error,
}
