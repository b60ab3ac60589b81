# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 03 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


with Walk("03") as w:
    w.setup()
    E = "03.column_grid"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = torch.arange(12).view(4, 3)"), "rows count up", "fail")
    w.hint(E)
    w.try_(
        E,
        cell(E, "answer", "answer = torch.arange(12).view(4, 3).t()"),
        "transposed wrong grid: 3x4",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", "answer = torch.arange(12).reshape(3, 4).reshape(4, 3)"),
        "reshape is not transpose",
        "fail",
    )
    w.try_(E, cell(E, "answer", "answer = torch.arange(12.).view(3, 4).t()"), "float", "fail")
    w.try_(
        E,
        cell(E, "answer", "answer = torch.arange(12, dtype=torch.int32).view(3, 4).t()"),
        "int32 (task: integer)",
        "pass",
    )
    w.try_(
        E,
        cell(E, "answer", "answer = torch.arange(12).view(3, 4).permute(1, 0)"),
        "right, permute",
        "pass",
    )

    E = "03.pair_columns"
    w.cell_of(E)
    w.run("xs = torch.tensor([1, 2, 3])\nys = torch.tensor([10, 20, 30])")
    w.try_(E, cell(E, "answer", "answer = torch.stack([xs, ys])"), "2x3", "fail")
    w.hint(E)
    w.try_(
        E,
        cell(E, "answer", "answer = torch.cat([xs, ys]).view(3, 2)"),
        "cat then view: scrambled",
        "fail",
    )
    w.try_(E, cell(E, "answer", "answer = torch.cat([xs, ys])"), "cat: (6,)", "fail")
    w.try_(E, cell(E, "answer", "answer = [[1, 10], [2, 20], [3, 30]]"), "a list", "fail")
    w.try_(
        E,
        cell(E, "answer", "answer = torch.cat([xs[:, None], ys[:, None]], dim=1)"),
        "right: unsqueeze + cat",
        "pass",
    )

    E = "03.permute_shape"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = (4, 3, 5, 2)"), "inverse permutation", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = [5, 3, 2, 4]"), "a list", "?")
    w.try_(E, cell(E, "answer", "answer = torch.Size([5, 3, 2, 4])"), "torch.Size", "pass")
    w.try_(E, cell(E, "answer", "answer = (5, 3, 2, 4)"), "right", "pass")

    E = "03.permute_stride"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = (60, 20, 5, 1)"), "strides of x, not permuted", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = (5, 20, 1, 60)"), "inverse permutation", "fail")
    w.try_(
        E,
        cell(E, "answer", "answer = (24, 8, 2, 1)"),
        "strides from wrong shape (shape of the permute)",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", "answer = tuple(torch.tensor([60, 20, 5, 1])[[3, 1, 0, 2]])"),
        "tuple of 0-d tensors",
        "fail",
    )
    w.try_(E, cell(E, "answer", "answer = (1, 20, 60, 5)"), "right", "pass")

    E = "03.transpose_error"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "most torch errors", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value", "fail")
    w.try_(E, cell(E, "answer", "answer = None"), "no error", "fail")
    w.try_(E, cell(E, "answer", "answer = IndexError"), "right", "pass")

    E = "03.as_batch"
    w.cell_of(E)
    w.try_(
        E,
        fn(E, "as_batch", "def as_batch(x):\n    return x.unsqueeze(0)"),
        "always unsqueeze",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "as_batch",
            "def as_batch(x):\n    if len(x) == 3:\n        return x.unsqueeze(0)\n    return x",
        ),
        "len instead of ndim",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "as_batch",
            "def as_batch(x):\n    if x.dim() == 3:\n        return x.unsqueeze(-1)\n    return x",
        ),
        "batch dim at the end",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "as_batch",
            "def as_batch(x):\n    if x.dim() == 3:\n        return torch.stack([x])\n    return x",
        ),
        "right: stack of one",
        "pass",
    )
    w.try_(
        E,
        fn(E, "as_batch", "def as_batch(x):\n    return x[None] if x.ndim == 3 else x"),
        "right: None index",
        "pass",
    )

    E = "03.flatten_images"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "flatten_images",
            "def flatten_images(batch):\n    return batch.view(batch.shape[0], -1)",
        ),
        "view: fails on permuted",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "flatten_images",
            "def flatten_images(batch):\n    return batch.reshape(batch.shape[0], -1)",
        ),
        "reshape -1: fails on empty",
        "fail",
    )
    w.try_(
        E,
        fn(E, "flatten_images", "def flatten_images(batch):\n    return batch.flatten()"),
        "flatten everything",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "flatten_images",
            "def flatten_images(batch):\n    n, c, h, w = batch.shape\n    return batch.permute(0, 2, 3, 1).reshape(n, c * h * w)",
        ),
        "channels last (wrong order)",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "flatten_images",
            "def flatten_images(batch):\n    n, c, h, w = batch.shape\n    return batch.reshape(n, c * h * w)",
        ),
        "right: sizes written out",
        "pass",
    )

    E = "03.columns_in_order"
    w.cell_of(E)
    w.try_(
        E,
        fn(E, "columns_in_order", "def columns_in_order(m):\n    return m.reshape(-1)"),
        "row order",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(E, "columns_in_order", "def columns_in_order(m):\n    return m.t().view(-1)"),
        "the buggy body",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "columns_in_order",
            "def columns_in_order(m):\n    return m.contiguous().t().view(-1)",
        ),
        "contiguous in the wrong place",
        "fail",
    )
    w.try_(
        E,
        fn(E, "columns_in_order", "def columns_in_order(m):\n    return m.T.flatten()"),
        "right: flatten",
        "pass",
    )

    E = "03.fancy_index_shares"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = True"), "thinks it is a view", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "False"'), "string", "fail")
    w.try_(
        E,
        cell(
            E,
            "answer",
            "x = torch.arange(6.0)\ny = x[[0, 1]]\nanswer = y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()",
        ),
        "right, computed",
        "pass",
    )

    E = "03.zeros_like_view"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = None"), "zeros_like is contiguous", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value error", "fail")
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "right", "pass")
