"""The notebook build: generate exercises, execute notebooks, normalise metadata.

``python -m course_helpers build``            regenerate exercises/, execute what changed
``python -m course_helpers build --force``    execute every notebook again
``python -m course_helpers build PATH...``    execute just these notebooks
``python -m course_helpers build --check``    change nothing; fail when anything is out of date
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from course_helpers.authoring import colab

ROOT = Path(__file__).resolve().parents[2]
EXECUTED_DIRS = ("notebooks", "solutions")
KEPT_CELL_METADATA = ("tags", "jupyter", "editable", "deletable")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
CELL_TIMEOUT = 600
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def source_hash(nb) -> str:
    """A fingerprint of what a notebook says (cell types, sources, tags), not of its outputs."""
    digest = hashlib.sha256()
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        digest.update(json.dumps([cell.cell_type, cell.source, sorted(tags)]).encode())
    return digest.hexdigest()[:16]


def normalise(nb, *, executed: bool):
    """Canonical metadata: fixed kernelspec, no widget state, no timing, stable cell ids."""
    course = nb.metadata.get("course", {}) if executed else {}
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
    }
    if executed and course:
        nb.metadata["course"] = course
    nb.nbformat, nb.nbformat_minor = 4, 5
    for index, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {})
        cell.metadata = {k: meta[k] for k in KEPT_CELL_METADATA if k in meta}
        cell.id = f"c{index:03d}"
        if cell.cell_type == "code":
            cell.outputs = _coalesce_streams(cell.get("outputs", []))
            for number, output in enumerate(cell.outputs):
                output.get("metadata", {}).pop("execution", None)
                view = output.get("data", {}).get(WIDGET_VIEW)
                if view:  # random per run, and meaningless once saved without widget state
                    view["model_id"] = f"{cell.id}-{number}"
        if "attachments" in cell and not cell.attachments:
            del cell["attachments"]
    return nb


def _coalesce_streams(outputs: list) -> list:
    """Merge consecutive stdout (or stderr) pieces, as a reader sees them."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            output.get("output_type") == "stream"
            and previous is not None
            and previous.get("output_type") == "stream"
            and previous.get("name") == output.get("name")
        ):
            previous["text"] = previous["text"] + output["text"]
        else:
            merged.append(output)
    return merged


def dumps(nb) -> str:
    import nbformat

    return nbformat.writes(nb, version=4) + "\n"


def read(path: Path):
    import nbformat

    return nbformat.read(str(path), as_version=4)


def exercise_path_for(solution: Path) -> Path:
    return solution.parent.parent / "exercises" / solution.name


def generated_exercise(solution: Path) -> str:
    from course_helpers.authoring.stubs import make_exercise_notebook

    nb = make_exercise_notebook(read(solution), name=f"{solution.parent.name}/{solution.name}")
    colab.refresh(nb, f"exercises/{solution.name}")
    return dumps(normalise(nb, executed=False))


def kernel_env(path: Path) -> dict[str, str]:
    """Environment for a kernel running ``path`` (strict for solutions, no progress)."""
    return {
        "COURSE_PROGRESS": "off",
        "COURSE_STRICT": "1" if path.parent.name == "solutions" else "0",
        "OMP_NUM_THREADS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }


def execute(path: Path) -> str:
    """Run a notebook top to bottom in a fresh kernel and save it; return a status line."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    os.environ.update(kernel_env(path))
    os.environ.pop("COURSE_GRADING_DIR", None)
    nb = read(path)
    colab.refresh(nb, path.relative_to(ROOT).as_posix())
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
    )
    try:
        client.execute()
    except CellExecutionError as error:
        first_line = str(error).strip().splitlines()[-1] if str(error).strip() else "error"
        return f"FAILED {path.relative_to(ROOT)}: {first_line}"
    nb.metadata["course"] = {"source_hash": source_hash(nb)}
    path.write_text(dumps(normalise(nb, executed=True)))
    return f"executed {path.relative_to(ROOT)}"


def is_up_to_date(path: Path) -> bool:
    nb = read(path)
    if colab.refresh(read(path), f"{path.parent.name}/{path.name}"):
        return False  # its Colab link or setup cell is missing or out of date
    stored = nb.metadata.get("course", {}).get("source_hash")
    executed = all(c.execution_count is not None for c in nb.cells if c.cell_type == "code")
    return stored == source_hash(nb) and executed


def all_notebooks(root: Path | None = None) -> list[Path]:
    root = root or ROOT
    return sorted(p for d in EXECUTED_DIRS for p in (root / d).glob("*.ipynb"))


def check(root: Path | None = None) -> list[str]:
    """Everything that is out of date, as human-readable lines (empty: all good)."""
    from course_helpers.authoring.stubs import MarkerError

    root = root or ROOT
    problems = []
    solutions = sorted((root / "solutions").glob("*.ipynb"))
    expected_exercises = {exercise_path_for(s).name for s in solutions}
    for solution in solutions:
        target = exercise_path_for(solution)
        try:
            wanted = generated_exercise(solution)
        except MarkerError as error:
            problems.append(f"solution markers: {error}")
            continue
        if not target.exists():
            problems.append(f"missing {target.relative_to(root)}: run the build")
        elif target.read_text() != wanted:
            problems.append(
                f"{target.relative_to(root)} does not match its solution: run the build"
            )
    for stray in sorted((root / "exercises").glob("*.ipynb")):
        if stray.name not in expected_exercises:
            problems.append(f"{stray.relative_to(root)} has no solution notebook: delete it")
    readme = root / "README.md"
    if readme.exists() and colab.refresh_readme(readme.read_text()) != readme.read_text():
        problems.append("README.md's course map has out-of-date Colab links: run the build")
    for path in all_notebooks(root):
        rel = path.relative_to(root)
        if colab.refresh(read(path), rel.as_posix()):
            problems.append(f"{rel} lacks the current Colab link or setup cell: run the build")
            continue
        if not is_up_to_date(path):
            problems.append(f"{rel} was edited since it was last executed: run the build")
            continue
        if path.read_text() != dumps(normalise(read(path), executed=True)):
            problems.append(f"{rel} has metadata that is not normalised: run the build")
    return problems


def build(paths: list[Path], *, force: bool, jobs: int) -> int:
    from course_helpers.authoring.stubs import MarkerError

    (ROOT / "exercises").mkdir(exist_ok=True)
    readme = ROOT / "README.md"
    if readme.exists() and colab.refresh_readme(readme.read_text()) != readme.read_text():
        readme.write_text(colab.refresh_readme(readme.read_text()))
        print("refreshed the Colab links of README.md's course map")
    for solution in sorted((ROOT / "solutions").glob("*.ipynb")):
        try:
            text = generated_exercise(solution)
        except MarkerError as error:
            print(f"solution markers: {error}", file=sys.stderr)
            return 1
        target = exercise_path_for(solution)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
            print(f"generated {target.relative_to(ROOT)}")
    todo = paths or [p for p in all_notebooks() if force or not is_up_to_date(p)]
    for path in [] if paths else all_notebooks():
        if path not in todo:
            text = dumps(normalise(read(path), executed=True))
            if path.read_text() != text:
                path.write_text(text)
                print(f"normalised {path.relative_to(ROOT)}")
    if not todo:
        print("all notebooks are up to date")
        return 0
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(execute, todo))
    for line in results:
        print(line)
    return 1 if any(line.startswith("FAILED") for line in results) else 0


def _argument_problem(paths: list[Path], jobs: int) -> str:
    """What is wrong with build's command line, or ""."""
    import stat

    if jobs < 1:
        return f"--jobs must be at least 1, not {jobs}"
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError as err:
            return f"{path}: {err.strerror.lower()}; name a notebook of the course (.ipynb)"
        if not stat.S_ISREG(mode) or path.suffix != ".ipynb":
            return f"{path}: not a notebook file; name a notebook of the course (.ipynb)"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_helpers build",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, help="notebooks to execute (default: stale ones)"
    )
    parser.add_argument("--check", action="store_true", help="change nothing; fail if out of date")
    parser.add_argument("--force", action="store_true", help="execute every notebook again")
    parser.add_argument(
        "--jobs", type=int, default=2, help="notebooks executed at once (default 2)"
    )
    args = parser.parse_args(argv)
    problem = _argument_problem(args.paths, args.jobs)
    if problem:  # before anything is generated or executed (a FIFO would block a worker)
        parser.error(problem)
    from course_helpers.errors import CourseError

    try:
        if args.check:
            problems = check()
            for line in problems:
                print(line)
            if not problems:
                print("build is up to date")
            return 1 if problems else 0
        return build([p.resolve() for p in args.paths], force=args.force, jobs=args.jobs)
    except CourseError as error:  # e.g. pyproject.toml's repository address (colab.py)
        print(f"build: {error}", file=sys.stderr)
        return 2
