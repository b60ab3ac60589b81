"""A diagnosed mistake as a record: which catalogued misconception, and how far the evidence
went when the learner was told about it.

A misconception is recognised by what the answer *does* (``checking.misconceptions``), so
what the learner is told depends on the code behind the answer (``misconceptions.explain``):

- ``"code"``: every evidence pattern of the entry is in the learner's code, so the cause
  was stated as fact ("Your code calls `cdist`: ...");
- ``"unread"``: the entry names a cause but the code could not be read, so the cause was
  offered as one possibility ("If your code calls `cdist`: ...");
- ``"absent"``: the code was read and does not hold the cause: only the observation was
  said (the same values by another route);
- ``"values"``: the entry names no cause: only the observation was said.

Only ``"code"`` is a diagnosis *with evidence*; the others say that the values match the
pattern of the typical mistake. The learner's progress (``checking.progress``) and the
grader's class report (``grading.classreport``) keep these records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EVIDENCE_STATES = ("code", "unread", "absent", "values")


@dataclass(frozen=True)
class Mistake:
    """One diagnosed misconception: its exercise, its label, the evidence state (one of
    :data:`EVIDENCE_STATES`) and what the learner was told about it (``said``: the
    catalogue's text, with the lead-in the evidence allowed)."""

    exercise_id: str
    label: str
    evidence: str
    said: str

    @property
    def with_evidence(self) -> bool:
        return self.evidence == "code"


def evidence_state(entry, code: Any) -> str:
    """How far ``code`` (a submission's ``"code"`` record, or None) supports ``entry``'s
    cause: one of :data:`EVIDENCE_STATES`, the same reading ``misconceptions.explain`` makes."""
    if not entry.evidence:
        return "values"
    from course_helpers.checking import evidence as ev

    hits = ev.found(code, entry.evidence)
    if hits is None:
        return "unread"
    return "code" if all(hits.values()) else "absent"


def describe(exercise_id: str, label: str, code: Any = None) -> Mistake | None:
    """The record of the misconception ``label`` of ``exercise_id`` diagnosed in an answer
    whose recorded code is ``code``; None for no label, or one the catalogue lacks."""
    if not label:
        return None
    from course_helpers.checking.misconceptions import explain
    from course_helpers.lessons import for_exercise

    entry = next((e for e in for_exercise(exercise_id) if e.label == label), None)
    if entry is None:
        return None
    return Mistake(exercise_id, label, evidence_state(entry, code), explain(entry, code))


@dataclass(frozen=True)
class MetMistake:
    """A typical mistake (catalogued misconception) that checks of one exercise were
    diagnosed with: how often, how often with evidence in the code, what was said the last
    time, and whether the exercise passed after the last time (``overcome``)."""

    exercise_id: str
    label: str
    lesson: str
    times: int
    with_evidence: int
    said: str
    overcome: bool

    @property
    def shown(self) -> str:
        """How the mistake is named to the learner: its label when the code showed it, else
        the start of what the check said it saw (the label may name a cause the code lacks)."""
        if self.with_evidence:
            return self.label
        first = self.said.strip().splitlines()[0] if self.said.strip() else self.label
        ends = [first.find(stop, 20) for stop in (": ", ". ", "; ")]
        if any(end > 0 for end in ends):
            first = first[: min(end for end in ends if end > 0)]
        return first if len(first) <= 100 else first[:97] + "..."

    @property
    def times_text(self) -> str:
        times = "once" if self.times == 1 else f"{self.times} times"
        if self.with_evidence == self.times:
            return f"{times}, seen in your code"
        if self.with_evidence:
            return f"{times}, {self.with_evidence} of them seen in your code"
        return f"{times}, from your answer's values"

    @property
    def overcome_text(self) -> str:
        return "overcome: passed since" if self.overcome else "not passed since"


MISTAKES_HEADING = "Typical mistakes your checks were diagnosed with:"
