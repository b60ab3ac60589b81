"""Lesson 04's broadcast picture: which entries are stored, which are stretched copies."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from course_helpers import CourseError, show_broadcast  # noqa: E402
from course_helpers.graphs.broadcast import STORED, STRETCHED, broadcast_figure  # noqa: E402


@pytest.fixture
def figure():
    fig = broadcast_figure(torch.tensor([[0], [10], [20]]), torch.tensor([[1, 2, 3, 4]]))
    yield fig
    plt.close(fig)


def _grid(ax, rows, cols):
    """{(i, j): (face colour, text)} of one panel, read back from what was drawn."""
    colours = {
        (int(p.get_y()), int(p.get_x())): matplotlib.colors.to_hex(p.get_facecolor())
        for p in ax.patches
    }
    texts = {(int(t.get_position()[1]), int(t.get_position()[0])): t.get_text() for t in ax.texts}
    assert set(colours) == set(texts) == {(i, j) for i in range(rows) for j in range(cols)}
    return {key: (colours[key], texts[key]) for key in colours}


def test_the_three_panels_are_column_row_and_their_sum(figure):
    axes = figure.axes
    assert len(axes) == 5
    assert [axes[k].get_title() for k in (0, 2, 4)] == ["column (3, 1)", "row (1, 4)", "sum (3, 4)"]
    assert [axes[k].texts[0].get_text() for k in (1, 3)] == ["+", "="]


def test_only_stored_entries_are_blue_and_every_entry_shows_its_value(figure):
    column, row = _grid(figure.axes[0], 3, 4), _grid(figure.axes[2], 3, 4)
    total = _grid(figure.axes[4], 3, 4)
    for (i, j), (colour, text) in column.items():
        assert colour == (STORED if j == 0 else STRETCHED)
        assert text == str(10 * i)
    for (i, j), (colour, text) in row.items():
        assert colour == (STORED if i == 0 else STRETCHED)
        assert text == str(j + 1)
    for (i, j), (colour, text) in total.items():
        assert colour == STORED
        assert text == str(10 * i + j + 1)


def test_show_broadcast_draws_the_figure_and_shows_it(monkeypatch):
    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(plt.gcf()))
    before = set(plt.get_fignums())
    assert show_broadcast(torch.tensor([[1.0], [2.0]]), torch.tensor([[5.0, 6.0]])) is None
    assert len(shown) == 1 and shown[0].axes[4].get_title() == "sum (2, 2)"
    for number in set(plt.get_fignums()) - before:
        plt.close(number)


@pytest.mark.parametrize(
    ("column", "row", "says"),
    [
        ([[1], [2]], torch.tensor([[1, 2]]), "column must be a tensor of shape (n, 1), got list"),
        (torch.tensor([1, 2]), torch.tensor([[1, 2]]), "column must have shape (n, 1), got (2,)"),
        (torch.tensor([[1], [2]]), torch.tensor([1, 2]), "row must have shape (1, m), got (2,)"),
        (torch.zeros(13, 1), torch.zeros(1, 2), "this sum would be 13 x 2"),
    ],
)
def test_bad_input_is_named_with_its_fix(column, row, says):
    before = set(plt.get_fignums())
    with pytest.raises(CourseError) as caught:
        broadcast_figure(column, row)
    assert says in str(caught.value)
    assert any(fix in str(caught.value) for fix in ("torch.tensor", "unsqueeze", "smaller"))
    assert set(plt.get_fignums()) == before  # nothing half-drawn is left behind
