# ruff: noqa: E501  (answer cells are written as one-line strings)
from driver import Walk


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


with Walk("02") as w:
    w.setup()
    w.run("import numpy as np")
    E = "02.megabytes"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "megabytes",
            "def megabytes(t):\n    return np.prod(t.shape) * t.element_size() / 1e6",
        ),
        "numpy float64 (a float subclass)",
        "?",
    )
    w.try_(
        E,
        fn(E, "megabytes", "def megabytes(t):\n    return t.numel() * t.element_size() / 1e6"),
        "right",
        "pass",
    )
    E = "02.match_like"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "match_like",
            'def match_like(values, reference):\n    if reference.device.type == "meta":\n        return values.to("meta").to(reference.dtype)\n    return values.to(reference.dtype)',
        ),
        "names devices (task forbids), right values",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "match_like",
            "def match_like(values, reference):\n    out = values.to(reference.device)\n    if reference.dtype == torch.float64:\n        return out.double()\n    if reference.dtype == torch.int64:\n        return out.long()\n    return out.float()",
        ),
        "names dtypes (task forbids)",
        "fail",
    )
    E = "02.int_labels"
    w.cell_of(E)
    w.try_(
        E,
        'labels = raw_labels.numpy().astype(np.int64)\ncheck("02.int_labels", labels)',
        "numpy int64",
        "fail",
    )
    w.try_(
        E,
        'labels = torch.tensor([2, 0, 1, 1], dtype=torch.int32)\ncheck("02.int_labels", labels)',
        "typed int32",
        "fail",
    )
    w.try_(
        E,
        'labels = raw_labels.long()\nlabels = labels.float()\ncheck("02.int_labels", labels)',
        "converted back",
        "fail",
    )
    E = "02.uint8_wrap"
    w.cell_of(E)
    w.try_(E, 'answer = np.int64(246)\ncheck("02.uint8_wrap", answer)', "numpy int", "?")
    w.try_(E, 'answer = "246"\ncheck("02.uint8_wrap", answer)', "string", "fail")
