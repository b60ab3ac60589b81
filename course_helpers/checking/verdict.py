"""The verdict on one answer (``Diagnosis``) and the tolerances answers are compared with."""

from __future__ import annotations

from dataclasses import dataclass

# torch.testing.assert_close defaults (rtol, atol); integer and bool dtypes compare exactly.
DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


# a Python float answer is compared like a float32 value unless the exercise says otherwise
PYTHON_FLOAT_TOLERANCE = DEFAULT_TOLERANCES["float32"]


NOT_ATTEMPTED_MESSAGE = (
    "Not attempted yet: replace the `...` with your answer and run the cell again."
)


@dataclass(frozen=True)
class Diagnosis:
    """The verdict on one answer: a status ("passed", "failed", "not_attempted" or "error")
    and a plain-text message."""

    status: str
    message: str
    # "error" caused by the learner's own code (their function raised): hints still help
    learner_error: bool = False
    # the answer is in the wrong form (a string for a dtype, a list for a shape): the message
    # rewrites the learner's own answer and is shown alone (nothing concealed or appended)
    wrong_format: bool = False
    # the typical mistake the answer was diagnosed as (a misconception, a forbidden pattern):
    # what the first hint after this check addresses ("" for none)
    mistake: str = ""
    # the label of the catalogued misconception the answer matched ("" for none): what the
    # learner's progress and the grader's class report count (``checking.mistakes``)
    misconception: str = ""
    # the generic fix inside ``message`` (exactly as it appears there, e.g. " Use .squeeze(0)."):
    # what holds for any answer that looks like this one. A more specific line (a catalogued
    # misconception, a method note) replaces it rather than follow it (``observed``)
    advice: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def observed(self) -> str:
        """The message without its generic advice: what was observed of the answer."""
        if self.advice and self.advice in self.message:
            return self.message.replace(self.advice, "", 1).rstrip()
        return self.message


def passed(message: str = "Correct.") -> Diagnosis:
    return Diagnosis("passed", message)


def failed(message: str) -> Diagnosis:
    return Diagnosis("failed", message)


def advised(observation: str, advice: str = "", mistake: str = "") -> Diagnosis:
    """A failed verdict: what was observed, then the generic fix (``Diagnosis.advice``)."""
    advice = f" {advice}" if advice else ""
    return Diagnosis("failed", observation + advice, mistake=mistake, advice=advice)


def wrong_format(message: str) -> Diagnosis:
    """A failed verdict that only asks for the answer in the right form."""
    return Diagnosis("failed", message, wrong_format=True)


def not_attempted(message: str = NOT_ATTEMPTED_MESSAGE) -> Diagnosis:
    return Diagnosis("not_attempted", message)


def tolerances(dtype: str, rtol: float | None, atol: float | None) -> tuple[float, float]:
    """(rtol, atol) for a dtype: the exercise's values, else assert_close's defaults, else exact."""
    default_rtol, default_atol = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
    return (default_rtol if rtol is None else rtol, default_atol if atol is None else atol)
