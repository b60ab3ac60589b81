"""The build pipeline: exercises generated from solutions, --check catches staleness."""

import shutil
from pathlib import Path

import nbformat
import pytest

from course_helpers.authoring import build
from course_helpers.authoring.stubs import (
    MarkerError,
    find_leaks,
    make_exercise_notebook,
    strip_solution,
)

ROOT = Path(__file__).resolve().parents[2]


def test_assignments_become_not_attempted_stubs():
    source = (
        "x = 1\n### BEGIN SOLUTION\nanswer, other = torch.ones(2), 3\n### END SOLUTION\ncheck()"
    )
    stubbed, regions = strip_solution(source, markdown=False, where="cell")
    assert regions == 1
    assert stubbed == (
        "x = 1\nanswer = ...  # YOUR CODE HERE\nother = ...  # YOUR CODE HERE\ncheck()"
    )


def test_a_function_body_becomes_an_ellipsis_at_its_indentation():
    source = (
        "def f(x):\n    ### BEGIN SOLUTION\n    y = x * 2\n    return y\n    ### END SOLUTION\n"
    )
    stubbed, _ = strip_solution(source, markdown=False, where="cell")
    # the body's locals are not the answer: a bare `...` makes f return None, so the check
    # says "not attempted"
    assert stubbed == "def f(x):\n    ...  # YOUR CODE HERE\n"
    compiled = {}
    exec(stubbed, compiled)
    assert compiled["f"](3) is None


def test_a_region_without_assignments_becomes_an_ellipsis():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x * 2\n    ### END SOLUTION\n"
    stubbed, _ = strip_solution(source, markdown=False, where="cell")
    assert stubbed == "def f(x):\n    ...  # YOUR CODE HERE\n"


def test_markdown_regions_are_replaced():
    stubbed, _ = strip_solution(
        "Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION", markdown=True, where="c"
    )
    assert stubbed == "Why?\n_Your answer here._"


@pytest.mark.parametrize(
    "source, problem",
    [
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "inside an open region"),
        ("### END SOLUTION", "without a"),
        ("### BEGIN SOLUTION\nx = 1", "never closed"),
    ],
)
def test_bad_markers_name_the_cell(source, problem):
    with pytest.raises(MarkerError, match=rf"solutions/x.ipynb, cell 4.*{problem}"):
        strip_solution(source, markdown=False, where="solutions/x.ipynb, cell 4")


def _solution_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell(
            "### BEGIN SOLUTION\nanswer = secret_formula()\n### END SOLUTION\ncheck('a', answer)",
            outputs=[nbformat.v4.new_output("stream", text="passed")],
            execution_count=3,
        ),
        nbformat.v4.new_code_cell("reveal()", metadata={"tags": ["solution-only"]}),
    ]
    return nb


def test_exercise_notebook_has_no_outputs_no_solution_only_cells_and_no_leaks():
    solution = _solution_notebook()
    exercise = make_exercise_notebook(solution, name="x")
    assert [c.cell_type for c in exercise.cells] == ["markdown", "code"]
    assert exercise.cells[1].outputs == [] and exercise.cells[1].execution_count is None
    assert "secret_formula" not in nbformat.writes(exercise)
    assert find_leaks(solution, exercise) == []


def test_find_leaks_spots_solution_text_left_in_an_exercise():
    solution = _solution_notebook()
    assert find_leaks(solution, solution) == ["answer = secret_formula()"]


def test_repository_build_is_up_to_date():
    """`python -m course_helpers build --check` over the real course."""
    assert build.check() == []


def test_every_exercise_notebook_is_generated_from_its_solution_without_leaks():
    solutions = sorted((ROOT / "solutions").glob("*.ipynb"))
    assert solutions, "no solution notebooks found"
    for solution in solutions:
        exercise = nbformat.read(ROOT / "exercises" / solution.name, as_version=4)
        assert find_leaks(nbformat.read(solution, as_version=4), exercise) == [], solution.name


def test_check_reports_a_stale_exercise_and_an_edited_notebook(tmp_path, monkeypatch):
    for folder in ("notebooks", "solutions", "exercises"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.setattr(build, "ROOT", tmp_path)
    assert build.check(tmp_path) == []
    solution = sorted((tmp_path / "solutions").glob("*.ipynb"))[0]
    nb = nbformat.read(solution, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("A new paragraph."))
    nbformat.write(nb, solution)
    problems = build.check(tmp_path)
    assert any("does not match its solution" in p for p in problems)
    assert any(f"solutions/{solution.name} was edited since" in p for p in problems)


def test_check_reports_an_exercise_without_a_solution(tmp_path):
    for folder in ("notebooks", "solutions", "exercises"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "exercises" / "99_orphan.ipynb").write_text("{}")
    assert "exercises/99_orphan.ipynb has no solution notebook: delete it" in build.check(tmp_path)


def test_normalise_drops_widget_state_and_timing_metadata():
    nb = _solution_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}
    nb.cells[1].metadata["execution"] = {"iopub.status.busy": "2026-01-01"}
    nb.cells[1].metadata["tags"] = ["raises-exception"]
    out = build.normalise(nb, executed=True)
    assert "widgets" not in out.metadata
    assert out.cells[1].metadata == {"tags": ["raises-exception"]}
    assert out.metadata["kernelspec"]["name"] == "python3"
    assert [c.id for c in out.cells] == ["c000", "c001", "c002"]


def test_normalise_gives_widget_views_stable_ids():
    nb = _solution_notebook()
    view = {"model_id": "3f2a9c", "version_major": 2, "version_minor": 0}
    nb.cells[1].outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"application/vnd.jupyter.widget-view+json": view, "text/plain": "[Hint]"},
        )
    ]
    out = build.normalise(nb, executed=True)
    data = out.cells[1].outputs[0]["data"]
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == "c001-0"
    assert data["text/plain"] == "[Hint]"
