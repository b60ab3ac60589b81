"""The class report as one self-contained HTML page: the pictures inline (SVG), the numbers
beside them in tables, no script, no server, nothing fetched from the network.

Every figure cell carries its value in ``data-value`` (and its name in ``data-field``), so a
program (or the browser test) reads the same numbers a person sees.
"""

from __future__ import annotations

import html

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222;
  padding: 0 1em; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child, td.text, th.text { text-align: left; }
td.text { min-width: 10em; max-width: 24em; } td.spread { white-space: nowrap; }
th { vertical-align: bottom; }
.note { color: #555; font-size: 0.9em; max-width: 52em; }
blockquote { margin: 0.4em 0 0.4em 1em; padding-left: 0.8em; border-left: 3px solid #E69F00;
  white-space: pre-wrap; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
"""

HOW_TO_READ = (
    "Start with the top typical mistakes: each is a misunderstanding the course's catalogue "
    "knows, ranked by how many notebooks gave a wrong answer the grader diagnosed as it "
    "(each learner once, however often they tried), then by those answers. Orange with "
    "evidence means such an answer's code showed the cause, and the learner was told so as "
    "fact; amber means only that the values match the pattern, and the learner was told "
    "what was observed. Then "
    "read the lessons: a low pass rate beside a much lower first-attempt rate is a topic "
    "learners get in the end; a low pass rate with few answers is one they skipped."
)


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _cell(field: str, value, shown=None, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    shown = value if shown is None else shown
    return f'<td data-field="{_e(field)}" data-value="{_e(value)}"{klass}>{_e(shown)}</td>'


def _table(table_id: str, head: list[str], rows: list[str], text=(0,)) -> str:
    """A table; the columns numbered in ``text`` hold words (left-aligned), the rest numbers."""
    header = "".join(
        f'<th class="text">{_e(h)}</th>' if n in text else f"<th>{_e(h)}</th>"
        for n, h in enumerate(head)
    )
    return (
        f'<table id="{table_id}"><thead><tr>{header}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _stats_row(kind: str, s, max_tier: int) -> str:
    from course_helpers.grading.classreport.model import ATTEMPT_BUCKETS

    cells = [
        _cell("name", s.name, cls="text"),
        _cell("graded", s.graded),
        _cell("attempted", s.attempted),
        _cell("passed", s.passed),
        _cell("pass_rate", round(s.pass_rate, 4), _pct(s.pass_rate)),
        _cell("first_attempt_passed", s.first_passed),
        _cell(
            "first_attempt_pass_rate", round(s.first_attempt_rate, 4), _pct(s.first_attempt_rate)
        ),
        _cell("wrong_answers", s.wrong_answers),
        _spread("attempts", {b: s.attempts[b] for b in ATTEMPT_BUCKETS}),
        _spread("hint_tiers", {str(t): s.hint_tiers[t] for t in range(max_tier + 1)}),
        _cell("solutions_shown", s.solutions),
    ]
    top = s.ranked()[:3]
    said = "; ".join(f"{m.label} ({m.answers}, {_pct(m.share)})" for m in top) or "-"
    cells.append(_cell("misconceptions", len(s.misconceptions), said, cls="text"))
    return f'<tr data-{kind}="{_e(s.name)}">{"".join(cells)}</tr>'


def _spread(field: str, counts: dict) -> str:
    """One cell for a distribution: its counts in order, the whole as JSON in data-value."""
    import json

    shown = "·".join(str(n) for n in counts.values())
    return _cell(field, json.dumps(counts, separators=(",", ":")), shown, "spread")


def _stats_head(first: str, max_tier: int) -> list[str]:
    from course_helpers.grading.classreport.model import ATTEMPT_BUCKETS

    return [
        first,
        "graded",
        "answered",
        "passed",
        "pass rate",
        "passed at 1st answer",
        "1st-answer pass rate",
        "wrong answers",
        f"answers needed {'·'.join(ATTEMPT_BUCKETS)}",
        f"highest hint {'·'.join(str(t) for t in range(max_tier + 1))}",
        "solution shown",
        "top typical mistakes (wrong answers, share)",
    ]


def _top_rows(report) -> list[str]:
    rows = []
    for rank, m in enumerate(report.top, start=1):
        told = "".join(
            f"<blockquote>{_e(text)}</blockquote><div class='note'>told {count} time"
            f"{'s' * (count != 1)}</div>"
            for text, count in sorted(m.said.items(), key=lambda item: (-item[1], item[0]))
        )
        cells = [
            _cell("rank", rank),
            _cell("exercise_id", m.exercise_id, cls="text"),
            _cell("label", m.label, cls="text"),
            _cell("notebooks", m.notebooks),
            _cell("notebooks_with_evidence", m.notebooks_with_evidence),
            _cell("answers", m.answers),
            _cell("share_of_wrong_answers", round(m.share, 4), _pct(m.share)),
            _cell("with_evidence", m.with_evidence),
            _cell("values_only", m.answers - m.with_evidence),
            _cell("overcome", m.overcome),
        ]
        rows.append(
            f'<tr data-misconception="{_e(m.exercise_id)}|{_e(m.label)}">{"".join(cells)}</tr>'
            f'<tr class="said"><td colspan="10" class="text"><details><summary>What the '
            f"learners were told</summary>{told}</details></td></tr>"
        )
    return rows


def _learner_rows(report) -> list[str]:
    rows = []
    for row in report.learners or []:
        met = sorted({m for e in row["exercises"].values() for m in e["misconceptions"]})
        cells = [
            _cell("key", row["key"], cls="text"),
            _cell("score", row["score"]),
            _cell("max_score", row["max_score"]),
            _cell("run", row["run"], cls="text"),
            _cell("misconceptions", len(met), "; ".join(met) or "-", cls="text"),
        ]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return rows


def render(report, svgs: dict[str, str]) -> str:
    """The page for ``report`` (a ``ClassReport``), with the pictures ``svgs`` (name ->
    inline SVG, from ``figures``)."""
    from course_helpers.grading.classreport.model import DEFINITIONS

    tier = report.max_tier
    runs = ", ".join(f"{kind}: {n}" for kind, n in sorted(report.runs.items())) or "none"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Class report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Class report</h1>",
        f'<p id="summary" data-notebooks="{report.notebooks}">'
        f"{report.notebooks} notebooks handed in; runs: {_e(runs)} (a notebook the grader "
        "refused or could not judge is in no figure). "
        f"{len(report.exercises)} exercises in {len(report.lessons)} lessons.</p>",
        f'<p class="note">{_e(HOW_TO_READ)}</p>',
        '<h2 id="top">Top typical mistakes</h2>',
        f"<figure>{svgs['top']}</figure>",
        _table(
            "top-misconceptions",
            [
                "#",
                "exercise",
                "typical mistake",
                "notebooks",
                "notebooks with evidence",
                "wrong answers",
                "share of wrong answers",
                "answers with evidence",
                "answers with values only",
                "notebooks that overcame it",
            ],
            _top_rows(report),
            text=(1, 2),
        ),
        '<h2 id="by-lesson">Lessons</h2>',
        f"<figure>{svgs['lessons']}</figure>",
        _table(
            "lessons",
            _stats_head("lesson", tier),
            [_stats_row("lesson", s, tier) for s in report.lessons],
            text=(0, 11),
        ),
        f"<figure>{svgs['attempts']}</figure>",
        f"<figure>{svgs['hints']}</figure>",
        f'<p class="note">Hints: {_e(DEFINITIONS["hint_tiers"])}.</p>',
        '<h2 id="by-exercise">Exercises</h2>',
        f"<figure>{svgs['exercises']}</figure>",
        _table(
            "exercises",
            _stats_head("exercise", tier),
            [_stats_row("exercise", s, tier) for s in report.exercises],
            text=(0, 11),
        ),
    ]
    if report.learners is not None:
        parts += [
            '<h2 id="learners">Notebooks (per-learner detail, asked for)</h2>',
            _table(
                "learners",
                ["notebook", "score", "max", "run", "typical mistakes"],
                _learner_rows(report),
                text=(0, 3, 4),
            ),
        ]
    definitions = "".join(
        f"<li><strong>{_e(k.replace('_', ' '))}</strong>: {_e(v)}</li>"
        for k, v in DEFINITIONS.items()
    )
    parts += [
        '<h2 id="definitions">How the figures are counted</h2>',
        f'<ul class="note">{definitions}</ul>',
        f'<p class="note">Exercise ids no exercise has, not shown: {report.unknown_ids}.</p>',
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
