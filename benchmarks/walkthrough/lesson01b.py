# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 01 follow-ups: fresh-kernel probes (first attempt only) and evidence from earlier attempts."""

from driver import Walk

with Walk("01") as w:
    w.setup()
    E = "01.arange_grid"
    w.cell_of(E)
    w.try_(
        E,
        'answer = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])\ncheck("01.arange_grid", answer)',
        "typed, first attempt in a fresh kernel",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        'answer = torch.arange(12).reshape(3, 4)\ncheck("01.arange_grid", answer)',
        "right",
        "pass",
    )
    E = "01.linspace_points"
    w.cell_of(E)
    w.try_(
        E,
        'points = torch.linspace(-1, 1, 4)\ncheck("01.linspace_points", points)',
        "4 points by linspace",
        "fail",
    )
    w.try_(
        E,
        'points = torch.arange(-1, 1.01, 2 / 3)\ncheck("01.linspace_points", points)',
        "4 points by arange: does it still say linspace?",
        "fail",
    )
    w.try_(
        E,
        'points = torch.tensor([-1.0, -0.5, 0.0, 0.5, 1.0])\ncheck("01.linspace_points", points)',
        "typed (no rule against)",
        "pass",
    )
    E = "01.celsius_to_fahrenheit"
    w.cell_of(E)
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    return torch.stack([c * 9 / 5 + 32 for c in celsius.flatten()]).reshape(celsius.shape)\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "comprehension, shape-safe",
        "fail",
    )
    w.hint(E)
    w.pre(E, "def to_f(c):\n    return c * 9 / 5 + 32")
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    return to_f(celsius)\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "right, helper in the cell above",
        "pass",
    )
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    out = torch.empty_like(celsius)\n    flat = celsius.reshape(-1)\n    for i in range(flat.numel()):\n        out.view(-1)[i] = flat[i] * 1.8 + 32\n    return out\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "explicit for loop",
        "fail",
    )
    w.try_(
        E,
        'celsius_to_fahrenheit = lambda celsius: celsius * 9 / 5 + 32\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "right, a lambda",
        "pass",
    )
    E = "01.snapshot_copy"
    w.cell_of(E)
    w.try_(
        E,
        'data = np.array([1.0, 2.0, 3.0])\nsnapshot = torch.from_numpy(data)\ndata[0] = 100.0\ncheck("01.snapshot_copy", snapshot)',
        "the buggy line itself",
        "fail",
    )
    w.try_(
        E,
        'data = np.array([1.0, 2.0, 3.0])\nsnapshot = torch.from_numpy(np.array(data))\ndata[0] = 100.0\ncheck("01.snapshot_copy", snapshot)',
        "right: np.array copies",
        "pass",
    )
    w.try_(
        E,
        'data = np.array([1.0, 2.0, 3.0])\nsnapshot = torch.tensor(data)\ncheck("01.snapshot_copy", snapshot)\ndata[0] = 100.0',
        "check before the change (task order)",
        "?",
    )
