# ruff: noqa: E501  (answer cells are written as one-line strings)
from driver import Walk

F = '\n\n\ncheck("12.first_nonfinite", first_nonfinite)'
with Walk("12") as w:
    w.setup()
    E = "12.keep_penalty_graph"
    w.cell_of(E)
    w.try_(
        E,
        '@repair\ndef l2_penalty(model):\n    return torch.tensor(sum(p.pow(2).sum().item() for p in model.parameters()), requires_grad=True)\n\n\ncheck("12.keep_penalty_graph", l2_penalty)',
        "followed the advice: requires_grad=True",
        "fail",
    )
    w.hint(E)
    E = "12.first_nonfinite"
    w.cell_of(E)
    w.pre(
        E,
        "def first_nonfinite32(losses):\n    t = torch.tensor(losses)\n    bad = (~torch.isfinite(t)).nonzero()\n    return bad[0].item() if len(bad) else -1\n\n\nprint(first_nonfinite32([1.0, 1e300, float('inf')]))",
    )
    w.try_(
        E,
        "def first_nonfinite(losses):\n    t = torch.tensor(losses, dtype=torch.float32)\n    bad = (~torch.isfinite(t)).nonzero()\n    return bad[0].item() if len(bad) else -1"
        + F,
        "float32 explicitly (task: float64)",
        "fail",
    )
    w.try_(
        E,
        "def first_nonfinite(losses):\n    t = torch.tensor(losses, dtype=torch.float64)\n    losses.append(0.0)\n    bad = (~torch.isfinite(t)).nonzero()\n    return bad[0].item() if len(bad) else -1"
        + F,
        "modifies losses (task: do not)",
        "fail",
    )
