# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 04 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body):
    return f'{body}\ncheck("{ex}", {name})'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


with Walk("04") as w:
    w.setup()
    E = "04.broadcast_by_hand"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = (8, 1, 6, 5)"), "forgot to stretch one 1", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = (8, 7, 6, 1)"), "last dim not stretched", "fail")
    w.try_(E, cell(E, "answer", '"error"\nanswer = "error"'), "thinks it fails", "fail")
    w.try_(
        E,
        cell(E, "answer", "answer = (torch.zeros(8, 1, 6, 1) + torch.zeros(7, 1, 5)).shape"),
        "ran it: torch.Size",
        "pass",
    )
    w.try_(E, cell(E, "answer", "answer = (8, 7, 6, 5)"), "right", "pass")

    E = "04.times_table"
    w.cell_of(E)
    w.try_(
        E,
        cell(E, "answer", "numbers = torch.arange(1, 6)\nanswer = numbers * numbers"),
        "1-D squares",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        cell(
            E, "answer", "numbers = torch.arange(5)\nanswer = numbers[:, None] * numbers[None, :]"
        ),
        "0-based",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", "numbers = torch.arange(1, 6)\nanswer = torch.outer(numbers, numbers)"),
        "outer (no broadcasting)",
        "fail?",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "numbers = torch.arange(1, 6)\nanswer = numbers.view(-1, 1) @ numbers.view(1, -1)",
        ),
        "matmul outer",
        "fail?",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "numbers = torch.arange(1, 6)\nanswer = torch.tensor([[i * j for j in range(1, 6)] for i in range(1, 6)])",
        ),
        "loops (forbidden)",
        "fail",
    )
    w.try_(
        E,
        cell(E, "answer", "numbers = torch.arange(1.0, 6.0)\nanswer = numbers[:, None] * numbers"),
        "float",
        "fail",
    )
    w.try_(
        E,
        cell(
            E,
            "answer",
            "numbers = torch.arange(1, 6)\nanswer = numbers.unsqueeze(1) * numbers.unsqueeze(0)",
        ),
        "right",
        "pass",
    )

    E = "04.center_rows"
    w.cell_of(E)
    w.try_(
        E,
        fn(E, "center_rows", "def center_rows(x):\n    return x - x.mean(dim=1)"),
        "no keepdim",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(E, "center_rows", "def center_rows(x):\n    return x - x.mean()"),
        "global mean",
        "fail",
    )
    w.try_(
        E,
        fn(E, "center_rows", "def center_rows(x):\n    return x - x.mean(dim=0, keepdim=True)"),
        "column means",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "center_rows",
            "def center_rows(x):\n    x -= x.mean(dim=1, keepdim=True)\n    return x",
        ),
        "in place on input",
        "fail",
    )
    w.try_(
        E,
        fn(E, "center_rows", "def center_rows(x):\n    return x - x.mean(dim=1).unsqueeze(1)"),
        "right: unsqueeze",
        "pass",
    )

    E = "04.fix_mse"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E, "mse", "def mse(prediction, target):\n    return ((prediction - target) ** 2).mean()"
        ),
        "unchanged",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "mse",
            "def mse(prediction, target):\n    return ((prediction.squeeze(0) - target) ** 2).mean()",
        ),
        "squeeze wrong dim",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "mse",
            "def mse(prediction, target):\n    return ((prediction.squeeze(1) - target) ** 2).sum()",
        ),
        "sum instead of mean",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "mse",
            "def mse(prediction, target):\n    return ((prediction.squeeze(1) - target) ** 2).mean().item()",
        ),
        "python float",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "mse",
            "def mse(prediction, target):\n    return torch.nn.functional.mse_loss(prediction, target.unsqueeze(1))",
        ),
        "right: mse_loss with matched shapes",
        "pass",
    )
    w.try_(
        E,
        fn(
            E,
            "mse",
            "def mse(prediction, target):\n    return ((prediction - target.unsqueeze(1)) ** 2).mean()",
        ),
        "right: unsqueeze target",
        "pass",
    )

    E = "04.expand_write_error"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = None"), "thinks expand copies", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value", "fail")
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "right", "pass")

    E = "04.pairwise_sq_dists"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "pairwise_sq_dists",
            "def pairwise_sq_dists(a, b):\n    return ((a - b) ** 2).sum(-1)",
        ),
        "no broadcasting dims",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "pairwise_sq_dists",
            "def pairwise_sq_dists(a, b):\n    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1).sqrt()",
        ),
        "euclidean",
        "fail",
    )
    w.try_(
        E,
        fn(E, "pairwise_sq_dists", "def pairwise_sq_dists(a, b):\n    return torch.cdist(a, b)"),
        "cdist (not squared)",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "pairwise_sq_dists",
            "def pairwise_sq_dists(a, b):\n    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=1)",
        ),
        "sum over wrong dim",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "pairwise_sq_dists",
            "def pairwise_sq_dists(a, b):\n    return torch.stack([((a[i] - b) ** 2).sum(-1) for i in range(len(a))])",
        ),
        "loop over rows",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "pairwise_sq_dists",
            "def pairwise_sq_dists(a, b):\n    return (a ** 2).sum(1)[:, None] + (b ** 2).sum(1)[None, :] - 2 * a @ b.T",
        ),
        "expansion formula (right; broadcasting)",
        "pass?",
    )
    w.try_(
        E,
        fn(
            E,
            "pairwise_sq_dists",
            "def pairwise_sq_dists(a, b):\n    return ((a.unsqueeze(1) - b.unsqueeze(0)) ** 2).sum(dim=2)",
        ),
        "right",
        "pass",
    )

    E = "04.batched_matmul_shape"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "d"'), "batch dims differ -> error", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "3*6", "fail")
    w.try_(E, cell(E, "answer", "answer = (3, 6, 4, 5)"), "the shape instead of the letter", "fail")
    w.try_(E, cell(E, "answer", 'answer = "a"'), "right", "pass")

    E = "04.gram"
    w.cell_of(E)
    w.try_(
        E,
        fn(E, "gram", "def gram(x):\n    return x @ x.transpose(0, 1)"),
        "transpose(0,1) wrong for batch",
        "fail",
    )
    w.hint(E)
    w.try_(E, fn(E, "gram", "def gram(x):\n    return x.mT @ x"), "D x D", "fail")
    w.try_(
        E, fn(E, "gram", "def gram(x):\n    return torch.bmm(x, x.mT)"), "bmm fails on 2-D", "fail"
    )
    w.try_(E, fn(E, "gram", "def gram(x):\n    return x @ x.T"), ".T on a batch", "fail")
    w.try_(
        E,
        fn(E, "gram", "def gram(x):\n    return torch.matmul(x, x.transpose(-2, -1))"),
        "right",
        "pass",
    )

    E = "04.mm_batch_error"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = None"), "thinks mm broadcasts", "fail")
    w.try_(E, cell(E, "answer", '"RuntimeError"\nanswer = "RuntimeError"'), "right, name", "pass")

    E = "04.expand_write_refused"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "d"'), "fill_ writes everything", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "any write", "fail")
    w.try_(E, cell(E, "answer", 'answer = "c"'), "right", "pass")
