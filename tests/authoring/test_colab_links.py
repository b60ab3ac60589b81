"""The "Open in Colab" links and the setup cell the build writes (course_helpers/authoring/
colab.py): every address names the repository of pyproject.toml and a notebook that exists,
the one it sits in or the one its README row names; refreshing is idempotent."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course_helpers.authoring import colab
from course_helpers.errors import CourseError

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(
    p for d in ("notebooks", "exercises", "solutions") for p in (ROOT / d).glob("*.ipynb")
)
ADDRESS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
SLUG = ADDRESS.removeprefix("https://github.com/")
COLAB = re.compile(
    r"https://colab\.research\.google\.com/github/(?P<slug>[\w.-]+/[\w.-]+)/blob/main/(?P<path>[^)\s]+)"
)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[_rel(p) for p in NOTEBOOKS])
def test_each_notebook_links_to_itself_in_colab_right_after_its_title(path):
    cells = nbformat.read(path, as_version=4).cells
    link = cells[1]
    assert link.cell_type == "markdown" and colab.LINK_TAG in link.metadata.get("tags", [])
    found = [m.groupdict() for m in COLAB.finditer(link.source)]
    assert found == [{"slug": SLUG, "path": _rel(path)}], found
    assert (ROOT / found[0]["path"]).is_file()
    setup = cells[2]
    assert setup.cell_type == "code" and setup.source == colab.setup_cell_source()
    assert setup.outputs == [], "in a checkout the setup cell shows nothing"
    assert f'"{ADDRESS}/archive/refs/heads/main.zip"' in setup.source
    assert sum(colab.LINK_TAG in c.metadata.get("tags", []) for c in cells) == 1


def _map_rows() -> list[str]:
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index("## Course map")
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("|"))
    rows = []
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_readme_map_links_every_lesson_and_exercise_to_colab_and_keeps_relative_links():
    rows = _map_rows()
    assert len(rows) == len(list((ROOT / "notebooks").glob("*.ipynb")))
    opened = []
    for row in rows:
        *cells, last = [c.strip() for c in row.strip("|").split("|")]
        relative = re.findall(r"\]\(((?:notebooks|exercises)/[\w.-]+\.ipynb)\)", " ".join(cells))
        assert relative, f"a map row without a relative link for JupyterLab: {row}"
        found = [m.groupdict() for m in COLAB.finditer(last)]
        assert [f["slug"] for f in found] == [SLUG] * len(found)
        assert [f["path"] for f in found] == relative, row  # the notebooks this row names
        for f in found:
            assert (ROOT / f["path"]).is_file(), f["path"]
        opened += relative
    wanted = [_rel(p) for d in ("notebooks", "exercises") for p in (ROOT / d).glob("*.ipynb")]
    assert sorted(opened) == sorted(wanted)


def test_refreshing_is_idempotent_and_puts_the_cells_after_the_title():
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# 99 · T"), nbformat.v4.new_code_cell("x = 1")]
    )
    assert colab.refresh(nb, "notebooks/99_t.ipynb") is True
    assert [c.source[:6] for c in nb.cells] == ["# 99 ·", "[Open ", "# @tit", "x = 1"]
    assert colab.refresh(nb, "notebooks/99_t.ipynb") is False
    assert colab.refresh(nb, "exercises/99_t.ipynb") is True  # another notebook's link: replaced
    assert len(nb.cells) == 4 and "exercises/99_t.ipynb" in nb.cells[1].source
    text = (ROOT / "README.md").read_text()
    assert colab.refresh_readme(text) == text
    assert colab.refresh_readme("# A README without a map\n") == "# A README without a map\n"


def test_a_fork_changes_the_address_in_one_place(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.urls]\nRepository = "https://github.com/me/fork"\n'
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 99 · T")])
    colab.refresh(nb, "notebooks/99_t.ipynb", tmp_path)
    assert "github/me/fork/blob/main/notebooks/99_t.ipynb" in nb.cells[1].source
    assert '"https://github.com/me/fork/archive/refs/heads/main.zip"' in nb.cells[2].source
    readme = colab.refresh_readme((ROOT / "README.md").read_text(), tmp_path)
    assert SLUG not in readme.split("## Course map")[1].split("\n\n")[1]


@pytest.mark.parametrize("address", ["", "https://gitlab.com/me/fork", "github.com/me/fork"])
def test_an_address_colab_cannot_open_is_a_clear_error(tmp_path, address):
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n[project.urls]\nRepository = "{address}"\n'
    )
    with pytest.raises(CourseError, match=r"\[project.urls\] Repository .* GitHub address"):
        colab.colab_url("notebooks/00_start_here.ipynb", tmp_path)


def test_build_check_names_a_notebook_whose_setup_cell_is_missing(tmp_path, monkeypatch):
    import shutil

    from course_helpers.authoring import build

    for folder in ("notebooks", "solutions", "exercises"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.setattr(build, "ROOT", tmp_path)
    lesson = tmp_path / "notebooks" / "03_shapes_and_views.ipynb"
    nb = nbformat.read(lesson, as_version=4)
    nb.cells = [c for c in nb.cells if colab.SETUP_TAG not in c.metadata.get("tags", [])]
    nbformat.write(nb, lesson)
    problems = build.check(tmp_path)
    wanted = "notebooks/03_shapes_and_views.ipynb lacks the current Colab link or setup cell"
    assert any(p.startswith(wanted) for p in problems), problems
    assert not build.is_up_to_date(lesson)


def test_the_build_command_says_what_is_wrong_with_the_address(tmp_path, monkeypatch, capsys):
    from course_helpers.authoring import build

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    monkeypatch.setattr(colab, "ROOT", tmp_path)
    assert build.main(["--check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("build: pyproject.toml's [project.urls] Repository is ''"), err
    assert "Traceback" not in err
