"""``judge(exercise, submission)``: compare a recorded answer with the reference.

Pure and runs anywhere: in the kernel for instant feedback, and in the grader's own
process for grading. One judge per exercise kind (``JUDGES``); the value, choice and error
judges live here, the autograd and function judges in their own modules.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings

from course_helpers.checking import diagnosis as dx
from course_helpers.checking import predictions as pred
from course_helpers.checking.autograd_judge import judge_autograd, task_context
from course_helpers.checking.function_judge import judge_function
from course_helpers.checking.submissions import SUBMISSION_FORMAT


def judge(exercise, submission: dict) -> dx.Diagnosis:
    """Compare a submission with the exercise's reference. Pure; never raises; silent of
    the warnings its test inputs make (see :func:`quiet`). References and the catalogue's
    wrong answers are computed in a fresh kernel's state (``lessons.model.known_state``),
    whatever the notebook left switched."""
    from course_helpers.lessons.model import known_state

    with quiet(), known_state():
        return _judge(exercise, submission)


@contextlib.contextmanager
def quiet():
    """A block that shows no warnings: judging runs the reference, the catalogue's wrong
    answers and (while collecting) the learner's function on the exercise's test inputs, and
    an edge case such as a one-row input makes torch warn (``std(): degrees of freedom is
    <= 0``) about an input the learner never wrote. Warnings the learner's own cell raises
    outside ``check`` are untouched."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _judge(exercise, submission: dict) -> dx.Diagnosis:
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
        if _run_failed(exercise, answer):  # lesson 13: a rank crashed or the ranks hung
            message = answer["message"]
            return dx.Diagnosis("error", message, True, mistake=run_failure_question(message))
        if _not_answered(exercise, answer):
            return dx.not_attempted()
        judge_kind = JUDGES[exercise.kind]
        if exercise.kind == "value":
            answer = _as_reference_float(exercise, answer)
        verdict = judge_kind(exercise, answer)
        if verdict.wrong_format and exercise.kind in ("choice", "error"):
            return verdict  # a prediction in the wrong form: say that, and nothing else
        if not getattr(exercise, "reveal_values", True):  # before the explanation, kept
            from course_helpers.checking.reveal import conceal

            verdict = conceal(exercise, answer, verdict)
        step_order = (submission.get("method") or {}).get("step_order")
        if (verdict.status == "failed" or verdict.learner_error) and not step_order:
            # (a step in the wrong order is named by the method note below instead: it can
            # give the same values as a different typical mistake)
            verdict = _explain_misconception(exercise, answer, verdict, submission.get("code"))
        if "method" in submission and verdict.status in ("passed", "failed"):
            verdict = _with_method_note(exercise, submission["method"], verdict)
        if not verdict.passed and verdict.status != "not_attempted":
            verdict = _with_uncalled_note(submission.get("code"), verdict)
        return _with_notebook_state(submission.get("notebook"), verdict)
    except Exception as err:
        from course_helpers.errors import ReferenceHidden

        if isinstance(err, ReferenceHidden):  # a graded kernel: recorded, judged by the grader
            return dx.Diagnosis("error", str(err))
        return dx.Diagnosis("error", checker_failed(err))


def _run_failed(exercise, answer) -> bool:
    """The answer is the ``RunFailed`` that lesson 13's ``run_on_two_ranks`` gives back."""
    return (
        exercise.kind != "error"
        and dx.kind_of(answer) == "exception"
        and answer.get("name") == "RunFailed"
    )


def run_failure_question(message: str) -> str:
    """The first hint after a failed two-rank run: a question about the failure it reports
    ("" when the failure says nothing a question could follow; the tiers come then)."""
    text = message.lower()
    if "filenotfounderror" in text or "no such file" in text:
        return (
            "One rank looked for a file that was not there yet: what makes that rank wait "
            "until another rank has finished writing it?"
        )
    if "did not finish within" in text or "timed out" in text:
        return (
            "The ranks waited for each other: which collective (all_reduce, barrier) does one "
            "rank call that the other never reaches?"
        )
    return ""


def _not_answered(exercise, answer) -> bool:
    """The stub ``...`` (or None, except for an error exercise, where None means "no error")."""
    if exercise.kind == "error":
        return dx.kind_of(answer) == "ellipsis"
    return dx.is_missing(answer)


def _with_method_note(exercise, record, verdict: dx.Diagnosis) -> dx.Diagnosis:
    """A right value reached by a method the task forbids does not pass."""
    from course_helpers.checking.method_checks import verdict_note

    note = verdict_note(exercise, record, values_right=verdict.passed)
    if not note:
        return verdict
    if verdict.passed:
        text = "The values are right, but not the way the task asks. " + note
        return dx.Diagnosis("failed", text, mistake=note)
    text = verdict.observed  # the note is more specific than the generic advice
    for line in note.split("\n"):
        text = _merged(text, line)
    return dx.Diagnosis(
        "failed", text, mistake=verdict.mistake or note, misconception=verdict.misconception
    )


def _merged(message: str, line: str) -> str:
    """``line`` added to ``message``: as a new paragraph, or, when ``message`` already has a
    paragraph that says the same "Your code calls `x`", at the end of that one."""
    lead, colon, rest = line.partition(": ")
    if lead.startswith("Your code ") and colon:
        paragraphs = message.split("\n")
        for index, paragraph in enumerate(paragraphs):
            if paragraph.startswith(f"{lead}: "):
                paragraphs[index] = f"{paragraph} {rest[:1].upper()}{rest[1:]}"
                return "\n".join(paragraphs)
    return f"{message}\n{line}"


def _with_uncalled_note(code, verdict: dx.Diagnosis) -> dx.Diagnosis:
    """A wrong answer whose code names a method without calling it (``opt.zero_grad``): the
    line does nothing, and no error says so. Named first thing (the hint follows it)."""
    from course_helpers.checking.evidence import uncalled

    lines = list(dict.fromkeys(uncalled(code)))
    if not lines or verdict.status == "error" and not verdict.learner_error:
        return verdict
    shown = " and ".join(f"`{line}`" for line in lines)
    what = "them" if len(lines) > 1 else "it"
    note = (
        f"Your code has {shown} on a line of its own, without parentheses: that names the "
        f"method but does not call {what}, so the line does nothing (and no error says so). "
        f"Call {what}: `{lines[0]}()`."
    )
    question = f"What does the line `{lines[0]}` do without parentheses?"
    return dataclasses.replace(verdict, message=f"{verdict.observed}\n{note}", mistake=question)


# the first hint after a check that found recording left off
GRAD_OFF_QUESTION = (
    "Is gradient recording on in your notebook now? `torch.is_grad_enabled()` tells you; which "
    "of your statements switched it off without a `with` block?"
)


def _with_notebook_state(state, verdict: dx.Diagnosis) -> dx.Diagnosis:
    """An answer checked while the notebook has gradient recording switched off does not pass:
    the cell (or one before it) left the notebook broken for every later cell."""
    from course_helpers.checking.left_behind import notebook_state_text

    note = notebook_state_text(state)
    if not note or verdict.status not in ("passed", "failed", "error"):
        return verdict
    if verdict.passed:
        return dx.Diagnosis("failed", note, mistake=GRAD_OFF_QUESTION)
    if verdict.status == "error" and not verdict.learner_error:
        return verdict
    return dx.Diagnosis(
        verdict.status,
        f"{verdict.message}\n{note}",
        verdict.learner_error,
        mistake=verdict.mistake or GRAD_OFF_QUESTION,
        misconception=verdict.misconception,
    )


def _explain_misconception(exercise, answer, verdict: dx.Diagnosis, code=None) -> dx.Diagnosis:
    """A failed answer that is a catalogued typical mistake gets that mistake explained;
    its mechanism only as far as the recorded ``code`` shows it (``misconceptions.explain``)."""
    from course_helpers.checking import misconceptions

    found = misconceptions.match(exercise, answer, JUDGES)
    if found is None:
        return verdict
    explained = misconceptions.explain(found, code)
    generic = f": {pred.WORK_IT_OUT}."
    observed = verdict.observed  # the explanation is more specific than the generic advice
    if verdict.message.endswith(generic):  # a prediction: the explanation replaces the nudge
        text = f"{verdict.message.removesuffix(generic)}: {explained}"
    elif not exercise.reveal_values and explained[:1].islower() and "\n" not in observed:
        # a by-hand answer's observation ("Your value is ... smaller than expected."): its
        # explanations are written, as a prediction's are, to continue that sentence
        text = f"{observed.removesuffix('.')}: {explained}"
    else:
        text = f"{observed}\n{explained}"  # (a lower-case start may be a name: "w's ...")
    # a function that raises keeps its "error" status (its own code raised)
    return dx.Diagnosis(
        verdict.status,
        text,
        verdict.learner_error,
        mistake=found.hint_text,
        misconception=found.label,
    )


def _judge_value(exercise, answer) -> dx.Diagnosis:
    verdict = dx.diagnose(
        answer,
        exercise.reference,
        rtol=exercise.rtol,
        atol=exercise.atol,
        context=task_context(exercise),
    )
    return _with_passed_note(verdict, answer)


def _as_reference_float(exercise, answer):
    """For a task that asks for numbers, not a dtype: a floating answer in the reference's
    floating dtype (``any_float_dtype``), an integer one in its integer dtype
    (``any_integer_dtype``); the values compared as they are."""
    import torch

    reference = exercise.reference
    if not (
        dx.kind_of(answer) == "tensor"
        and answer["data"] is not None
        and isinstance(reference, torch.Tensor)
    ):
        return answer
    floats = (
        getattr(exercise, "any_float_dtype", False)
        and answer["data"].is_floating_point()
        and reference.is_floating_point()
    )
    integers = (
        getattr(exercise, "any_integer_dtype", False)
        and _is_integer(answer["data"].dtype)
        and _is_integer(reference.dtype)
    )
    if not (floats or integers):
        return answer
    dtype = dx.dtype_name(reference.dtype)
    data = answer["data"].to(reference.dtype)
    return {**answer, "dtype": dtype, "data": data, "given_dtype": answer["dtype"]}


def _is_integer(dtype) -> bool:
    import torch

    return not dtype.is_floating_point and not dtype.is_complex and dtype != torch.bool


def _with_passed_note(verdict: dx.Diagnosis, answer) -> dx.Diagnosis:
    if verdict.passed and dx.kind_of(answer) == "tensor" and answer["data"] is None:
        return dx.passed(
            f"Correct: shape {dx.fmt_shape(answer['shape'])}, dtype torch.{answer['dtype']}, "
            "on the 'meta' device (a meta tensor has no values to compare)."
        )
    if verdict.passed and dx.kind_of(answer) == "tensor":
        dtype = answer.get("given_dtype", answer["dtype"])  # as given (any_float_dtype)
        return dx.passed(
            f"Correct: shape {dx.fmt_shape(answer['shape'])}, dtype torch.{dtype}, "
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
    elif kind == "str":  # its name is right too: "ValueError", "torch.OutOfMemoryError"
        name = _error_name(answer, expected.__mro__, exercise.explanations)
        if name is None:
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


def _error_name(answer: str, mro, explanations) -> str | None:
    """The exception a string answer names, spelt exactly (judged like the class itself);
    None for any other string (then the answer is in the wrong form, and told so)."""
    import builtins

    name = answer.strip().rsplit(".", 1)[-1]
    if not name.isidentifier() or name == "None":
        return None
    if _canonical_error_name(name, mro, explanations) != name:  # "indexerror": not its name
        return None
    known = isinstance(getattr(builtins, name, None), type) or name in {c.__name__ for c in mro}
    return name if known or name in explanations or name.endswith(("Error", "Exception")) else None


def _error_as_string(answer: str, expected: type | None) -> dx.Diagnosis:
    """A string that is not an exception's exact name: rewrite it as the class (or name)."""
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
        f"quotes), or its exact name, {name!r}."
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


JUDGES = {
    "value": _judge_value,
    "function": judge_function,
    "autograd": judge_autograd,
    "choice": _judge_choice,
    "error": _judge_error,
}


def checker_failed(err: Exception) -> str:
    return (
        f"The checker itself failed ({type(err).__name__}: {err}). This is a bug in the "
        "course, not in your answer: please report it."
    )
