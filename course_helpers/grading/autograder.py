"""``python -m course_helpers autograder``: the bundle for Gradescope's autograder.

Gradescope builds one container image from a zip with ``setup.sh`` (run once, as root, at
image build) and ``run_autograder`` (run once per submission, from ``/autograder``) at its
root; the submission is in ``/autograder/submission`` and the results go to
``/autograder/results/results.json`` (Gradescope's autograder specification). The bundle
holds those two scripts and ``course/``: the package, the solution notebooks (the grader
scores a notebook on its lesson's full list of exercises) and the pinned versions. A bundle
grades one assignment (``--assignment``, e.g. ``01_tensors``): each of its exercises counts
once, at its best result in the submission, so copies of a notebook or another lesson's
notebook add nothing.

``AUTOGRADER_ROOT`` and ``COURSE_PYTHON`` move ``/autograder`` and the course's Python, so
the same script runs in a test against a temporary folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from course_helpers.errors import CourseError

ROOT = Path(__file__).resolve().parents[2]
COURSE_FILES = ("pyproject.toml", "README.md", "LICENSE", "requirements/constraints.txt")
COURSE_FOLDERS = ("course_helpers", "solutions")

SETUP = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
SOURCE="${AUTOGRADER_ROOT:-/autograder}/source"
apt-get install -y --no-install-recommends bubblewrap graphviz python3-venv python3-pip
python3 -m venv /opt/course
/opt/course/bin/python -m pip install --upgrade pip
# the lock file was made on Python 3.11; other Pythons install from pyproject's ranges
if python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    /opt/course/bin/python -m pip install -c "$SOURCE/course/requirements/constraints.txt" \
        -e "$SOURCE/course"
else
    /opt/course/bin/python -m pip install "torch==2.13.0" -e "$SOURCE/course"
fi
"""

RUN = r"""#!/usr/bin/env bash
# Gradescope runs this once per submission, from /autograder.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${COURSE_PYTHON:-/opt/course/bin/python}"
RESULTS="$ROOT/results/results.json"
ASSIGNMENT=@ASSIGNMENT@
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
export OMP_NUM_THREADS=1
shopt -s nullglob
notebooks=("$ROOT"/submission/*.ipynb)
if [ "${#notebooks[@]}" -eq 0 ]; then  # the grader refuses an empty batch: say why instead
    printf '%s %s\n' '{"score": 0, "tests": [], "output": "No notebook (.ipynb) was found in' \
        'your submission: upload your exercise notebook and submit again."}' > "$RESULTS"
    exit 0
fi
"$PYTHON" -m course_helpers grade "$ROOT/submission" --jobs 1 \
    --results-format gradescope --assignment "$ASSIGNMENT" --results "$RESULTS"
status=$?
# 0 and 1 are verdicts (every exercise passed, or not); anything else is the grader failing,
# which must still leave a results file that says so instead of an empty score
if [ "$status" -gt 1 ] || [ ! -s "$RESULTS" ]; then
    printf '%s' '{"score": 0, "stdout_visibility": "hidden", "tests": [], "output": ' \
        "\"The grader itself failed (exit status $status): this is not a verdict on your " \
        "work. Your instructor sees the grader's log.\"}" > "$RESULTS"
fi
exit 0
"""


def build(target: Path, assignment: str, zip_it: bool = False) -> Path:
    """Write the bundle that grades ``assignment`` (lesson stems or numbers, comma-separated)
    into ``target`` (a new or empty folder); with ``zip_it``, also ``target.zip`` with the
    scripts at its root, as Gradescope expects."""
    import shlex

    from course_helpers.grading.platforms import assignment_exercises

    assignment_exercises(assignment)  # a CourseError naming the lessons if it is none
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise CourseError(f"{target} exists and is not an empty folder: name a new folder.")
    course = target / "course"
    for name in COURSE_FILES:
        (course / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, course / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    for name in COURSE_FOLDERS:
        shutil.copytree(ROOT / name, course / name, ignore=ignore)
    run = RUN.replace("@ASSIGNMENT@", shlex.quote(assignment))
    for name, text in (("setup.sh", SETUP), ("run_autograder", run)):
        (target / name).write_text(text, encoding="utf-8")
        (target / name).chmod(0o755)
    if zip_it:
        return Path(shutil.make_archive(str(target), "zip", root_dir=target))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_helpers autograder",
        description="Build the Gradescope autograder bundle (setup.sh, run_autograder, course/).",
    )
    parser.add_argument("folder", help="a new folder for the bundle")
    parser.add_argument(
        "--assignment",
        required=True,
        metavar="LESSON",
        help="the lesson(s) this Gradescope assignment grades, e.g. 01_tensors",
    )
    parser.add_argument("--zip", action="store_true", help="also write FOLDER.zip to upload")
    args = parser.parse_args(argv)
    try:
        made = build(Path(args.folder), args.assignment, zip_it=args.zip)
    except CourseError as err:
        print(f"autograder: {err}", file=sys.stderr)
        return 2
    print(f"wrote {made}", file=sys.stderr)
    return 0
