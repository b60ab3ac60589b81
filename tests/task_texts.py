"""Every exercise's task text, and the curated list of imperatives a task text may hold.

``task_texts()`` reads each solution notebook: an exercise's task is the Markdown written
between the previous ``check`` cell (or the notebook's first code cell) and the cell that
checks it, plus the exercise's own title. ``imperatives(text)`` finds the phrases that tell
the learner *how* to work (``IMPERATIVES``); tests/lessons/test_task_imperatives.py requires
each of them to be declared in the exercise's ``task_says``: checked, or advice.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = re.compile(r'check\(\s*"(\d\d\.\w+)"')
SOLUTION = re.compile(r"### BEGIN SOLUTION.*?### END SOLUTION", re.S)

# (pattern, why it is an imperative). Matched case-insensitively on the normalised text
# (no Markdown emphasis, no backticks, single spaces).
IMPERATIVES = [
    (r"\bmust(?: not)?\b", "a requirement: 'it must also work for ...', 'must not use dropout'"),
    (
        r"(?:^|[.:;!?(]\s*|, |\band )(?:do not|don't|never)\b",
        "a prohibition, in the imperative: 'Do not modify the module', 'do not name a device'",
    ),
    (
        r"\bwithout (?:\w+ing\b|a (?:graph|leak)\b|dropout\b)",
        "a route ruled out: 'without typing the numbers', 'without adding the losses', "
        "'without running it', 'without a graph'",
    ),
    (r"\bno (?:python )?loops?\b", "a route ruled out: 'no Python loop', 'no loops'"),
    (r"\bno retain_graph\b", "a route ruled out: 'no retain_graph'"),
    (r"\bby hand\b", "a route: worked out by hand, not by autograd or by running the code"),
    (r"\bby autograd\b", "a route: computed by autograd, not by a typed formula"),
    (
        r"\bexactly\b",
        "a count or an identity: 'exactly one rank', 'exactly once', 'exactly the same'",
    ),
    (
        r"\b(?:once per \w+(?:-\w+)?|only once \(|single backward|walks the graph once)",
        "a count: 'backward() once per loss', 'a single backward pass'",
    ),
    (
        r"(?:^|[.:;!?(]\s*|, |\band )(?:use|using)\b",
        "a tool to use, in the imperative: 'Use autograd', 'use torch.autograd.grad twice', "
        "'(use F.mse_loss)'",
    ),
    (
        r"(?:^|[.:;!?(]\s*|, )keep(?:ing)?\b",
        "something to keep, in the imperative: '(keep using backward)', '(keep the same loss "
        "...)', 'Keep the name loss'",
    ),
    (r"\b(?:update|modify) \w+ in place\b", "an update in place: 'Update it in place'"),
    (
        r"\bleave\b|\bleaves? (?:\w+ ){0,2}unchanged\b",
        "a state to leave: 'leaves x unchanged', 'leave the model in the mode it found it in', "
        "'Leave them on the CPU'",
    ),
    (r"\bone line\b", "a size: 'one line of tensor arithmetic does it'"),
    (r"\bbefore it is complete\b", "an order: 'no rank reads it before it is complete'"),
    (r"\bon device\b", "a place: 'on device: move the data and the model there'"),
    (r"\bwith dist\.\w+", "a tool: 'with dist.all_reduce'"),
    (r"\bright after\b", "an order: 'DDP(...) right after torch.manual_seed(0)'"),
    (r"\bload with\b", "a way to load: 'Load with map_location=...'"),
    (r"\btake one step\b", "a count: 'take one step'"),
]
# and every phrase in bold: emphasis reads as a requirement ("**by hand**", "**before**")
BOLD = re.compile(r"(?<![\w*])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w*])")


def normalise(text: str) -> str:
    text = re.sub(r"\*\*|__|`", "", text)
    text = re.sub(r"(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)", "", text)
    return re.sub(r"\s+", " ", text).strip()


def imperatives(text: str, bold=()) -> list[tuple[int, int, str]]:
    """(start, end, phrase) of every imperative in the normalised ``text``, and of every
    ``bold`` span (start, end) of it."""
    found = []
    for pattern, _ in IMPERATIVES:
        for match in re.finditer(pattern, text, flags=re.I):
            start, end = match.span()
            while start < end and not text[start].isalnum():  # the lead-in of 'use'
                start += 1
            if text[start:end].lower().startswith("and "):
                start += 4
            found.append((start, end, text[start:end]))
    found.extend((start, end, text[start:end]) for start, end in bold)
    return sorted(set(found))


def _with_bold(raw: str) -> tuple[str, list[tuple[int, int]]]:
    """The normalised text and the spans of its bold phrases."""
    marked = normalise(BOLD.sub(lambda m: f"\x01{m.group(1)}\x02", raw))
    text, spans, start = "", [], 0
    for char in marked:
        if char == "\x01":
            start = len(text)
        elif char == "\x02":
            spans.append((start, len(text)))
        else:
            text += char
    return text, spans


def task_texts() -> dict[str, tuple[str, list[tuple[int, int]]]]:
    """Exercise id -> (its task text, normalised; the spans of its bold phrases), for every
    exercise a solution notebook checks, its title included; the title alone for the
    others."""
    from course_helpers.lessons import catalog

    texts: dict[str, str] = {}
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        pending: list[str] = []
        started = False
        for cell in cells:
            source = "".join(cell["source"])
            if cell["cell_type"] == "markdown":
                if SOLUTION.search(source):  # a written answer's cell: no part of the task
                    continue
                if started:
                    pending.append(source)
                continue
            started = True
            ids = CHECK.findall(source)
            for exercise_id in ids:
                texts[exercise_id] = "\n\n".join(pending)
            if ids:
                pending = []
    tasks = {}
    for ex in catalog():
        raw = f"{ex.title}. {texts.get(ex.id, '')}".strip()
        tasks[ex.id] = _with_bold(raw)
    return tasks
