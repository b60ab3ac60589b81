# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 01 exercises, as a new learner: wrong answers first, hints, then a right one."""

from driver import Walk

C = 'check("{id}", {arg})'

with Walk("01") as w:
    w.setup()
    E = "01.arange_grid"
    w.cell_of(E)
    w.try_(
        E,
        'answer = torch.arange(12).reshape(4, 3)\ncheck("01.arange_grid", answer)',
        "rows/cols swapped",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        'answer = torch.arange(1, 13).reshape(3, 4)\ncheck("01.arange_grid", answer)',
        "off by one: 1..12",
        "fail",
    )
    w.try_(
        E,
        'answer = torch.Tensor(range(12)).reshape(3, 4)\ncheck("01.arange_grid", answer)',
        "torch.Tensor -> float32",
        "fail",
    )
    w.try_(
        E,
        'answer = np.arange(12).reshape(3, 4)\ncheck("01.arange_grid", answer)',
        "numpy array",
        "fail",
    )
    w.try_(
        E,
        'answer = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])\ncheck("01.arange_grid", answer)',
        "typed the numbers (task rules out)",
        "fail",
    )
    w.try_(
        E,
        'answer = torch.arange(12, dtype=torch.int32).reshape(3, 4)\ncheck("01.arange_grid", answer)',
        "int32 where task says int64",
        "fail",
    )
    w.hint(E)
    w.hint(E)
    w.try_(
        E,
        'answer = torch.arange(12).view(3, 4)\ncheck("01.arange_grid", answer)',
        "right (view)",
        "pass",
    )

    E = "01.linspace_points"
    w.cell_of(E)
    w.try_(
        E,
        'points = torch.linspace(-1, 1, 4)\ncheck("01.linspace_points", points)',
        "4 points",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        'points = torch.arange(-1, 1, 0.5)\ncheck("01.linspace_points", points)',
        "arange excludes end",
        "fail",
    )
    w.try_(
        E,
        'points = torch.linspace(-1, 1, 5, dtype=torch.float64)\ncheck("01.linspace_points", points)',
        "float64",
        "fail",
    )
    w.try_(
        E, 'points = np.linspace(-1, 1, 5)\ncheck("01.linspace_points", points)', "numpy", "fail"
    )
    w.try_(
        E,
        'points = torch.linspace(-1, 1, 5).tolist()\ncheck("01.linspace_points", points)',
        "python list",
        "fail",
    )
    w.try_(
        E,
        'points = torch.arange(-1, 1.5, 0.5)\ncheck("01.linspace_points", points)',
        "right by arange with end past 1",
        "pass",
    )
    w.try_(
        E,
        'points = torch.linspace(-1, 1, steps=5)\ncheck("01.linspace_points", points)',
        "right",
        "pass",
    )

    E = "01.every_other_column"
    w.cell_of(E)
    w.try_(
        E,
        'def every_other_column(x):\n    return x[::2]\n\n\ncheck("01.every_other_column", every_other_column)',
        "rows instead of columns",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        'def every_other_column(x):\n    return x[:, 1::2]\n\n\ncheck("01.every_other_column", every_other_column)',
        "odd columns",
        "fail",
    )
    w.try_(
        E,
        'def every_other_column(x):\n    return x[:, ::2].squeeze()\n\n\ncheck("01.every_other_column", every_other_column)',
        "squeeze (breaks single column)",
        "fail",
    )
    w.try_(
        E,
        'def every_other_column(x):\n    return x.numpy()[:, ::2]\n\n\ncheck("01.every_other_column", every_other_column)',
        "numpy output",
        "fail",
    )
    w.try_(
        E,
        'def every_other_column(x):\n    return torch.stack([x[:, i] for i in range(0, x.shape[1], 2)], dim=1)\n\n\ncheck("01.every_other_column", every_other_column)',
        "list+stack, right values (no prohibition)",
        "pass",
    )
    w.try_(
        E,
        'def every_other_column(x):\n    return x[:, 0::2]\n\n\ncheck("01.every_other_column", every_other_column)',
        "right",
        "pass",
    )

    E = "01.celsius_to_fahrenheit"
    w.cell_of(E)
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    return celsius * 5 / 9 + 32\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "5/9 instead of 9/5",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    return torch.tensor([c * 9 / 5 + 32 for c in celsius])\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "python loop (ruled out; breaks 2-D)",
        "fail",
    )
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    return celsius * (9 // 5) + 32\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "integer division 9//5",
        "fail",
    )
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    celsius *= 1.8\n    celsius += 32\n    return celsius\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "in place on the input",
        "fail?",
    )
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    return celsius.flatten().apply_(lambda c: c * 9 / 5 + 32).reshape(celsius.shape)\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "apply_ (python per element)",
        "fail",
    )
    w.try_(
        E,
        'def celsius_to_fahrenheit(celsius):\n    return celsius * 1.8 + 32\n\n\ncheck("01.celsius_to_fahrenheit", celsius_to_fahrenheit)',
        "right",
        "pass",
    )

    E = "01.from_numpy_dtype"
    w.cell_of(E)
    w.try_(E, 'answer = "a"\ncheck("01.from_numpy_dtype", answer)', "float32 guess", "fail")
    w.hint(E)
    w.try_(
        E,
        'answer = torch.float64\ncheck("01.from_numpy_dtype", answer)',
        "dtype instead of letter",
        "fail",
    )
    w.try_(E, 'answer = "B"\ncheck("01.from_numpy_dtype", answer)', "uppercase letter", "?")
    w.try_(E, 'answer = "b"\ncheck("01.from_numpy_dtype", answer)', "right", "pass")

    E = "01.numpy_grad_error"
    w.cell_of(E)
    w.try_(E, 'answer = TypeError\ncheck("01.numpy_grad_error", answer)', "wrong class", "fail")
    w.hint(E)
    w.try_(
        E, 'answer = "runtime error"\ncheck("01.numpy_grad_error", answer)', "a loose name", "fail"
    )
    w.try_(
        E,
        'answer = RuntimeError("Can\'t call numpy()")\ncheck("01.numpy_grad_error", answer)',
        "an instance",
        "?",
    )
    w.pre(
        E,
        "scores = torch.randn(3, requires_grad=True)\ntry:\n    scores.numpy()\nexcept Exception as e:\n    err = e\nprint(type(err))",
    )
    w.try_(
        E,
        'answer = type(err)\ncheck("01.numpy_grad_error", answer)',
        "right, via type(err)",
        "pass",
    )

    E = "01.snapshot_copy"
    w.cell_of(E)
    w.try_(
        E,
        'data = np.array([1.0, 2.0, 3.0])\nsnapshot = torch.as_tensor(data)\ndata[0] = 100.0\ncheck("01.snapshot_copy", snapshot)',
        "as_tensor shares",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        'data = np.array([1.0, 2.0, 3.0])\nsnapshot = torch.Tensor(data)\ndata[0] = 100.0\ncheck("01.snapshot_copy", snapshot)',
        "torch.Tensor copies but float32",
        "fail",
    )
    w.try_(
        E,
        'data = np.array([1.0, 2.0, 3.0])\nsnapshot = data.copy()\ndata[0] = 100.0\ncheck("01.snapshot_copy", snapshot)',
        "numpy copy, not a tensor",
        "fail",
    )
    w.try_(
        E,
        'data = np.array([1.0, 2.0, 3.0])\nsnapshot = torch.from_numpy(data).float()\ndata[0] = 100.0\ncheck("01.snapshot_copy", snapshot)',
        ".float() copies, float32",
        "fail",
    )
    w.try_(
        E,
        'data = np.array([1.0, 2.0, 3.0])\nsnapshot = torch.from_numpy(data).clone()\ndata[0] = 100.0\ncheck("01.snapshot_copy", snapshot)',
        "right: clone",
        "pass",
    )

    E = "01.mask_write"
    w.cell_of(E)
    w.try_(E, 'answer = "a"\ncheck("01.mask_write", answer)', "thinks it writes", "fail")
    w.hint(E)
    w.try_(E, 'answer = "c"\ncheck("01.mask_write", answer)', "error", "fail")
    w.try_(E, 'answer = "b"\ncheck("01.mask_write", answer)', "right", "pass")

    E = "01.detach_numpy_snapshot"
    w.cell_of(E)
    w.try_(
        E, 'answer = "a"\ncheck("01.detach_numpy_snapshot", answer)', "thinks detach copies", "fail"
    )
    w.hint(E)
    w.try_(E, 'answer = "c"\ncheck("01.detach_numpy_snapshot", answer)', "error", "fail")
    w.try_(E, 'answer = "b"\ncheck("01.detach_numpy_snapshot", answer)', "right", "pass")

    E = "01.float_compare"
    w.cell_of(E)
    w.pre(
        E,
        "x = torch.tensor(0.3) - torch.tensor(0.1)\ny = torch.tensor(0.2)\nprint(x == y, torch.allclose(x, y))",
    )
    w.try_(E, 'answer = "d"\ncheck("01.float_compare", answer)', "neither", "fail")
    w.hint(E)
    w.try_(E, 'answer = ["b"]\ncheck("01.float_compare", answer)', "list of letter", "fail")
    w.try_(E, 'answer = "b"\ncheck("01.float_compare", answer)', "right?", "")
