"""A misconception states a mechanism only with evidence (issue 34, item 1).

``misconceptions.match`` recognises a typical mistake by behaviour alone (the same values,
the same outputs on every test input), and many routes lead to the same values. So an entry
says what was observed (``message``), and states what the learner's code did (``cause``)
only when the recorded code holds its ``evidence``. Two catalogue-wide rules:

1. A text shown without evidence (``message``, ``hint``) names no code construct
   (``code_constructs.constructs`` says how that is decided). Prediction and "which error"
   exercises are the exception: their learner wrote no code, and the constructs their texts
   name are those of the task's own code, which the learner was shown.
2. For every entry with evidence, the same values handed in with code that lacks the
   evidence are told the observation and never the mechanism; with the entry's own code they
   are told the mechanism, introduced by the evidence found.
"""

from __future__ import annotations

import ast
import functools
import inspect

import pytest
from code_constructs import constructs

from course_helpers import lessons
from course_helpers.checking import evidence, misconceptions
from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.lessons import get
from course_helpers.lessons.model import Misconception

ENTRIES = lessons.catalogue()
CODED = [m for m in ENTRIES if get(m.exercise_id).kind in ("value", "function", "autograd")]
PREDICTED = [m for m in ENTRIES if m not in CODED]
WITH_EVIDENCE = [m for m in ENTRIES if m.evidence]


def _ids(entries):
    return [f"{m.exercise_id}:{m.label}" for m in entries]


# --------------------------------------------------------------------------- rule 1


@pytest.mark.parametrize("entry", CODED, ids=_ids(CODED))
def test_a_text_shown_without_evidence_names_no_code_construct(entry):
    assert constructs(entry.message) == [], "say what the answer shows, or move it to cause="
    assert constructs(entry.hint) == [], "a hint asks; it claims no construct either"


@pytest.mark.parametrize("entry", PREDICTED, ids=_ids(PREDICTED))
def test_a_prediction_has_no_code_to_hold_evidence(entry):
    """A prediction's learner wrote no code: nothing could show a mechanism, so none is
    declared (its texts may name the task's own code, which the learner was shown)."""
    assert not entry.evidence and not entry.cause


def test_every_entry_has_a_hint_of_its_own():
    """Issue 34, item 6: the first hint after a diagnosed mistake leads away from it."""
    missing = [f"{m.exercise_id}:{m.label}" for m in ENTRIES if not m.hint.strip()]
    assert missing == []
    assert all(m.hint != m.message for m in ENTRIES)


def test_the_detector_finds_what_the_issue_names():
    """The constructs the issue lists are found; plain prose and observed state are not."""
    for text in (
        "you called `.item()` there",
        "squeeze() with no dim",
        "torch.cdist returns distances",
        "bmm needs 3-D tensors",
        "it used retain_graph=True",
        "model.eval() only changes dropout",
        "the hook halves it",
        "a list of Parameters",
        "x[:, ::2] keeps every other column",
        "a @ b is a product",
        "x -= 1 writes in place",
        "zero_grad clears it",
    ):
        assert constructs(text), text
    for text in (
        "Every distance is the square root of the expected one.",
        "Your tensor has shape (4, 3) and dtype torch.int64; its .grad is twice the expected one.",
        "f(x) = x² has the derivative 2x, e.g. at x = 3.",
        "The model is left in evaluation mode: w.grad holds the sum of both gradients.",
        "Take the mean over the rows; 1/n of each value.",
    ):
        assert constructs(text) == [], text


# --------------------------------------------------------------------------- rule 2


def _module_tree(entry):
    return ast.parse(inspect.getsource(_lesson_module(entry)))


def _lesson_module(entry):
    import importlib

    number = entry.exercise_id.split(".")[0]
    return importlib.import_module(f"course_helpers.lessons.lesson{number}.misconceptions")


@functools.cache
def catalogued_code(entry: Misconception) -> str:
    """The code of the catalogued wrong answer: its ``build_answer`` expression, every
    function of its module that expression reaches (the wrong function, its helpers) and the
    functions it imports from the lesson's exercises (one level)."""
    tree = _module_tree(entry)
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    call = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "Misconception"
        and _keyword(node, "exercise_id") == entry.exercise_id
        and _keyword(node, "label") == entry.label
    )
    build = next(k.value for k in call.keywords if k.arg == "build_answer")
    names = vars(_lesson_module(entry))
    parts, todo, seen = [ast.unparse(build)], [build], set()
    while todo:
        for node in ast.walk(todo.pop()):
            if not isinstance(node, ast.Name) or node.id in seen:
                continue
            seen.add(node.id)
            if node.id in defs:
                parts.append(ast.unparse(defs[node.id]))
                todo.append(defs[node.id])
            elif inspect.isfunction(names.get(node.id)):  # a helper the module imports
                parts.append(inspect.getsource(names[node.id]))
    return "\n\n".join(parts)


def _keyword(call: ast.Call, name: str):
    return next(ast.literal_eval(k.value) for k in call.keywords if k.arg == name)


def _submission(entry, code_text: str | None) -> dict:
    exercise = get(entry.exercise_id)
    submission = collect(exercise, entry.build_answer())
    submission.pop("code", None)
    if code_text is not None:
        where = "function source" if exercise.kind == "function" else "answer cell"
        submission["code"] = {"where": where, "text": code_text}
    return submission


@pytest.mark.parametrize("entry", WITH_EVIDENCE, ids=_ids(WITH_EVIDENCE))
def test_the_entrys_own_code_holds_its_evidence_and_is_told_the_cause(entry):
    code = catalogued_code(entry)
    hits = evidence.found({"where": "answer cell", "text": code}, entry.evidence)
    assert all(hits.values()), f"the wrong answer's own code lacks {hits}"
    verdict = judge(get(entry.exercise_id), _submission(entry, code))
    assert entry.message in verdict.message
    # the cause continues the lead-in ("Your code calls `x`: wrapping ...")
    cause = entry.cause_for([hit for pattern in entry.evidence for hit in hits[pattern]])
    assert "\nYour code " in verdict.message and misconceptions.continued(cause) in (
        verdict.message
    )


def _another_route(exercise) -> str:
    """Code that hands in the same values without any construct: the values come from a
    name the code does not show being made (as from an earlier cell, or another route)."""
    if exercise.kind == "function":
        return "def answer(*args):\n    return same_values_by_another_route(*args)\n"
    return f"answer = same_values_by_another_route\ncheck({exercise.id!r}, answer)\n"


@pytest.mark.parametrize("entry", WITH_EVIDENCE, ids=_ids(WITH_EVIDENCE))
def test_the_same_values_by_another_route_are_not_told_the_mechanism(entry):
    exercise = get(entry.exercise_id)
    code = _another_route(exercise)
    assert not all(evidence.found({"text": code}, entry.evidence).values())
    verdict = judge(exercise, _submission(entry, code))
    assert misconceptions.match(exercise, _submission(entry, code)["answer"], _judges()) is entry
    assert entry.message in verdict.message
    for cause in entry.causes:
        assert cause not in verdict.message
        assert misconceptions.continued(cause) not in verdict.message
    assert "Your code" not in verdict.message and "If your code" not in verdict.message
    assert verdict.mistake == entry.hint  # the next hint claims nothing either


@pytest.mark.parametrize("entry", WITH_EVIDENCE, ids=_ids(WITH_EVIDENCE))
def test_without_code_the_mechanism_is_only_a_possible_cause(entry):
    verdict = judge(get(entry.exercise_id), _submission(entry, None))
    lead = evidence.lead_in(entry.evidence)
    cause = misconceptions.continued(entry.cause_for(None))
    assert f"\nIf your code {lead}: {cause}" in verdict.message
    assert "\nYour code" not in verdict.message


def _judges():
    from course_helpers.checking.judges import JUDGES

    return JUDGES


# --------------------------------------------------------------------------- in a real kernel

_SETUP = (
    "import os\nos.environ['COURSE_PROGRESS'] = 'off'\nimport torch\n"
    "from course_helpers import check\n"
)

# (cell, what its verdict must say, what it must not say): the issue's examples and their
# counterparts, each checked from the cell that computes the answer, as a learner runs it
EXAMPLES = [
    (
        "def every_other_column(x):\n    return x[:, ::2].squeeze()\n"
        "check('01.every_other_column', every_other_column)",
        ["missing the size-1 dimension at dim 1"],
        ["keepdim=False", "reduced over"],
    ),
    (
        "def pairwise_sq_dists(a, b):\n"
        "    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1).sqrt()\n"
        "check('04.pairwise_sq_dists', pairwise_sq_dists)",
        ["Every distance is the square root of the expected one"],
        ["cdist"],
    ),
    (
        "def pairwise_sq_dists(a, b):\n    return torch.cdist(a, b)\n"
        "check('04.pairwise_sq_dists', pairwise_sq_dists)",
        ["square root of the expected one", "Your code calls `cdist`: torch.cdist returns"],
        [],
    ),
    (  # a value: the same grid typed by hand is not told about arange
        "answer = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])\n"
        "check('01.arange_grid', answer)",
        ["Your grid runs from 1 to 12"],
        ["arange(start, end)"],
    ),
    (
        "answer = torch.arange(1, 13).reshape(3, 4)\ncheck('01.arange_grid', answer)",
        ["Your grid runs from 1 to 12", "Your code calls `arange`: torch.arange(start, end)"],
        [],
    ),
]


def test_the_issues_examples_in_a_real_kernel():
    from answer_cells import run_in_kernel

    nb = run_in_kernel([_SETUP] + [cell for cell, _, _ in EXAMPLES])
    for cell, (source, wanted, unwanted) in zip(nb.cells[1:], EXAMPLES, strict=True):
        shown = "".join(
            out.get("data", {}).get("text/plain", "") + out.get("text", "") for out in cell.outputs
        )
        for text in wanted:
            assert text in shown, (source, shown)
        for text in unwanted:
            assert text not in shown, (source, shown)


def test_a_cause_without_evidence_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="needs evidence="):
        Misconception("01.arange_grid", "x", lambda: 1, "seen", cause="you called arange")
    with pytest.raises(ValueError, match="tuple of patterns"):
        Misconception("01.arange_grid", "x", lambda: 1, "seen", cause="c", evidence="call:arange")
    with pytest.raises(ValueError, match="tuple of patterns"):
        Misconception("01.arange_grid", "x", lambda: 1, "seen", cause="c", evidence=("op:plus",))


def test_the_lead_in_names_only_the_alternatives_the_code_holds():
    entry = next(m for m in ENTRIES if m.evidence == ("call:mul_|add_",))
    both = misconceptions.explain(entry, {"text": "c.mul_(9 / 5).add_(32)"})
    cause = misconceptions.continued(entry.cause_for(None))
    assert f"{entry.message}\nYour code calls `mul_` or `add_`: {cause}" == both
    only = misconceptions.explain(entry, {"text": "c = c * 9 / 5\nc.add_(32)"})
    assert f"{entry.message}\nYour code calls `add_`: {cause}" == only
    unread = misconceptions.explain(entry, None)
    assert f"{entry.message}\nIf your code calls `mul_` or `add_`: {cause}" == unread


def test_a_cell_run_without_history_is_still_read():
    """nbval runs cells with store_history=False, so IPython's input history lacks them: the
    evidence then comes from the kernel's execute request itself."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    cell = "answer = torch.arange(1, 13).reshape(3, 4)\ncheck('01.arange_grid', answer)"
    nb.cells = [nbformat.v4.new_code_cell(_SETUP), nbformat.v4.new_code_cell(cell)]
    client = NotebookClient(nb, timeout=120, kernel_name="python3")
    with client.setup_kernel():
        for index, each in enumerate(nb.cells):
            client.execute_cell(each, index, store_history=False)
    shown = "".join(o.get("data", {}).get("text/plain", "") for o in nb.cells[1].outputs)
    assert "Your code calls `arange`: torch.arange(start, end)" in shown, shown


def test_the_cause_continues_the_lead_in_in_lower_case():
    """r4 walkthrough #2, #30: "Your code calls `tensor`: Wrapping the numbers ..." read as two
    sentences glued; an ordinary capitalised first word is lowered, names are kept."""
    assert misconceptions.continued("Wrapping the numbers") == "wrapping the numbers"
    assert misconceptions.continued("A float argument") == "a float argument"
    for kept in ("DDP decides", "torch.cdist returns", "CUDA has", "x.grad holds"):
        assert misconceptions.continued(kept) == kept


def test_a_cause_per_alternative_shows_only_the_texts_of_the_code_s_alternatives():
    """r4 walkthrough #2: torch.Tensor(range(12)) was told about arange(12.0) too."""
    entry = next(
        m
        for m in ENTRIES
        if m.exercise_id == "01.arange_grid"
        and "call:Tensor" in (m.cause if isinstance(m.cause, dict) else {})
    )
    tensor = misconceptions.explain(
        entry, {"text": "answer = torch.Tensor(range(12)).reshape(3, 4)"}
    )
    assert "Your code calls `Tensor`: torch.Tensor(list) makes" in tensor
    assert "arange(12.0)" not in tensor
    arange = misconceptions.explain(entry, {"text": "answer = torch.arange(12.0).reshape(3, 4)"})
    assert "arange(12.0)" in arange and "torch.Tensor(list)" not in arange
    unread = misconceptions.explain(entry, None)
    assert "arange(12.0)" in unread and "torch.Tensor(list)" in unread
    with pytest.raises(ValueError, match="one text for each alternative"):
        Misconception(
            "01.arange_grid",
            "x",
            lambda: 1,
            "seen",
            cause={"call:arange": "c"},
            evidence=("call:arange|Tensor",),
        )
