"""The lock file (requirements/constraints.txt) installs on every Python the README allows.

Debian 12's own Python is 3.11.2 and the README says "Python 3.11+"; a lock made on 3.11.7 once
pinned soupsieve 4.1.2, which needs 3.11.5, and `make lab` stopped there (issue 38). The
Makefile names the oldest Python once (OLDEST_PYTHON); `make lock` resolves for it, and
`make check-lock` (run by CI, also with Debian's /usr/bin/python3.11) proves the lock installs
there. This file checks, offline, that those pieces agree and that every pin installed in this
environment declares a Requires-Python that admits it.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import tomllib
from ci_calls import ci_calls, make_calls
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _oldest_python() -> str:
    found = re.search(r"^OLDEST_PYTHON := (\S+)$", MAKEFILE, re.M)
    assert found, "the Makefile names no OLDEST_PYTHON"
    return found.group(1)


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements" / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.strip().partition("==")
            pins[name] = version
    return pins


def _recipe(target: str) -> str:
    found = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n?)+)", MAKEFILE, re.M)
    assert found, f"no {target} target in the Makefile"
    return found.group(1)


def test_the_oldest_python_is_the_floor_of_pyproject_and_the_readme():
    oldest = _oldest_python()
    allowed = SpecifierSet(PYPROJECT["project"]["requires-python"])
    assert oldest in allowed
    # the floor itself: nothing older is allowed
    major, minor, micro = (int(part) for part in oldest.split("."))
    assert micro == 0 or f"{major}.{minor}.{micro - 1}" not in allowed
    assert f"{major}.{minor - 1}.99" not in allowed
    readme = (ROOT / "README.md").read_text()
    assert f"Python {major}.{minor}+" in readme.split("---")[0], "the README's setup line"


def test_the_setup_check_and_the_lock_recipes_use_it():
    assert '"$(OLDEST_PYTHON)"' in _recipe("$(STAMP)"), "make setup's version check"
    lock = _recipe("lock")
    assert "--python-version $(OLDEST_PYTHON)" in lock
    # make lock checks what it wrote, before its scratch venv goes, as make check-lock does
    assert lock.index("$(call check_lock,.lock-venv/bin/python)") < lock.index(
        "rm -rf .lock-venv\n"
    )
    assert "$(call check_lock,$(BIN)/python)" in _recipe("check-lock")
    check = MAKEFILE[
        MAKEFILE.index("define check_lock") : MAKEFILE.index(
            "endef", MAKEFILE.index("define check_lock")
        )
    ]
    assert "--python-version $(OLDEST_PYTHON)" in check and "--dry-run" in check
    assert "--python $$scratch/venv/bin/python" in check  # LOCK_PYTHON: a real interpreter


def test_ci_resolves_the_lock_with_debians_python():
    assert "make check-lock LOCK_PYTHON=/usr/bin/python3.11" in make_calls()
    installs = [c for c in ci_calls() if c.startswith("apt-get install")]
    assert installs and "python3.11" in installs[0].split()


def test_every_installed_pin_admits_the_oldest_python():
    """Each pinned distribution installed here at its pinned version declares a
    Requires-Python that the oldest allowed Python satisfies. `make setup` installs every pin;
    a compatibility venv differs in torch and setuptools; an environment installed otherwise
    (conda, pyproject's ranges) is checked where it agrees with the lock."""
    oldest = Version(_oldest_python())
    refused = []
    for name, version in _pins().items():
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        if Version(dist.version).public != Version(version).public:
            continue
        requires = dist.metadata.get("Requires-Python")
        if requires and oldest not in SpecifierSet(requires):
            refused.append(f"{name}=={version} (Requires-Python {requires})")
    assert not refused, f"these pins do not install on Python {oldest}: {refused}"


def test_the_lock_pins_a_build_backend_that_builds_the_course():
    pins = _pins()
    for text in PYPROJECT["build-system"]["requires"]:
        requirement = Requirement(text)
        assert requirement.name in pins, f"the lock does not pin {requirement.name}"
        assert requirement.specifier.contains(pins[requirement.name]), text
