# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Global grad mode switched off by the learner's own cell (no `with`), in three lessons."""

from driver import Walk

with Walk("11") as w:
    w.setup()
    E = "11.leaf_after_steps"
    w.cell_of(E)
    w.try_(
        E,
        'w = torch.zeros(3, 1, requires_grad=True)\nfor step in range(3):\n    torch.set_grad_enabled(True)\n    loss = ((x_small @ w - y_small) ** 2).mean()\n    loss.backward()\n    torch.set_grad_enabled(False)\n    w -= 0.1 * w.grad\n    if step < 2:\n        w.grad.zero_()\nanswer = w\ncheck("11.leaf_after_steps", answer)',
        "grad mode switched by hand, left off (first attempt)",
        "fail",
    )
    w.hint(E)
    w.try_(E, "torch.is_grad_enabled()", "what is grad mode now?", "")
with Walk("12") as w:
    w.setup()
    E = "12.evaluate_no_graph"
    w.cell_of(E)
    w.try_(
        E,
        '@repair\ndef evaluate(model, x, y):\n    torch.set_grad_enabled(False)\n    return ((model(x) - y) ** 2).mean()\n\n\ncheck("12.evaluate_no_graph", evaluate)',
        "global switch inside the function",
        "fail",
    )
with Walk("06") as w:
    w.setup()
    E = "06.two_losses_two_calls"
    w.cell_of(E)
    w.try_(
        E,
        'w = torch.tensor([1.0, 2.0], requires_grad=True)\nx = torch.tensor([3.0, -1.0])\nloss_a = (w**2).sum()\nloss_b = (w * x).sum()\nloss_a.backward()\nloss_b.backward()\ntorch.set_grad_enabled(False)\nanswer = w\ncheck("06.two_losses_two_calls", answer)',
        "right answer, grad mode then left off",
        "fail?",
    )
