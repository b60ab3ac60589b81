"""Hints (issue 12): the last tier is a near-solution, never the literal solution."""

import re

from course_helpers.lessons import catalog


def solution_lines(exercise) -> list[str]:
    """The solution's lines that carry the answer (no def, check(...), or `answer = name`)."""
    lines = []
    for line in exercise.solution.splitlines():
        text = line.split("#")[0].strip()
        if text.startswith("return ") and len(text) >= 16:
            lines.append(text)
        elif len(text) >= 12 and not text.startswith(("def ", "check(", "return ", "###")):
            if not re.fullmatch(r"answer = \w+", text):
                lines.append(text)
    return lines


def gives_the_solution_away(exercise) -> bool:
    """True when the last hint holds every line of the solution verbatim."""
    lines = solution_lines(exercise)
    last = " ".join(exercise.hints[-1].split())
    return bool(lines) and all(" ".join(line.split()) in last for line in lines)


def test_the_rule_catches_a_copied_solution_and_spares_a_near_solution():
    class Fake:
        solution = "def f(x):\n    return (x * 2).clamp(max=1.0)"
        hints = ("a", "b", "return (x * 2).clamp(max=1.0)")

    assert gives_the_solution_away(Fake)
    Fake.hints = ("a", "b", "Scale by 2, then cap at 1.0 with the clamp method.")
    assert not gives_the_solution_away(Fake)


def test_no_last_hint_is_the_solution():
    leaking = sorted(e.id for e in catalog() if gives_the_solution_away(e))
    assert leaking == [], f"{len(leaking)} exercises whose last hint is the solution: {leaking}"
