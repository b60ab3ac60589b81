"""The class report's figures, computed from graded notebooks alone (no re-grading).

Definitions (docs/grading.md, "The class report"):

- a notebook is *graded on* an exercise when the exercise is in its grade (its own checks
  and the rest of its lesson's, see ``grading.grade.expected_ids``);
- an *answer* is a counted attempt the grader judged ``passed``, ``failed`` or ``error``
  (a stub left ``...`` and a rejected record are no answer); a *wrong answer* is one that
  did not pass; a notebook *attempted* the exercise when it holds an answer;
- *pass rate*: notebooks whose graded answer passed / notebooks graded on the exercise;
  *first-attempt pass rate*: notebooks whose first answer passed / notebooks that
  attempted it;
- a misconception's *share of wrong answers*: the wrong answers diagnosed as it / all
  wrong answers to the exercise; the class's top list ranks by *notebooks* that gave such
  an answer (each learner once), then by answers; *overcome*: the notebooks that met it and
  passed the exercise in a later answer;
- *hint tier*: the highest numbered hint the notebook's kernel reported showing for the
  exercise (0: none), and whether it reported showing the solution; reported by the
  notebook, not observed by the grader.

A notebook the grader could not judge (its worker never started, or its judging was
stopped) is counted among the runs and left out of every figure: its grades are no verdict.
Nothing here reads a notebook's path, file name, run text or review text: the default
report counts, it does not name (``learners=True`` adds a per-notebook table, by key).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

REPORT_FORMAT = 1
ANSWERED = ("passed", "failed", "error")
ATTEMPT_BUCKETS = ("1", "2", "3", "4", "5+")
TOP = 10  # misconceptions in the class's top list


@dataclass
class MisconceptionStats:
    exercise_id: str
    lesson: str
    label: str
    answers: int = 0  # wrong answers diagnosed as it
    notebooks: int = 0  # notebooks with at least one such answer
    notebooks_with_evidence: int = 0  # of those, notebooks where such an answer showed the cause
    overcome: int = 0  # of those, notebooks that passed the exercise in a later answer
    evidence: Counter = field(default_factory=Counter)  # answers per evidence state
    said: Counter = field(default_factory=Counter)  # what the learners were told, and how often
    share: float = 0.0  # of the exercise's wrong answers

    @property
    def with_evidence(self) -> int:
        """Answers where the learner's code showed the cause (see ``checking.mistakes``)."""
        return self.evidence["code"]

    def as_dict(self) -> dict:
        return {
            "exercise_id": self.exercise_id,
            "lesson": self.lesson,
            "label": self.label,
            "answers": self.answers,
            "share_of_wrong_answers": round(self.share, 4),
            "notebooks": self.notebooks,
            "notebooks_with_evidence": self.notebooks_with_evidence,
            "overcome": self.overcome,
            "with_evidence": self.with_evidence,
            "values_only": self.answers - self.with_evidence,
            "evidence": {state: self.evidence[state] for state in sorted(self.evidence)},
            "messages_seen": [
                {"text": text, "answers": count} for text, count in _ranked(self.said)
            ],
        }


@dataclass
class Stats:
    """The figures of one exercise, or of a lesson (the sum of its exercises)."""

    name: str  # the exercise id, or the lesson
    lesson: str
    title: str = ""
    exercises: int = 0
    graded: int = 0
    attempted: int = 0
    passed: int = 0
    first_passed: int = 0
    answers: int = 0
    wrong_answers: int = 0
    attempts: Counter = field(default_factory=Counter)  # bucket -> attempted notebooks
    hint_tiers: Counter = field(default_factory=Counter)  # highest tier -> graded notebooks
    solutions: int = 0  # notebooks that reported showing the solution
    misconceptions: dict = field(default_factory=dict)  # label key -> MisconceptionStats

    @property
    def pass_rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0

    @property
    def first_attempt_rate(self) -> float:
        return self.first_passed / self.attempted if self.attempted else 0.0

    def ranked(self) -> list[MisconceptionStats]:
        return sorted(self.misconceptions.values(), key=_rank)

    def as_dict(self, max_tier: int) -> dict:
        return {
            "name": self.name,
            "lesson": self.lesson,
            "title": self.title,
            "exercises": self.exercises,
            "graded": self.graded,
            "attempted": self.attempted,
            "passed": self.passed,
            "pass_rate": round(self.pass_rate, 4),
            "first_attempt_passed": self.first_passed,
            "first_attempt_pass_rate": round(self.first_attempt_rate, 4),
            "answers": self.answers,
            "wrong_answers": self.wrong_answers,
            "attempts": {b: self.attempts[b] for b in ATTEMPT_BUCKETS},
            "hint_tiers": {str(t): self.hint_tiers[t] for t in range(max_tier + 1)},
            "solutions_shown": self.solutions,
            "misconceptions": [m.as_dict() for m in self.ranked()],
        }


def _rank(m: MisconceptionStats):
    # learners first: one notebook that gives the same wrong answer 150 times is one learner
    # (it made a single notebook's mistake the class's top one when answers ranked first)
    return (-m.notebooks, -m.answers, m.exercise_id, m.label)


def _ranked(counter: Counter) -> list:
    return sorted(counter.items(), key=lambda item: (-item[1], item[0]))


@dataclass
class ClassReport:
    """Everything the class report shows; :meth:`as_dict` is its JSON."""

    notebooks: int
    runs: Counter
    exercises: list[Stats]
    lessons: list[Stats]
    top: list[MisconceptionStats]
    unknown_ids: int = 0  # exercise ids in notebooks that no exercise has (not shown)
    learners: list[dict] | None = None  # per-notebook detail, only on request

    @property
    def max_tier(self) -> int:
        return max([0, *(t for s in self.exercises for t in s.hint_tiers)])

    def as_dict(self) -> dict:
        tier = self.max_tier
        data = {
            "format": REPORT_FORMAT,
            "kind": "class report",
            "notebooks": self.notebooks,
            "runs": dict(sorted(self.runs.items())),
            "unknown_exercise_ids": self.unknown_ids,
            "definitions": DEFINITIONS,
            "lessons": [s.as_dict(tier) for s in self.lessons],
            "exercises": [s.as_dict(tier) for s in self.exercises],
            "top_misconceptions": [m.as_dict() for m in self.top],
        }
        if self.learners is not None:
            data["learners"] = self.learners
        return data

    def summary(self) -> dict:
        """The figures in short, for a platform's results file: per exercise the counts and
        the typical mistakes by label (no text, no names)."""
        exercises = {}
        for s in self.exercises:
            exercises[s.name] = {
                "graded": s.graded,
                "attempted": s.attempted,
                "passed": s.passed,
                "first_attempt_passed": s.first_passed,
                "wrong_answers": s.wrong_answers,
                "misconceptions": {
                    m.label: {"answers": m.answers, "with_evidence": m.with_evidence}
                    for m in s.ranked()
                },
            }
        return {"format": REPORT_FORMAT, "notebooks": self.notebooks, "exercises": exercises}


DEFINITIONS = {
    "answer": "a counted attempt the grader judged passed, failed or error",
    "pass_rate": "notebooks whose graded answer passed / notebooks graded on the exercise",
    "first_attempt_pass_rate": "notebooks whose first answer passed / notebooks that answered",
    "share_of_wrong_answers": "wrong answers diagnosed as it / wrong answers to the exercise",
    "with_evidence": "answers whose code showed the cause: the mechanism was said as fact",
    "values_only": "answers whose values match the pattern; the cause was not seen in the code",
    "overcome": "notebooks that met it and passed the exercise in a later answer",
    "hint_tiers": (
        "highest numbered hint the notebook's kernel reported showing (0: none): "
        "reported by the notebook, not observed by the grader"
    ),
}


def run_kind(nb) -> str:
    """A notebook's run, as a category: never its text (which can hold a path or an error
    message written by the submission)."""
    if getattr(nb, "grader_error", ""):
        return "not graded (the grader failed)"
    for kind in ("completed", "timed out", "kernel died", "refused", "error"):
        if nb.run.startswith(kind):
            return kind
    if nb.run.startswith("judging"):
        return "not graded (judging stopped)"
    return "could not run"


def not_graded(nb) -> bool:
    """The grader could not judge this notebook's answers: its grades are no verdict, and
    none of its figures count (its run is counted in ``runs``)."""
    return run_kind(nb).startswith("not graded")


def build(grades, keys=None, *, learners: bool = False, catalogue=None) -> ClassReport:
    """The class report of ``grades`` (``NotebookGrade`` objects, e.g. read back by
    ``grade merge``). ``learners``: add a per-notebook table, named by ``keys`` (the
    submissions' shard keys); off by default. ``catalogue``: exercise id -> ``Exercise``
    (default: the course's)."""
    if catalogue is None:
        from course_helpers.lessons import catalog

        catalogue = {e.id: e for e in catalog()}
    order = {exercise_id: n for n, exercise_id in enumerate(catalogue)}
    by_exercise: dict[str, Stats] = {}
    runs: Counter = Counter()
    unknown = 0
    detail = []
    for nb in grades:
        runs[run_kind(nb)] += 1
        if not_graded(nb):
            continue
        for e in nb.exercises:
            exercise = catalogue.get(e.exercise_id) if e.known else None
            if exercise is None:
                unknown += 1
                continue
            stats = by_exercise.get(exercise.id)
            if stats is None:
                stats = by_exercise[exercise.id] = Stats(
                    exercise.id, exercise.lesson, exercise.title, exercises=1
                )
            _add(stats, e)
        if learners:
            detail.append(_learner_row(nb, catalogue))
    exercises = sorted(by_exercise.values(), key=lambda s: order[s.name])
    lessons = _roll_up(exercises)
    every = [m for s in exercises for m in s.misconceptions.values()]
    if learners:
        for row, key in zip(detail, keys or [nb.path for nb in grades], strict=True):
            row["key"] = printable(key)  # a file name may hold control codes, or not be UTF-8
    return ClassReport(
        len(grades),
        runs,
        exercises,
        lessons,
        sorted(every, key=_rank)[:TOP],
        unknown,
        detail if learners else None,
    )


def _add(stats: Stats, e) -> None:
    """Count one notebook's grade ``e`` of this exercise into ``stats``."""
    stats.graded += 1
    answers = [t for t in e.tries if t.get("status") in ANSWERED]
    stats.passed += int(e.points > 0)
    stats.hint_tiers[e.hints] += 1
    stats.solutions += int(e.solution_shown)
    if not answers:
        return
    stats.attempted += 1
    stats.first_passed += int(answers[0]["status"] == "passed")
    stats.answers += len(answers)
    stats.attempts[ATTEMPT_BUCKETS[min(len(answers), 5) - 1]] += 1
    wrong = [t for t in answers if t["status"] != "passed"]
    stats.wrong_answers += len(wrong)
    met: dict[str, int] = {}  # label -> index of the last answer diagnosed as it
    shown: set[str] = set()  # labels of which an answer's code showed the cause
    for index, t in enumerate(answers):
        label = t.get("misconception")
        if not label or t["status"] == "passed":
            continue
        m = stats.misconceptions.get(label)
        if m is None:
            m = stats.misconceptions[label] = MisconceptionStats(stats.name, stats.lesson, label)
        m.answers += 1
        m.evidence[t.get("evidence", "values")] += 1
        if t.get("evidence") == "code":
            shown.add(label)
        if t.get("said"):
            m.said[t["said"]] += 1
        met[label] = index
    for label, last in met.items():
        m = stats.misconceptions[label]
        m.notebooks += 1
        m.notebooks_with_evidence += int(label in shown)
        m.overcome += int(any(t["status"] == "passed" for t in answers[last + 1 :]))
    for m in stats.misconceptions.values():
        m.share = m.answers / stats.wrong_answers if stats.wrong_answers else 0.0


def _roll_up(exercises: list[Stats]) -> list[Stats]:
    lessons: dict[str, Stats] = {}
    for s in exercises:
        total = lessons.setdefault(s.lesson, Stats(s.lesson, s.lesson))
        total.exercises += 1
        for name in ("graded", "attempted", "passed", "first_passed", "answers"):
            setattr(total, name, getattr(total, name) + getattr(s, name))
        total.wrong_answers += s.wrong_answers
        total.solutions += s.solutions
        total.attempts.update(s.attempts)
        total.hint_tiers.update(s.hint_tiers)
        for m in s.misconceptions.values():
            total.misconceptions[(m.exercise_id, m.label)] = m
    return list(lessons.values())


def printable(text: str) -> str:
    """``text`` with each character that is not printable (a control code, a lone surrogate
    from a file name that is not UTF-8) written as its escape, as the score table does."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in str(text))


def _learner_row(nb, catalogue) -> dict:
    """One notebook's line of the per-learner table (only with ``learners=True``)."""
    row = {"score": nb.score, "max_score": nb.max_score, "run": run_kind(nb), "exercises": {}}
    for e in nb.exercises:
        if not (e.known and e.exercise_id in catalogue):
            continue
        met = sorted({t["misconception"] for t in e.tries if t.get("misconception")})
        answers = sum(1 for t in e.tries if t.get("status") in ANSWERED)
        row["exercises"][e.exercise_id] = {
            "status": e.status,
            "answers": answers,
            "misconceptions": met,
        }
    return row
