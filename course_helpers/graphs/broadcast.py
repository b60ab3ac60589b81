"""Lesson 04's picture of a broadcast: a column plus a row gives a grid.

Three grids side by side, ``column + row = sum``. In the column and the row, the entries
broadcasting only reads again (the stretched copies, never stored) are drawn pale; the
stored ones are blue. matplotlib is imported only when a picture is drawn.
"""

from __future__ import annotations

from course_helpers.errors import CourseError

STORED = "#9ecae1"  # an entry that is in memory
STRETCHED = "#f0f0f0"  # an entry broadcasting reads again from a stored one
MAX_SIDE = 12  # more rows or columns than this no longer fit as readable numbers


def _checked(column, row):
    import torch

    for name, t, shape in (("column", column, "(n, 1)"), ("row", row, "(1, m)")):
        if not isinstance(t, torch.Tensor):
            raise CourseError(
                f"show_broadcast: {name} must be a tensor of shape {shape}, "
                f"got {type(t).__name__}. Make one with torch.tensor([...])."
            )
    if column.ndim != 2 or column.shape[1] != 1:
        raise CourseError(
            f"show_broadcast: column must have shape (n, 1), got {tuple(column.shape)}. "
            "Give a 1-D tensor a column dimension with t.unsqueeze(1)."
        )
    if row.ndim != 2 or row.shape[0] != 1:
        raise CourseError(
            f"show_broadcast: row must have shape (1, m), got {tuple(row.shape)}. "
            "Give a 1-D tensor a row dimension with t.unsqueeze(0)."
        )
    rows, cols = column.shape[0], row.shape[1]
    if not (1 <= rows <= MAX_SIDE and 1 <= cols <= MAX_SIDE):
        raise CourseError(
            f"show_broadcast draws grids of 1 to {MAX_SIDE} rows and columns; this sum would be "
            f"{rows} x {cols}. Draw a smaller example."
        )
    return column.detach().cpu(), row.detach().cpu()


def broadcast_figure(column, row):
    """The matplotlib figure of ``column + row = sum`` (shapes (n, 1) and (1, m)).

    Stretched entries of the column and the row are pale (``STRETCHED``), stored ones blue
    (``STORED``). Bad input raises ``CourseError`` naming the fix.
    """
    column, row = _checked(column, row)
    import matplotlib.pyplot as plt

    total = column + row
    rows, cols = total.shape
    panels = [
        (column.expand(rows, cols), f"column {tuple(column.shape)}", lambda i, j: j == 0),
        (row.expand(rows, cols), f"row {tuple(row.shape)}", lambda i, j: i == 0),
        (total, f"sum {tuple(total.shape)}", lambda i, j: True),
    ]
    fig, axes = plt.subplots(1, 5, figsize=(10, 3), width_ratios=[4, 1, 4, 1, 4])
    for ax, symbol in ((axes[1], "+"), (axes[3], "=")):
        ax.text(0.5, 0.5, symbol, fontsize=24, ha="center", va="center")
        ax.axis("off")
    for ax, (values, title, stored) in zip(axes[::2], panels, strict=True):
        for i in range(rows):
            for j in range(cols):
                real = stored(i, j)
                colour = STORED if real else STRETCHED
                ax.add_patch(
                    plt.Rectangle((j, i), 1, 1, facecolor=colour, edgecolor="white", linewidth=2)
                )
                ax.text(
                    j + 0.5,
                    i + 0.5,
                    str(values[i, j].item()),
                    ha="center",
                    va="center",
                    color="black" if real else "#a0a0a0",
                    fontsize=12,
                )
        ax.set_xlim(0, cols)
        ax.set_ylim(rows, 0)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(title)
    return fig


def show_broadcast(column, row) -> None:
    """Draw ``column + row = sum`` in the notebook: a column (n, 1) plus a row (1, m).

    The entries broadcasting stretches (reads again, never stores) are pale.
    """
    import matplotlib.pyplot as plt

    broadcast_figure(column, row)
    plt.show()
