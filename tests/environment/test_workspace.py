"""The learner's work folder: filled without overwriting, named so that nothing looks alike,
refreshed after an update without losing what the learner changed or answered, and safe
against links, FIFOs and broken files in it (the real clone + browser + `make update` path is
tests/course/test_browser_update.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from course_helpers.environment import workspace

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def _nb(*cells) -> dict:
    """A notebook; a cell is a code source, or ("markdown", source)."""
    made = []
    for cell in cells:
        kind, source = cell if isinstance(cell, tuple) else ("code", cell)
        made.append({"cell_type": kind, "metadata": {}, "source": source})
        if kind == "code":
            made[-1]["outputs"] = []
    return {"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _write(path, nb) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))


LESSON = _nb(
    ("markdown", "# 01 · A\n\nThe [exercises](../exercises/01_a.ipynb); next: [02](02_b.ipynb)."),
    "lesson = 1",
    ("markdown", "1. How many? (a) 1, (b) 2"),
    'check("01.quiz_count", ...)  # replace ... with your answer',
    ("markdown", "2. Which? (a) x, (b) y"),
    'check("01.quiz_which", ...)  # replace ... with your answer',
)


def _course(root):
    _write(root / "notebooks" / "01_a.ipynb", LESSON)
    _write(root / "notebooks" / "02_b.ipynb", _nb("b = 2"))
    back = ("markdown", "[lesson](../notebooks/01_a.ipynb)")
    _write(root / "exercises" / "01_a.ipynb", _nb(back, 'answer = ...\ncheck("01.x", answer)'))
    _write(root / "solutions" / "01_a.ipynb", _nb("answer = 42"))
    (root / "README.md").write_text("[lesson](notebooks/01_a.ipynb) [license](LICENSE)\n")
    (root / "LICENSE").write_text("MIT\n")


def _read(path) -> dict:
    return json.loads(path.read_text())


def _sources(path) -> list[str]:
    return ["".join(c["source"]) for c in _read(path)["cells"]]


def _edit(path, index: int, source: str) -> None:
    nb = _read(path)
    nb["cells"][index]["source"] = source
    nb["cells"][index].setdefault("outputs", []).append(
        {"output_type": "stream", "name": "stdout", "text": f"ran {index}"}
    )
    _write(path, nb)


WORK_LESSON = "work/notebooks/01_lesson_a.ipynb"
WORK_EXERCISES = "work/exercises/01_exercises_a.ipynb"


def test_fill_names_copies_apart_rewrites_links_and_never_overwrites(tmp_path):
    _course(tmp_path)
    made = workspace.fill(tmp_path)
    assert made == [
        WORK_LESSON,
        "work/notebooks/02_lesson_b.ipynb",
        WORK_EXERCISES,
        "work/solutions/01_solutions_a.ipynb",
    ]
    # the links lead to the copies: lesson -> exercises and its sibling, exercises -> lesson,
    # work/README.md's course map (a copy now, not a link to the README)
    assert "](../exercises/01_exercises_a.ipynb)" in _sources(tmp_path / WORK_LESSON)[0]
    assert "](02_lesson_b.ipynb)" in _sources(tmp_path / WORK_LESSON)[0]
    assert "](../notebooks/01_lesson_a.ipynb)" in _sources(tmp_path / WORK_EXERCISES)[0]
    readme = tmp_path / "work" / "README.md"
    assert not readme.is_symlink()
    assert "[lesson](notebooks/01_lesson_a.ipynb) [license](LICENSE)" in readme.read_text()
    assert (tmp_path / "work" / "LICENSE").resolve() == (tmp_path / "LICENSE").resolve()
    # never overwritten
    _edit(tmp_path / WORK_EXERCISES, 1, "answer = 42")
    assert workspace.fill(tmp_path) == []
    assert _sources(tmp_path / WORK_EXERCISES)[1] == "answer = 42"
    # what the kernel of this Python will report, so opening the copy does not modify it
    from ipykernel.ipkernel import IPythonKernel

    lesson = _read(tmp_path / WORK_LESSON)
    assert lesson["metadata"]["language_info"] == IPythonKernel.language_info


def test_the_names_of_a_lesson_its_exercises_and_a_new_version_differ_early():
    """The file browser shows about 14 characters of a name (issue 36 item 3: the lesson and
    its .updated copy both read "05_autograd_gr..."); tabs show the name alone."""
    from course_helpers.environment.work_layout import work_name

    names = [
        work_name(folder, "05_autograd_graphs", new)
        for folder in ("notebooks", "exercises", "solutions")
        for new in (False, True)
    ]
    assert len({name[:12] for name in names}) == len(names), names
    assert names[0] == "05_lesson_autograd_graphs.ipynb"


def test_refresh_replaces_what_was_only_run_and_keeps_what_the_learner_changed(tmp_path):
    _course(tmp_path)
    workspace.fill(tmp_path)
    work = tmp_path / "work"
    # the learner runs the lesson (outputs only) and answers the exercise and adds a cell
    lesson = _read(tmp_path / WORK_LESSON)
    lesson["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1"}]
    _write(tmp_path / WORK_LESSON, lesson)
    exercise = _read(tmp_path / WORK_EXERCISES)
    exercise["cells"].append({"cell_type": "code", "metadata": {}, "source": "scratch = 1"})
    _write(tmp_path / WORK_EXERCISES, exercise)
    # the course changes both, and adds a lesson
    _write(tmp_path / "notebooks" / "01_a.ipynb", {**LESSON, "cells": LESSON["cells"] + [
        {"cell_type": "code", "metadata": {}, "source": "new = 2", "outputs": []}]})  # fmt: skip
    _write(tmp_path / "exercises" / "01_a.ipynb", _nb("answer = ...  # new"))
    _write(tmp_path / "notebooks" / "03_c.ipynb", _nb("c = 3"))

    report = workspace.refresh(tmp_path)

    assert _sources(tmp_path / WORK_LESSON)[-1] == "new = 2"
    assert _sources(tmp_path / WORK_EXERCISES)[-1] == "scratch = 1"
    side = work / "exercises" / "01_new_exercises_a.ipynb"
    assert _sources(side) == ["answer = ...  # new"]
    assert _sources(work / "notebooks" / "03_lesson_c.ipynb") == ["c = 3"]
    assert f"updated:  {WORK_LESSON}" in report
    assert any(line.startswith("kept:") and str(side.name) in line for line in report)
    assert workspace.refresh(tmp_path) == []  # nothing changed since: nothing to do


def test_quiz_answers_do_not_block_the_lessons_update(tmp_path):
    """Issue 36 item 4: a learner who only answered the check-yourself questions gets the new
    version of the lesson, with the answers (and their outputs) in it; before, the copy was
    kept as changed and the new version written beside it."""
    _course(tmp_path)
    workspace.fill(tmp_path)
    copy = tmp_path / WORK_LESSON
    _edit(copy, 3, 'check("01.quiz_count", "b")')
    answered = _read(copy)["cells"][3]
    new = json.loads(json.dumps(LESSON))
    new["cells"][0]["source"] += "\n\nA sentence the course added."
    new["cells"].insert(2, {"cell_type": "code", "metadata": {}, "source": "extra = 0",
                            "outputs": []})  # fmt: skip
    _write(tmp_path / "notebooks" / "01_a.ipynb", new)

    report = workspace.refresh(tmp_path)

    assert report == [f"updated:  {WORK_LESSON} (your answers kept: 01.quiz_count)"]
    cells = _read(copy)["cells"]
    assert "A sentence the course added." in "".join(cells[0]["source"])
    assert cells[2]["source"] == "extra = 0"
    assert cells[4]["source"] == answered["source"]  # the answer, at its question's new place
    assert cells[4]["outputs"] == answered["outputs"]
    assert "".join(cells[6]["source"]).startswith('check("01.quiz_which", ...)')  # unanswered
    assert not (tmp_path / "work" / "notebooks" / "01_new_lesson_a.ipynb").exists()
    # and at the next update, the answer travels again
    newer = json.loads(json.dumps(new))
    newer["cells"][1]["source"] = "lesson = 11"
    _write(tmp_path / "notebooks" / "01_a.ipynb", newer)
    assert workspace.refresh(tmp_path) == [
        f"updated:  {WORK_LESSON} (your answers kept: 01.quiz_count)"
    ]
    assert _read(copy)["cells"][4]["source"] == answered["source"]
    assert _read(copy)["cells"][1]["source"] == "lesson = 11"


@pytest.mark.parametrize("change", ["question", "answer cell", "another cell"])
def test_an_answer_that_may_not_fit_the_new_version_keeps_the_copy(tmp_path, change):
    _course(tmp_path)
    workspace.fill(tmp_path)
    copy = tmp_path / WORK_LESSON
    _edit(copy, 3, 'check("01.quiz_count", "b")')
    new = json.loads(json.dumps(LESSON))
    if change == "question":  # the options changed: "b" may now be another answer
        new["cells"][2]["source"] = "1. How many? (a) 2, (b) 1"
    elif change == "answer cell":
        new["cells"][3]["source"] = 'check("01.quiz_count", ...)  # replace ... with "a" or "b"'
    else:  # the learner also changed a cell that is not an answer
        new["cells"][0]["source"] += " More."
        _edit(copy, 1, "lesson = 2  # mine")
    _write(tmp_path / "notebooks" / "01_a.ipynb", new)
    report = workspace.refresh(tmp_path)
    assert report[0].startswith(f"kept:     {WORK_LESSON}"), report
    assert _read(copy)["cells"][3]["source"] == 'check("01.quiz_count", "b")'
    assert (tmp_path / "work" / "notebooks" / "01_new_lesson_a.ipynb").exists()


def test_an_answer_in_a_cell_whose_id_another_cell_checks_too_is_never_lost(tmp_path):
    """Lesson 00 checks 00.first_tensor twice (a worked example, then the learner's cell): an
    answer there cannot be placed by its id, so the copy is kept, not replaced."""
    lesson = json.loads(json.dumps(LESSON))
    lesson["cells"][1]["source"] = 'check("01.quiz_count", "a", demo=True)'
    _course(tmp_path)
    _write(tmp_path / "notebooks" / "01_a.ipynb", lesson)
    workspace.fill(tmp_path)
    _edit(tmp_path / WORK_LESSON, 3, 'check("01.quiz_count", "b")')
    lesson["cells"][0]["source"] += " More."
    _write(tmp_path / "notebooks" / "01_a.ipynb", lesson)
    report = workspace.refresh(tmp_path)
    assert report[0].startswith(f"kept:     {WORK_LESSON}"), report
    assert _sources(tmp_path / WORK_LESSON)[3] == 'check("01.quiz_count", "b")'


def _commit(root, message: str) -> None:
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=root, check=True)


def _old_copy(root, folder: str, stem: str, name: str | None = None) -> None:
    """A copy as the previous version of `make lab` made it: the tracked name, the tracked
    links, ``copied_from`` only."""
    nb = _read(root / folder / f"{stem}.ipynb")
    nb["metadata"]["course"] = {"copied_from": workspace.text_hash(nb)}
    _write(root / "work" / folder / (name or f"{stem}.ipynb"), nb)


def test_a_work_folder_of_the_previous_layout_is_renamed_without_losing_an_answer(tmp_path):
    """The previous `make lab` made work/notebooks/01_a.ipynb (tracked names, links to
    ../exercises/01_a.ipynb), linked work/solutions and work/README.md, and its `make update`
    wrote NAME.updated.ipynb beside a copy with answers. Now: every copy renamed with its
    links, the answers kept, and, once the course moves on, the answered lesson updated."""
    _course(tmp_path)
    subprocess.run([*GIT, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("/work/\n")
    _commit(tmp_path, "course")
    _old_copy(tmp_path, "notebooks", "01_a")
    _old_copy(tmp_path, "exercises", "01_a")
    old = tmp_path / "work" / "notebooks" / "01_a.ipynb"
    _edit(old, 3, 'check("01.quiz_count", "a")')  # answered with the previous version
    (tmp_path / "work" / "solutions").symlink_to("../solutions", target_is_directory=True)
    (tmp_path / "work" / "README.md").symlink_to("../README.md")
    # the course moved on (git pull), and the previous `make update` wrote the new version
    new = json.loads(json.dumps(LESSON))
    new["cells"][0]["source"] += " More."
    _write(tmp_path / "notebooks" / "01_a.ipynb", new)
    _commit(tmp_path, "lesson 01: more")
    _old_copy(tmp_path, "notebooks", "01_a", "01_a.updated.ipynb")

    report = workspace.fill(tmp_path)

    assert f"renamed:  work/notebooks/01_a.ipynb -> {WORK_LESSON}" in report
    assert f"renamed:  work/exercises/01_a.ipynb -> {WORK_EXERCISES}" in report
    assert "work/solutions/01_solutions_a.ipynb" in report  # copies, no longer a link
    assert not old.exists() and not (tmp_path / "work" / "solutions").is_symlink()
    assert not (tmp_path / "work" / "README.md").is_symlink()
    lesson = _sources(tmp_path / WORK_LESSON)
    assert lesson[3] == 'check("01.quiz_count", "a")'
    assert "](../exercises/01_exercises_a.ipynb)" in lesson[0]
    assert (tmp_path / "work" / "notebooks" / "01_new_lesson_a.ipynb").exists()

    # the next update: the answered lesson takes the new version, the one beside it goes
    report = workspace.refresh(tmp_path)
    assert report == [f"updated:  {WORK_LESSON} (your answers kept: 01.quiz_count)"]
    assert _sources(tmp_path / WORK_LESSON)[0].endswith(" More.")
    assert _sources(tmp_path / WORK_LESSON)[3] == 'check("01.quiz_count", "a")'
    assert not (tmp_path / "work" / "notebooks" / "01_new_lesson_a.ipynb").exists()


def _cli(root, *args, timeout=60) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "course_helpers", "workspace", *args, "--root", str(root)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def test_update_refuses_with_a_fix_when_tracked_files_were_changed(tmp_path):
    _course(tmp_path)
    subprocess.run([*GIT, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("/work/\n")
    _commit(tmp_path, "course")
    _write(tmp_path / "notebooks" / "01_a.ipynb", _nb("edited in place"))
    done = _cli(tmp_path, "--update")
    assert done.returncode == 1
    assert "notebooks/01_a.ipynb" in done.stderr and "git checkout -- ." in done.stderr
    assert "Traceback" not in done.stderr


def test_no_checkout_gets_a_message_not_a_traceback(tmp_path):
    _course(tmp_path)
    done = _cli(tmp_path, "--update")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "is not a git checkout" in done.stderr


# ------------------------------------------------ issue 37 item 12: links, FIFOs, broken files


def _course_changed(root) -> None:
    _write(root / "notebooks" / "01_a.ipynb", _nb("lesson = 2"))
    _write(root / "exercises" / "01_a.ipynb", _nb("answer = ...  # new"))


def test_a_link_in_work_is_never_written_through(tmp_path):
    """A copy replaced by a link to a file outside work/ (or a folder of copies by a link to
    another folder): the refresh wrote the course's new version there, outside work/."""
    _course(tmp_path)
    workspace.fill(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.ipynb"
    victim.write_text((tmp_path / WORK_LESSON).read_text())  # looks like an untouched copy
    (tmp_path / WORK_LESSON).unlink()
    (tmp_path / WORK_LESSON).symlink_to(victim)
    exercises = tmp_path / "work" / "exercises"
    (outside / "01_exercises_a.ipynb").write_text((tmp_path / WORK_EXERCISES).read_text())
    os.rename(exercises, tmp_path / "exercises-moved")
    exercises.symlink_to(outside, target_is_directory=True)
    before = {p.name: p.read_text() for p in outside.iterdir()}
    _course_changed(tmp_path)

    done = _cli(tmp_path, "--refresh")

    assert {p.name: p.read_text() for p in outside.iterdir()} == before
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{tmp_path / WORK_LESSON} is a symbolic link" in done.stderr
    assert f"{exercises} is a symbolic link" in done.stderr and "Fix: move" in done.stderr


def test_a_work_folder_that_is_a_link_is_refused(tmp_path):
    _course(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "work").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    done = _cli(tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "is a symbolic link" in done.stderr and list((tmp_path / "elsewhere").iterdir()) == []


def test_a_fifo_in_work_does_not_hang_the_update(tmp_path):
    """Reading a FIFO where a copy should be waited forever for a writer."""
    _course(tmp_path)
    workspace.fill(tmp_path)
    (tmp_path / WORK_EXERCISES).unlink()
    os.mkfifo(tmp_path / WORK_EXERCISES)
    _course_changed(tmp_path)
    done = _cli(tmp_path, "--refresh", timeout=30)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{tmp_path / WORK_EXERCISES} is a FIFO (named pipe)" in done.stderr
    assert "Fix: move it away" in done.stderr
    assert f"updated:  {WORK_LESSON}" in done.stdout  # the other copies are still refreshed


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "Expecting property name"),
        ("[]", "it holds a JSON list, not a notebook object"),
        ('{"cells": 5}', "its 'cells' is not a list"),
        ('{"cells": [5]}', "cell 0 is not a cell"),
        ('{"cells": [{"cell_type": "code", "source": 5}]}', "cell 0's source is not text"),
        ('{"cells": [], "metadata": {"course": "x"}}', "'metadata.course' is not what"),
        ('{"cells": [], "metadata": []}', "its 'metadata' is not an object"),
    ],
)
def test_a_malformed_notebook_gets_a_message_not_a_traceback(tmp_path, content, problem):
    _course(tmp_path)
    workspace.fill(tmp_path)
    (tmp_path / WORK_LESSON).write_text(content)
    (tmp_path / "notebooks" / "02_b.ipynb").write_text(content)  # the course's own file too
    _course_changed(tmp_path)
    done = _cli(tmp_path, "--refresh")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{tmp_path / WORK_LESSON} is not a readable notebook" in done.stderr
    assert problem in done.stderr and "Fix: move it away" in done.stderr
    assert "02_b.ipynb is not a readable notebook" in done.stderr
    assert "git checkout -- notebooks/02_b.ipynb" in done.stderr
    assert f"updated:  {WORK_EXERCISES}" in done.stdout
