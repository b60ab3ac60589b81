"""A realistic class: learners' exercise notebooks made from the course's own material, and
what the grader must find in them.

``python benchmarks/class_generator.py OUT [--learners 60] [--lessons 01_tensors ...]
[--exercises ID ...] [--seed 0]`` writes one folder per learner (``OUT/<learner>/<lesson>
.ipynb``, nbgrader's ``submitted/<student>/`` shape) and ``OUT/expected.json``.

Each learner's notebook is the lesson's exercise notebook with its answer cells replaced,
exercise by exercise, by a planned mix of:

- the right answer: the solution notebook's cell (its solution markers removed);
- typical mistakes: a cell written from the misconception catalogue's own wrong answer
  (``build_answer`` in ``lessons/lessonNN/misconceptions.py``, with the helpers and imports
  it needs), then often a later right answer: several attempts;
- a wrong answer no misconception explains (free text, so that a report quoting answers
  would show it);
- the exercise skipped: the stub left as it is, or its cell deleted;
- hints: ``hint("ID")`` called one to three times before the first answer, sometimes the
  solution shown too.

Every candidate cell is first checked here, in this process, the way a kernel runs it (its
code readable as the answer cell or the function's source): a right answer must pass, a
typical mistake must be diagnosed as exactly its misconception (its evidence state noted),
a wrong answer must fail with none. Candidates that do not behave so are not used. The
expected figures are then counted from the plans alone (:meth:`GeneratedClass.expected`),
independently of the class report's code, so a test can compare the two.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import linecache
import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
EXERCISES, SOLUTIONS = ROOT / "exercises", ROOT / "solutions"
FIRST = ("Ada", "Bo", "Chidi", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ines", "Jun")
LAST = ("Okafor", "Lindqvist", "Moreau", "Tanaka", "Novak", "Silva", "Haddad", "Kowalski")
_CHECK = re.compile(r"""\bcheck\(\s*["']([^"']+)["']\s*,\s*([A-Za-z_][A-Za-z_0-9]*)""")


@dataclass
class Candidate:
    """One answer cell for one exercise, and how it was judged here."""

    exercise_id: str
    kind: str  # "right", "misconception", "wrong"
    source: str
    status: str = ""
    label: str = ""  # the misconception it is diagnosed as
    evidence: str = ""  # its evidence state (checking.mistakes)
    said: str = ""  # what the learner is told about it
    message: str = ""  # the whole verdict
    answer: object = field(default=None, repr=False)  # the value checked, here


@dataclass
class ExercisePlan:
    answers: list[Candidate] = field(default_factory=list)
    stub: bool = False  # the unanswered stub cell is left in (checked: "not attempted")
    hints: list = field(default_factory=list)  # e.g. [1, 2, "solution"]


@dataclass
class Notebook:
    learner: str
    lesson: str
    path: Path
    plans: dict[str, ExercisePlan]  # every exercise the notebook is graded on


@dataclass
class GeneratedClass:
    folder: Path
    notebooks: list[Notebook]
    lessons: dict[str, list[str]]  # lesson -> its exercise ids, in notebook order

    @property
    def learner_folders(self) -> list[Path]:
        return sorted({nb.path.parent for nb in self.notebooks})

    def expected(self, only=None) -> dict:
        """The figures the class report must show, per exercise, counted from the plans
        (of the notebooks whose paths are in ``only``, by default all)."""
        figures = {}
        for lesson, ids in self.lessons.items():
            mine = [nb for nb in self.notebooks if nb.lesson == lesson]
            mine = [nb for nb in mine if only is None or nb.path in only]
            for exercise_id in ids:
                figures[exercise_id] = _expected_figures([nb.plans[exercise_id] for nb in mine])
        return figures


def _expected_figures(plans: list[ExercisePlan]) -> dict:
    answered = [p for p in plans if p.answers]
    tiers = Counter(max([t for t in p.hints if isinstance(t, int)], default=0) for p in plans)
    misconceptions: dict[str, dict] = {}
    wrong = 0
    for p in answered:
        wrong += sum(1 for a in p.answers if a.status != "passed")
        last: dict[str, int] = {}
        for index, answer in enumerate(p.answers):
            if answer.label:
                m = misconceptions.setdefault(
                    answer.label,
                    {"answers": 0, "notebooks": 0, "overcome": 0},
                )
                m["answers"] += 1
                m.setdefault("evidence", Counter())[answer.evidence] += 1
                m.setdefault("said", Counter())[answer.said] += 1
                last[answer.label] = index
        for label, index in last.items():
            misconceptions[label]["notebooks"] += 1
            later = p.answers[index + 1 :]
            misconceptions[label]["overcome"] += int(any(a.status == "passed" for a in later))
    return {
        "graded": len(plans),
        "attempted": len(answered),
        "passed": sum(1 for p in answered if p.answers[-1].status == "passed"),
        "first_attempt_passed": sum(1 for p in answered if p.answers[0].status == "passed"),
        "answers": sum(len(p.answers) for p in answered),
        "wrong_answers": wrong,
        "attempts": Counter(str(min(len(p.answers), 5)).replace("5", "5+") for p in answered),
        "hint_tiers": tiers,
        "solutions_shown": sum(1 for p in plans if "solution" in p.hints),
        "misconceptions": misconceptions,
    }


# --------------------------------------------------------------------------- candidates


def _cells(path: Path):
    import nbformat

    return nbformat.read(path, as_version=4).cells


def _checked(source: str) -> tuple[str, str] | None:
    found = _CHECK.search(source)
    return (found.group(1), found.group(2)) if found else None


def _without_markers(source: str) -> str:
    lines = [ln for ln in source.splitlines() if ln.strip() not in _MARKERS]
    return "\n".join(lines) + "\n"


_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def misconception_cells(lesson: str) -> dict[tuple[str, str], str]:
    """(exercise id, label) -> the code of an answer cell that gives the catalogue's wrong
    answer, for every entry whose ``build_answer`` can be written out with the module's own
    helpers and imports (none from ``course_helpers``). The checked name is ``answer``."""
    number = lesson.split("_", 1)[0]
    path = ROOT / "course_helpers" / "lessons" / f"lesson{number}" / "misconceptions.py"
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    defined: dict[str, ast.stmt] = {}
    imported: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                imported[(alias.asname or alias.name).split(".")[0]] = node
    cells = {}
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "Misconception"):
            continue
        given = {k.arg: k.value for k in call.keywords}
        exercise_id, label = (given.get(k) for k in ("exercise_id", "label"))
        build = given.get("build_answer")
        if not all(isinstance(v, ast.Constant) for v in (exercise_id, label)) or build is None:
            continue
        if isinstance(build, ast.Lambda):
            expression = build.body
        elif isinstance(build, ast.Name):
            expression = ast.Call(build, [], [])
        else:
            continue
        code = _written_out(expression, defined, imported, text)
        if code is not None:
            cells[(exercise_id.value, label.value)] = code
    return cells


def _written_out(expression, defined, imported, text) -> str | None:
    """The statements that define what ``expression`` uses, then ``answer = expression``."""
    needed: dict[int, ast.stmt] = {}
    imports: dict[int, ast.stmt] = {}
    frontier = [expression]
    while frontier:
        node = frontier.pop()
        for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
            if name in defined and id(defined[name]) not in needed:
                needed[id(defined[name])] = defined[name]
                frontier.append(defined[name])
            elif name in imported:
                imports[id(imported[name])] = imported[name]
    statements = sorted([*imports.values(), *needed.values()], key=lambda s: s.lineno)
    if any(
        isinstance(s, ast.ImportFrom) and (s.module or "").startswith("course_helpers")
        for s in statements
    ):
        return None
    parts = [ast.get_source_segment(text, s) for s in statements]
    body = ast.get_source_segment(text, expression) or ast.unparse(expression)
    return "\n\n".join([*parts, f"answer = {body}"]) + "\n"


def _by_hand(value) -> str:
    """A cell typing ``value`` (a small plain tensor) in by hand: the same values as the
    typical mistake, reached without the construct its cause names; "" for anything else."""
    import torch

    if not isinstance(value, torch.Tensor) or value.requires_grad or value.numel() > 64:
        return ""
    if value.dtype not in (torch.int64, torch.float32, torch.float64, torch.bool):
        return ""
    dtype = str(value.dtype).removeprefix("torch.")
    return f"answer = torch.tensor({value.tolist()!r}, dtype=torch.{dtype})\n"


def wrong_cell(exercise, free_text: str) -> str:
    """A wrong answer that no misconception explains: free text (or a function returning
    it), the kind of thing a report must never quote."""
    if exercise.kind == "function":
        return f"def answer(*args):\n    return {free_text!r}\n"
    return f"answer = {free_text!r}\n"


class _Kernel:
    """Runs cells in this process the way a kernel would for ``check``: the code of a
    function is readable from its cell, the running cell is the last of the history."""

    def __init__(self):
        self.names: dict = {"__name__": "__main__"}
        self.history = [""]

    def run(self, source: str):
        filename = f"<generated-cell-{len(self.history)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        self.history.append(source)
        shell = mock.Mock()
        shell.history_manager.input_hist_raw = list(self.history)
        with (
            mock.patch("IPython.get_ipython", return_value=shell),
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            exec(compile(source, filename, "exec"), self.names)

    def fork(self) -> _Kernel:
        other = _Kernel()
        other.names, other.history = dict(self.names), list(self.history)
        return other


def _judged(kernel: _Kernel, exercise, source: str, name: str) -> Candidate | None:
    """Run ``source`` (an answer cell) and judge ``name`` as the grader would."""
    from course_helpers.checking.judges import judge
    from course_helpers.checking.mistakes import describe
    from course_helpers.checking.submissions import collect

    seen: dict = {}

    def check(exercise_id, answer=...):
        seen["answer"] = answer
        shell = mock.Mock()
        shell.history_manager.input_hist_raw = list(kernel.history)
        with mock.patch("IPython.get_ipython", return_value=shell):
            seen["submission"] = collect(exercise, answer)
        seen["verdict"] = judge(exercise, seen["submission"])

    kernel.names["check"] = check
    try:
        kernel.run(source + f'check("{exercise.id}", {name})\n')
    except Exception:
        return None
    if "verdict" not in seen:
        return None
    verdict = seen["verdict"]
    made = Candidate(exercise.id, "", source, verdict.status, verdict.misconception)
    made.message = verdict.message
    made.answer = seen["answer"]
    mistake = describe(exercise.id, verdict.misconception, seen["submission"].get("code"))
    if mistake is not None:
        made.evidence, made.said = mistake.evidence, mistake.said
    return made


def candidates(lesson: str, only=None) -> tuple[list[str], list, dict[str, dict]]:
    """The lesson's exercise ids (notebook order), its context cells, and per exercise the
    candidates that behave as planned: ``{"right": [...], "misconception": [...], "wrong":
    [...], "stub": source}``."""
    from course_helpers.lessons import get

    os.environ.setdefault("COURSE_PROGRESS", "off")
    solution = {}
    for cell in _cells(SOLUTIONS / f"{lesson}.ipynb"):
        found = _checked(cell.source) if cell.cell_type == "code" else None
        if found:
            source = _without_markers(cell.source)
            solution[found[0]] = (source, source[: _CHECK.search(source).start()], found[1])
    kernel = _Kernel()
    ids, bank = [], {}
    wrongs = misconception_cells(lesson)
    for cell in _cells(EXERCISES / f"{lesson}.ipynb"):
        if cell.cell_type != "code":
            continue
        found = _checked(cell.source)
        if found is None:
            with contextlib.suppress(Exception):
                kernel.run(cell.source)
            continue
        exercise = get(found[0])
        ids.append(exercise.id)
        if (only and exercise.id not in only) or exercise.id not in solution:
            continue
        options = {"right": [], "misconception": [], "wrong": [], "stub": cell.source}
        source, before_check, name = solution[exercise.id]
        right = _judged(kernel.fork(), exercise, before_check, name)
        if right is not None and right.status == "passed":
            right.kind = "right"
            right.source = source
            options["right"].append(right)
        for (exercise_id, label), code in wrongs.items():
            if exercise_id == exercise.id:
                made = _judged(kernel.fork(), exercise, code, "answer")
                if made is not None and made.label == label and made.status != "passed":
                    made.kind, made.source = (
                        "misconception",
                        code + f'check("{exercise_id}", answer)\n',
                    )
                    options["misconception"].append(made)
                    typed = _by_hand(made.answer)
                    if typed and made.evidence == "code":  # the same values, another route
                        other = _judged(kernel.fork(), exercise, typed, "answer")
                        if other is not None and other.label == label:
                            other.kind = "misconception"
                            other.source = typed + f'check("{exercise_id}", answer)\n'
                            options["misconception"].append(other)
        wrong = _judged(kernel.fork(), exercise, wrong_cell(exercise, "FREE-TEXT"), "answer")
        if wrong is not None and wrong.status != "passed" and not wrong.label:
            options["wrong"].append(wrong)
        if options["right"]:
            bank[exercise.id] = options
    return ids, bank


# --------------------------------------------------------------------------- the class


def learner_names(count: int) -> list[str]:
    """Made-up learner names (folder names, as nbgrader's ``submitted/<student>``)."""
    names = []
    for n in range(count):
        first, last = FIRST[n % len(FIRST)], LAST[(n // len(FIRST)) % len(LAST)]
        names.append(f"{first.lower()}_{last.lower()}_{n:04d}")
    return names


def _plan(rng: random.Random, options: dict, exercise, learner: str) -> ExercisePlan:
    plan = ExercisePlan()
    right, mistakes, wrongs = options["right"][0], options["misconception"], options["wrong"]
    roll = rng.random()
    weights = [1.0 / (n + 1) for n in range(len(mistakes))]  # some mistakes far commoner

    def mistake(avoid=None):  # never the same mistake twice in a row (one attempt, then)
        pool = [m for m in mistakes if avoid is None or m.label != avoid.label] or mistakes
        return rng.choices(pool, [weights[mistakes.index(m)] for m in pool])[0]

    def free(c: Candidate) -> Candidate:  # the learner's own words
        source = wrong_cell(exercise, f"my guess, {learner}")
        source += f"check({c.exercise_id!r}, answer)\n"
        return Candidate(c.exercise_id, "wrong", source, c.status, message=c.message)

    if roll < 0.08:
        plan.stub = True
    elif roll < 0.15:
        pass  # the cell was deleted
    elif roll < 0.45 or not (mistakes or wrongs):
        plan.answers = [right]
    elif mistakes and roll < 0.65:
        plan.answers = [mistake(), right]
    elif mistakes and roll < 0.75:
        first = mistake()
        second = mistake(avoid=first)
        second = second if second.label != first.label else None
        if second is None and wrongs:
            second = free(wrongs[0])
        plan.answers = [first, second, right] if second is not None else [first, right]
    elif mistakes and roll < 0.87:
        plan.answers = [mistake()]
    elif wrongs:
        plan.answers = [free(wrongs[0])] + ([right] if rng.random() < 0.5 else [])
    else:
        plan.answers = [right]
    if plan.answers and rng.random() < 0.5:
        plan.hints = list(range(1, rng.randint(1, len(exercise.hints)) + 1))
        if rng.random() < 0.2:
            plan.hints.append("solution")
    return plan


def _write_notebook(path: Path, lesson: str, plans: dict[str, ExercisePlan]) -> None:
    import nbformat

    nb = nbformat.read(EXERCISES / f"{lesson}.ipynb", as_version=4)
    cells = []
    for cell in nb.cells:
        found = _checked(cell.source) if cell.cell_type == "code" else None
        plan = plans.get(found[0]) if found else None
        if plan is None:
            cells.append(cell)
            continue
        if plan.hints:
            calls = [
                f"hint({found[0]!r}, solution=True)" if t == "solution" else f"hint({found[0]!r})"
                for t in plan.hints
            ]
            cells.append(nbformat.v4.new_code_cell("\n".join(calls)))
        if plan.stub:
            cells.append(cell)
        cells.extend(nbformat.v4.new_code_cell(a.source) for a in plan.answers)
    nb.cells = cells
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def plan_class(
    folder, learners: int = 60, lessons=("01_tensors",), exercises=None, seed: int = 0
) -> GeneratedClass:
    """Plan a class of ``learners`` (one notebook per learner and lesson, at
    ``folder/<learner>/<lesson>.ipynb``) without writing it. ``exercises``: answer only
    these ids (the others are left as stubs, as a learner who stopped early would)."""
    from course_helpers.lessons import get

    rng = random.Random(seed)
    folder = Path(folder)
    names = learner_names(learners)
    notebooks, ids_by_lesson = [], {}
    for lesson in lessons:
        ids, bank = candidates(lesson, set(exercises) if exercises else None)
        ids_by_lesson[lesson] = ids
        for name in names:
            plans = {}
            for exercise_id in ids:
                if exercise_id in bank:
                    plans[exercise_id] = _plan(rng, bank[exercise_id], get(exercise_id), name)
                else:
                    plans[exercise_id] = ExercisePlan(stub=True)
            notebooks.append(Notebook(name, lesson, folder / name / f"{lesson}.ipynb", plans))
    return GeneratedClass(folder, notebooks, ids_by_lesson)


def make_class(
    folder, learners: int = 60, lessons=("01_tensors",), exercises=None, seed: int = 0
) -> GeneratedClass:
    """:func:`plan_class`, then write every notebook and ``folder/expected.json``."""
    generated = plan_class(folder, learners, lessons, exercises, seed)
    for nb in generated.notebooks:
        _write_notebook(nb.path, nb.lesson, nb.plans)
    (Path(folder) / "expected.json").write_text(
        json.dumps(generated.expected(), indent=1, default=dict), encoding="utf-8"
    )
    return generated


def synthetic_grades(generated: GeneratedClass) -> tuple[list, list[str]]:
    """The grades the grader would give ``generated``'s notebooks, made from the plans
    without running anything (``NotebookGrade`` objects, and their shard keys): for
    measuring what is built from graded reports, at sizes too large to grade here."""
    from course_helpers.grading.grade import ExerciseGrade, NotebookGrade

    grades, keys = [], []
    for nb in generated.notebooks:
        exercises = []
        for exercise_id, plan in nb.plans.items():
            tries = [{"status": "not_attempted"}] if plan.stub else []
            for answer in plan.answers:
                item = {"status": answer.status}
                if answer.label:
                    item.update(misconception=answer.label, evidence=answer.evidence)
                    item["said"] = answer.said
                tries.append(item)
            status = tries[-1]["status"] if tries else "not_attempted"
            message = plan.answers[-1].message if plan.answers else "No answer was checked."
            exercises.append(
                ExerciseGrade(
                    exercise_id,
                    status,
                    message,
                    int(status == "passed"),
                    attempts=len(tries),
                    first_attempt=tries[0]["status"] if tries else "",
                    misconception=plan.answers[-1].label if plan.answers else "",
                    hints=max([t for t in plan.hints if isinstance(t, int)], default=0),
                    solution_shown="solution" in plan.hints,
                    tries=tries,
                )
            )
        grades.append(NotebookGrade(str(nb.path), "completed", exercises))
        keys.append(f"{nb.path.parent.name}/{nb.path.name}")
    return grades, keys


def mismatches(expected: dict, report: dict) -> list[str]:
    """Where a class report (its ``class-report.json``) differs from ``expected`` (the
    ``expected.json`` of :func:`make_class`): one line per figure ([] when none does)."""
    found = []
    shown = {e["name"]: e for e in report["exercises"]}
    for exercise_id, want in expected.items():
        got = shown.get(exercise_id)
        if got is None:
            found.append(f"{exercise_id}: not in the report")
            continue
        for name in ("graded", "attempted", "passed", "first_attempt_passed", "answers"):
            if got[name] != want[name]:
                found.append(f"{exercise_id}: {name} {got[name]} != {want[name]}")
        for name, key in (("attempts", str), ("hint_tiers", str)):
            wanted = {key(k): v for k, v in want[name].items() if v}
            if {k: v for k, v in got[name].items() if v} != wanted:
                found.append(f"{exercise_id}: {name} {got[name]} != {wanted}")
        labels = {m["label"]: m for m in got["misconceptions"]}
        for label, m in want["misconceptions"].items():
            if label not in labels:
                found.append(f"{exercise_id}: {label!r} not in the report")
                continue
            for name in ("answers", "notebooks", "overcome"):
                if labels[label][name] != m[name]:
                    found.append(
                        f"{exercise_id}: {label!r} {name} {labels[label][name]} != {m[name]}"
                    )
            if labels[label]["evidence"] != dict(m["evidence"]):
                found.append(f"{exercise_id}: {label!r} evidence {labels[label]['evidence']}")
        extra = set(labels) - set(want["misconceptions"])
        found += [f"{exercise_id}: {label!r} was not generated" for label in sorted(extra)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--learners", type=int, default=60)
    parser.add_argument("--lessons", nargs="+", default=["01_tensors"])
    parser.add_argument("--exercises", nargs="*")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="REPORT_DIR",
        help="compare the class report in REPORT_DIR with OUT/expected.json instead",
    )
    args = parser.parse_args()
    known = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
    unknown = [lesson for lesson in args.lessons if lesson not in known]
    if unknown:  # "01" for "01_tensors": the solution notebook's name is needed
        parser.error(
            f"no solution notebook for --lessons {' '.join(unknown)}; one of: " + " ".join(known)
        )
    if args.compare:
        expected = json.loads((args.out / "expected.json").read_text(encoding="utf-8"))
        report = json.loads((args.compare / "class-report.json").read_text(encoding="utf-8"))
        found = mismatches(expected, report)
        print("\n".join(found) or "the report's figures equal the generated class's")
        raise SystemExit(1 if found else 0)
    made = make_class(args.out, args.learners, args.lessons, args.exercises, args.seed)
    print(f"{len(made.notebooks)} notebooks of {args.learners} learners in {args.out}")


if __name__ == "__main__":
    main()
