"""The class report's pictures, drawn with matplotlib (no pyplot, no display needed).

Each ``draw_*`` function draws into a matplotlib axes from a
:class:`~course_helpers.grading.classreport.model.ClassReport`; :func:`figures` gives the
page's pictures as figures, :func:`overview` one picture of the whole report. :func:`svg`
and :func:`png` turn a figure into what the page embeds (SVG with its text kept as text, so
the page can be searched and read) or what a slide or docs/grading.md shows. Colours are
the Okabe-Ito palette, told apart without colour vision too.
"""

from __future__ import annotations

import contextlib
import io

PASSED, FIRST, EVIDENCE, VALUES = "#009E73", "#56B4E9", "#D55E00", "#E69F00"
SEQUENCE = ("#009E73", "#56B4E9", "#F0E442", "#E69F00", "#D55E00", "#CC79A7", "#0072B2")
# text kept as text in SVG; "$" in a label is a dollar sign, never mathtext
STYLE = {"svg.fonttype": "none", "svg.hashsalt": "class-report", "font.size": 9}
STYLE["text.parse_math"] = False
WIDTH = 7.5  # inches
NO_METADATA = ("Date", "Creator", "Format", "Type")  # no RDF block: the same bytes each time


@contextlib.contextmanager
def _style():
    import matplotlib

    with matplotlib.rc_context(STYLE):
        yield


def _figure(rows: int, per_row: float = 0.32, extra: float = 1.2):
    from matplotlib.figure import Figure

    return Figure(figsize=(WIDTH, extra + per_row * max(rows, 1)), layout="constrained")


def draw_pass_rates(ax, rows, by: str) -> None:
    """Pass rate and first-attempt pass rate of each exercise or lesson (``rows``)."""
    names = [s.name for s in rows][::-1]
    y = list(range(len(names)))
    passed = [s.pass_rate * 100 for s in rows][::-1]
    first = [s.first_attempt_rate * 100 for s in rows][::-1]
    ax.barh([i + 0.2 for i in y], passed, 0.4, color=PASSED, label="passed")
    ax.barh([i - 0.2 for i in y], first, 0.4, color=FIRST, label="passed at the\nfirst answer")
    ax.set_yticks(y, names)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of notebooks (at the first answer: of those that answered)")
    _legend(ax)
    ax.set_title(f"Pass rates by {by}")


def draw_top(ax, top) -> None:
    """The class's most widespread typical mistakes: notebooks (learners) that gave a wrong
    answer diagnosed as each, split into those where such an answer's code showed the cause
    and those whose values only matched the pattern."""
    names = [f"{m.exercise_id}: {_short(m.label)}" for m in top][::-1]
    shown = [m.notebooks_with_evidence for m in top][::-1]
    values = [m.notebooks - m.notebooks_with_evidence for m in top][::-1]
    ax.barh(names, shown, color=EVIDENCE, label="with evidence:\nthe code shows the cause")
    ax.barh(names, values, left=shown, color=VALUES, label="the values match\nthe pattern")
    ax.set_xlabel("notebooks with a wrong answer diagnosed as it")
    _legend(ax)
    ax.set_title("Top typical mistakes of the class")
    if not top:
        ax.text(0.5, 0.5, "no typical mistake was diagnosed", ha="center", transform=ax.transAxes)


def draw_distribution(ax, report, what: str) -> None:
    """Per lesson, how the notebooks spread over ``what``: ``"attempts"`` (answers needed,
    of the notebooks that answered) or ``"hint_tiers"`` (highest hint reported shown)."""
    from course_helpers.grading.classreport.model import ATTEMPT_BUCKETS

    if what == "attempts":
        keys, title = list(ATTEMPT_BUCKETS), "Answers per exercise (notebooks that answered)"
        legend = [f"{k} answer{'s' * (k != '1')}" for k in keys]
    else:
        keys = list(range(report.max_tier + 1))
        title = "Highest hint shown (as the notebooks reported it)"
        legend = ["no hint" if k == 0 else f"hint {k}" for k in keys]
    lessons = report.lessons[::-1]
    names = [s.name for s in lessons]
    totals = [sum(getattr(s, what).values()) or 1 for s in lessons]
    left = [0.0] * len(lessons)
    for n, key in enumerate(keys):
        share = [100 * getattr(s, what)[key] / t for s, t in zip(lessons, totals, strict=True)]
        ax.barh(names, share, left=left, color=SEQUENCE[n % len(SEQUENCE)], label=legend[n])
        left = [a + b for a, b in zip(left, share, strict=True)]
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of notebooks")
    _legend(ax)
    ax.set_title(title)


def figures(report) -> dict:
    """The page's pictures, by name: ``lessons``, ``exercises``, ``top``, ``attempts``,
    ``hints`` (each a matplotlib ``Figure``)."""
    made = {}
    with _style():
        made["lessons"] = fig = _figure(len(report.lessons))
        draw_pass_rates(fig.add_subplot(), report.lessons, "lesson")
        made["exercises"] = fig = _figure(len(report.exercises))
        draw_pass_rates(fig.add_subplot(), report.exercises, "exercise")
        made["top"] = fig = _figure(len(report.top), 0.36)
        draw_top(fig.add_subplot(), report.top)
        for name, what in (("attempts", "attempts"), ("hints", "hint_tiers")):
            made[name] = fig = _figure(len(report.lessons), 0.34, 1.6)
            draw_distribution(fig.add_subplot(), report, what)
    return made


def overview(report):
    """One picture of the whole report (for a slide, an email, docs/grading.md): lesson
    pass rates, the answers needed per lesson, and the top typical mistakes."""
    from matplotlib.figure import Figure

    with _style():
        fig = Figure(figsize=(12, 6.5), layout="constrained")
        grid = fig.add_gridspec(2, 2)
        draw_pass_rates(fig.add_subplot(grid[0, 0]), report.lessons, "lesson")
        draw_distribution(fig.add_subplot(grid[1, 0]), report, "attempts")
        draw_top(fig.add_subplot(grid[:, 1]), report.top)
        count = f"{report.notebooks} notebook{'s' * (report.notebooks != 1)}"
        fig.suptitle(f"Class report: {count} handed in")
    return fig


def _legend(ax) -> None:
    """The legend right of the plot, where it never covers a bar."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)


def _short(text: str, limit: int = 44) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def svg(fig) -> str:
    """``fig`` as an inline ``<svg>`` element, its text kept as text; the same bytes for the
    same report."""
    buffer = io.StringIO()
    with _style():
        fig.savefig(buffer, format="svg", metadata=dict.fromkeys(NO_METADATA))
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def png(fig, dpi: int = 72) -> bytes:
    buffer = io.BytesIO()
    with _style():
        fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()
