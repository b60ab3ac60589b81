# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Hint tiers to the end, the solution, and bad input to check/hint (lesson 01's notebook)."""

from driver import Walk

with Walk("01") as w:
    w.setup()
    E = "01.linspace_points"
    w.try_(
        E,
        'points = torch.arange(-1, 1, 0.5)\ncheck("01.linspace_points", points)',
        "arange",
        "fail",
    )
    for _ in range(5):
        w.hint(E)
    w.hint(E, solution=True)
    w.try_("01.nope", 'check("01.nope", 3)', "unknown exercise id", "error")
    w.try_(
        "1.arange_grid", 'check("1.arange_grid", torch.arange(12).view(3, 4))', "id typo", "error"
    )
    w.try_("01.arange_grid", 'check("01.arange_grid")', "no answer argument", "?")
    w.try_("01.arange_grid", "check(torch.arange(12).view(3, 4))", "answer only, no id", "error")
    w.try_("01.nope", 'hint("01.nope")', "hint for an unknown id", "error")
    w.try_("01.arange_grid", "hint(1)", "hint with a number", "error")
    w.try_(
        "01.arange_grid",
        'check("01.arange_grid", torch.arange(12).view(3, 4)); check("01.arange_grid", torch.arange(12).view(4, 3))',
        "two checks in one cell",
        "?",
    )
