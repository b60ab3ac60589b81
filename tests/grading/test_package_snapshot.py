"""The course package's snapshot (``grading.tampering``): bytecode that another process of the
same Python writes during a batch is not a change to the package, a planted file still is."""

import os
import shutil
import subprocess
import sys

import pytest

from course_helpers.grading import tampering

# modules a grading run never imports: another command may import them during a batch
ELSEWHERE = "import course_helpers.authoring.build, course_helpers.testing.profiling"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A copy of the package without bytecode, for a Python that writes bytecode."""
    copy = tmp_path / "course_helpers"
    shutil.copytree(tampering.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return copy


def _import_elsewhere(package, *options: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = f"{ELSEWHERE}\nimport course_helpers\nprint(course_helpers.__file__)"
    done = subprocess.run(
        [sys.executable, *options, "-c", code],
        env=env,
        cwd=package.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.parametrize("options", [(), ("-O",), ("-OO",)], ids=["plain", "-O", "-OO"])
def test_bytecode_another_process_writes_during_the_batch_is_no_change(package, options):
    tampering.compile_package(package)
    snapshot = tampering.package_snapshot(package)
    imported = _import_elsewhere(package, *options)
    assert imported == str(package / "__init__.py")  # the copy, not the checkout
    assert tampering.restore_package(snapshot, package) == []


def test_a_linked_module_is_not_compiled_into_the_package(package, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("KEY = 'kept outside the package'\n")
    (package / "linked.py").symlink_to(outside)
    tampering.compile_package(package)
    assert not list(package.rglob("linked.*.pyc"))
    snapshot = tampering.package_snapshot(package)
    assert tampering.restore_package(snapshot, package) == ["added course_helpers/linked.py"]


def test_without_it_that_bytecode_was_counted_as_added(package):
    snapshot = tampering.package_snapshot(package)
    _import_elsewhere(package)
    added = tampering.restore_package(snapshot, package)
    assert added and all(line.startswith("added ") and ".pyc" in line for line in added)


def test_planted_bytecode_is_still_named_and_put_back(package):
    tampering.compile_package(package)
    snapshot = tampering.package_snapshot(package)
    compiled = package / "__pycache__" / f"records.{sys.implementation.cache_tag}.pyc"
    original = compiled.read_bytes()
    compiled.write_bytes(b"a module that is not records.py")
    added = package / "__pycache__" / f"planted.{sys.implementation.cache_tag}.pyc"
    added.write_bytes(b"a module of no source")
    changed = tampering.restore_package(snapshot, package)
    assert sorted(changed) == [
        f"added course_helpers/__pycache__/{added.name}",
        f"changed course_helpers/__pycache__/{compiled.name}",
    ]
    assert compiled.read_bytes() == original and not added.exists()


def test_a_python_that_writes_no_bytecode_gets_none_written(package, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    tampering.compile_package(package)
    assert not list(package.rglob("*.pyc"))
