"""Exercises that practise a lesson's optional part say so (issue 35's cut).

After the cut, some exercises train material that only a lesson's ``## Going further
(optional)`` teaches. A learner who followed the main path must read in the task where to find
it: "(Taught in lesson NN's *Going further*: "section")". Every such reference must name a
``###`` section of that lesson's optional part, so that a renamed or moved section fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from task_texts import normalise, task_texts

ROOT = Path(__file__).resolve().parents[2]
TASKS = task_texts()

# exercises whose topic only the optional part teaches (r4-review-a for 01-09; 10-13 read the
# same way), or whose case only the optional part runs
GOING_FURTHER = [
    "01.detach_numpy_snapshot",
    "02.mean_of_counts",
    "03.zeros_like_view",
    "04.mm_batch_error",
    "05.central_difference",
    "05.max_dim_tie",
    "05.mul_saves",
    "05.retain_grad_with_hook",
    "07.no_grad_parentheses",
    "07.frozen_momentum",
    "07.frozen_batchnorm",
    "07.created_in_no_grad",
    "07.frozen_middle",
    "07.frozen_prefix_missed",
    "08.silent_cast",
    "08.version_getitem",
    "08.silent_downcast",
    "09.gradient_penalty",
    "10.parameter_to",
    "10.strict_false_prefix",
    "11.seeded_loader",
    "11.clip_with_scaler",
    "13.exact_evaluation",
]
# 'lesson 05's Going further: "Ties in max"' or 'its Going further, "..."' (normalised text)
REFERENCE = re.compile(r"""(?:lesson (\d\d)'s|its) Going further[:,] "([^"]+)\"""")


def _going_further_sections(lesson: str) -> list[str]:
    """The ``###`` headings after the lesson's ``## Going further``, normalised as task texts
    are (no backticks, no emphasis)."""
    (path,) = (ROOT / "notebooks").glob(f"{lesson}_*.ipynb")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    sections, optional = [], False
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] != "markdown":
            continue
        optional = optional or "## Going further" in source
        if optional:
            sections += [
                normalise(line[4:]) for line in source.splitlines() if line.startswith("### ")
            ]
    return sections


@pytest.mark.parametrize("exercise_id", GOING_FURTHER)
def test_the_task_says_where_its_topic_is_taught(exercise_id):
    text, _ = TASKS[exercise_id]
    lesson = exercise_id[:2]
    references = REFERENCE.findall(text)
    assert references, (
        f"{exercise_id}'s task practises lesson {lesson}'s optional part: open it with "
        f'(Taught in lesson {lesson}\'s *Going further*: "section").'
    )
    sections = _going_further_sections(lesson)
    for named_lesson, section in references:
        assert named_lesson in ("", lesson), f"{exercise_id} points to lesson {named_lesson}"
        assert section in sections, (
            f'{exercise_id} names "{section}", which is no section of lesson {lesson}\'s '
            f"Going further: {sections}"
        )


def test_every_going_further_reference_in_a_task_names_a_real_section():
    for exercise_id, (text, _) in TASKS.items():
        for named_lesson, section in REFERENCE.findall(text):
            lesson = named_lesson or exercise_id[:2]
            assert section in _going_further_sections(lesson), (
                exercise_id,
                section,
            )
