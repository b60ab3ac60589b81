"""Print the key of CI's cached virtual environments (.ci/run): a hash of everything they are
installed from, so that a change to any of it builds fresh ones and nothing else does.

Hashed: requirements/constraints.txt and requirements/colab.txt, pyproject.toml's
[build-system], [project] and [tool.setuptools] tables (not the test or lint settings), and
this Python's version and path.
"""

import hashlib
import json
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
parts = [
    (ROOT / "requirements" / "constraints.txt").read_text(),
    (ROOT / "requirements" / "colab.txt").read_text(),
    json.dumps(
        [pyproject["build-system"], pyproject["project"], pyproject["tool"].get("setuptools")],
        sort_keys=True,
    ),
    sys.version,
    sys.executable,
]
print(hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16])
