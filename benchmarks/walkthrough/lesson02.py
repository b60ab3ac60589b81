# ruff: noqa: E501  (answer cells are written as one-line strings)
"""Lesson 02 exercises, as a new learner."""

from driver import Walk


def cell(ex, name, body, tail=""):
    return f'{body}\ncheck("{ex}", {name}){tail}'


def fn(ex, name, body):
    return f'{body}\n\n\ncheck("{ex}", {name})'


with Walk("02") as w:
    w.setup()
    E = "02.predict_promotion"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = torch.float64"), "python float is double", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = torch.int32"), "keeps tensor dtype", "fail")
    w.try_(E, cell(E, "answer", 'answer = "float32"'), "a string", "fail")
    w.try_(
        E,
        cell(E, "answer", "answer = torch.tensor([1.0]).dtype"),
        "right via a dtype attribute",
        "pass",
    )

    E = "02.megabytes"
    w.cell_of(E)
    w.try_(
        E,
        fn(E, "megabytes", "def megabytes(t):\n    return t.numel() * 4 / 1e6"),
        "assumes float32",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(E, "megabytes", "def megabytes(t):\n    return t.numel() * t.element_size() / 1024**2"),
        "MiB",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "megabytes",
            "def megabytes(t):\n    return torch.tensor(t.numel() * t.element_size() / 1e6)",
        ),
        "a tensor",
        "fail",
    )
    w.try_(
        E,
        fn(E, "megabytes", "def megabytes(t):\n    return t.numel() * t.element_size() // 1e6"),
        "floor division",
        "fail",
    )
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
        fn(E, "megabytes", "def megabytes(t):\n    return t.untyped_storage().nbytes() / 1e6"),
        "storage bytes",
        "?",
    )
    w.try_(
        E,
        fn(E, "megabytes", "def megabytes(t):\n    return t.nbytes / 1e6"),
        "right, nbytes",
        "pass",
    )

    E = "02.float16_underflow"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", 'answer = "a"'), "float16 keeps 1e-8", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", 'answer = "c"'), "inf", "fail")
    w.try_(E, cell(E, "answer", "answer = 0.0"), "the value, not the letter", "fail")
    w.try_(E, cell(E, "answer", 'answer = "b"'), "right", "pass")

    E = "02.mean_of_counts"
    w.cell_of(E)
    w.try_(
        E,
        fn(E, "mean_of_counts", "def mean_of_counts(counts):\n    return counts.double().mean()"),
        "float64",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "mean_of_counts",
            "def mean_of_counts(counts):\n    return counts.float().mean().item()",
        ),
        "python float",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "mean_of_counts",
            "def mean_of_counts(counts):\n    return counts.float().mean(dim=0)",
        ),
        "mean over dim 0",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "mean_of_counts",
            "def mean_of_counts(counts):\n    return counts.sum() // counts.numel()",
        ),
        "integer division",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "mean_of_counts",
            "def mean_of_counts(counts):\n    return counts.sum() / counts.numel()",
        ),
        "right: true division gives float32",
        "pass",
    )
    w.try_(
        E,
        fn(
            E,
            "mean_of_counts",
            "def mean_of_counts(counts):\n    return counts.mean(dtype=torch.float32)",
        ),
        "right, dtype= argument",
        "pass",
    )

    E = "02.dtype_string_error"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = RuntimeError"), "like the .to('float16') pitfall", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = ValueError"), "value error", "fail")
    w.try_(E, cell(E, "answer", 'answer = "typeerror"'), "miscased name", "?")
    w.try_(E, cell(E, "answer", 'answer = "TypeError"'), "right, name", "pass")

    E = "02.match_like"
    w.cell_of(E)
    w.try_(
        E,
        fn(
            E,
            "match_like",
            "def match_like(values, reference):\n    return values.to(reference.dtype)",
        ),
        "dtype only",
        "fail",
    )
    w.hint(E)
    w.try_(
        E,
        fn(
            E,
            "match_like",
            'def match_like(values, reference):\n    return values.to("cpu").to(reference.dtype)',
        ),
        "names a device",
        "fail",
    )
    w.try_(
        E,
        fn(
            E,
            "match_like",
            "def match_like(values, reference):\n    return torch.tensor(values, dtype=reference.dtype, device=reference.device)",
        ),
        "torch.tensor(tensor) (warning)",
        "?",
    )
    w.try_(
        E,
        fn(
            E,
            "match_like",
            "def match_like(values, reference):\n    return reference.to(values.dtype)",
        ),
        "swapped arguments",
        "fail",
    )
    w.try_(
        E,
        fn(E, "match_like", "def match_like(values, reference):\n    return values.to(reference)"),
        "right: to(other)",
        "pass",
    )
    w.try_(
        E,
        fn(
            E,
            "match_like",
            "def match_like(values, reference):\n    return values.to(dtype=reference.dtype, device=reference.device)",
        ),
        "right",
        "pass",
    )

    E = "02.int_labels"
    w.cell_of(E)
    w.try_(E, cell(E, "labels", "labels = raw_labels.int()"), "int32", "fail")
    w.hint(E)
    w.try_(E, cell(E, "labels", "labels = raw_labels.round()"), "rounded floats", "fail")
    w.try_(
        E, cell(E, "labels", "labels = raw_labels.numpy().astype(np.int64)"), "numpy int64", "fail"
    )
    w.try_(
        E,
        cell(E, "labels", 'labels = raw_labels.to("int64")'),
        "dtype as string (raises in my cell)",
        "fail",
    )
    w.try_(
        E,
        cell(E, "labels", "labels = raw_labels.type(torch.LongTensor)"),
        "right, old .type form",
        "pass",
    )
    w.try_(E, cell(E, "labels", "labels = raw_labels.to(torch.long).to(device)"), "right", "pass")

    E = "02.uint8_wrap"
    w.cell_of(E)
    w.try_(E, cell(E, "answer", "answer = -10"), "no wrap", "fail")
    w.hint(E)
    w.try_(E, cell(E, "answer", "answer = 245"), "off by one", "fail")
    w.try_(
        E,
        cell(
            E,
            "answer",
            "answer = torch.tensor([10], dtype=torch.uint8) - torch.tensor([20], dtype=torch.uint8)",
        ),
        "the tensor itself",
        "fail",
    )
    w.try_(E, cell(E, "answer", "answer = 246.0"), "a float", "?")
    w.try_(E, cell(E, "answer", "answer = 256 - 10"), "right", "pass")
