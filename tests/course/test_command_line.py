"""python -m course_helpers: its commands, and what it spares every process that reads notebooks."""

import subprocess
import sys
from pathlib import Path

from course_helpers.__main__ import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]

READ_AND_VALIDATE = """
import copy, sys
from course_helpers.__main__ import skip_unused_iri_checker
skip_unused_iri_checker()
import nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
broken = copy.deepcopy(nb)
broken.cells[0]["cell_type"] = "bogus"
try:
    nbformat.validate(broken)
except nbformat.ValidationError:
    print("invalid notebook refused")
print("lark imported:", "lark" in sys.modules)
"""


def test_notebooks_are_still_validated_without_the_iri_parsers():
    done = subprocess.run(
        [sys.executable, "-c", READ_AND_VALIDATE, str(ROOT / "solutions" / "01_tensors.ipynb")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == ["invalid notebook refused", "lark imported: False"]


def test_an_unknown_command_names_the_known_ones(capsys):
    assert main(["grades"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'grades'" in err
    assert all(name in err for name in COMMANDS)
