"""Command line: ``python -m course_helpers {doctor,workspace,build,progress,grade,autograder}``."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "doctor": ("course_helpers.environment.doctor", "print an environment report for bug reports"),
    "workspace": (
        "course_helpers.environment.workspace",
        "fill your work folder (work/), or --update the course into it",
    ),
    "build": ("course_helpers.authoring.build", "generate exercises and execute the notebooks"),
    "progress": ("course_helpers.checking.progress", "show your exercise progress per lesson"),
    "grade": ("course_helpers.grading.command", "grade learners' exercise notebooks headlessly"),
    "autograder": ("course_helpers.grading.autograder", "build the Gradescope autograder bundle"),
}


def skip_unused_iri_checker() -> None:
    """Keep jsonschema from importing ``rfc3987_syntax`` in this process.

    nbformat validates notebooks with jsonschema, which, where ``rfc3987-syntax`` is
    installed (jupyter-events asks for it), builds about 35 Earley parsers on import for the
    ``iri`` formats: 1.4 s of CPU in every process that reads a notebook (upstream:
    python-jsonschema/jsonschema#1428). No notebook schema uses those formats. A ``None``
    in ``sys.modules`` makes that one optional import fail, and jsonschema skips those two
    formats, as it does where the package is not installed.
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


def usage() -> str:
    lines = ["usage: python -m course_helpers COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "Run 'python -m course_helpers COMMAND --help' for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    skip_unused_iri_checker()
    module = importlib.import_module(COMMANDS[name][0])
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
