"""What the grader keeps of each exercise for the class report, and how it reads it back.

- ``tries``: each counted attempt as the grader judged it, in order: ``{"status": ...}``
  and, for an answer diagnosed as a catalogued misconception, ``"misconception"`` (its
  label), ``"evidence"`` (``checking.mistakes.EVIDENCE_STATES``) and ``"said"`` (what the
  learner was told about it: catalogue text only, never the answer or the learner's code).
  Observed: the grader judged these answers itself.
- (``hints`` and ``solution_shown``, the highest hint tier and whether the solution was
  shown, come from the notebook's kernel (``grading.grade``): reported, not observed, so the
  class report labels them as the notebook's account.)
"""

from __future__ import annotations

from course_helpers.checking.mistakes import EVIDENCE_STATES

SAID_LIMIT = 2000  # characters of a misconception's text kept (catalogue text is shorter)


def observe(exercise_id: str, submissions: list, verdicts: list) -> list[dict]:
    """The ``tries`` record of one exercise: ``verdicts`` are ``(status, message, label)``
    for the counted ``submissions``, as ``grading.grade`` judged them."""
    from course_helpers.checking.mistakes import describe

    tries = []
    for submission, (status, _, label) in zip(submissions, verdicts, strict=True):
        item = {"status": status}
        code = submission.get("code") if isinstance(submission, dict) else None
        mistake = describe(exercise_id, label, code) if label else None
        if mistake is not None:
            item.update(misconception=mistake.label, evidence=mistake.evidence)
            item["said"] = mistake.said[:SAID_LIMIT]
        tries.append(item)
    return tries


def tries_from_json(value) -> list[dict]:
    """``tries`` read back from a report (``grade merge``); ``ValueError`` if malformed."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("tries is not a list")
    tries = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("status"), str):
            raise ValueError("a try without a status")
        clean = {"status": item["status"]}
        if "misconception" in item:
            label, evidence = item.get("misconception"), item.get("evidence")
            said = item.get("said", "")
            if not (isinstance(label, str) and isinstance(said, str)):
                raise ValueError("a misconception that is not text")
            if evidence not in EVIDENCE_STATES:
                raise ValueError(f"evidence {evidence!r} is not one of {EVIDENCE_STATES}")
            clean.update(misconception=label, evidence=evidence, said=said[:SAID_LIMIT])
        tries.append(clean)
    return tries
