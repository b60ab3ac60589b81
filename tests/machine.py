"""What the machine running the tests has, for tests that must hold on CPU and CUDA machines.

The rules are written out here, not taken from ``course_helpers``, so that a test comparing
the course's answer with them checks the course instead of repeating it.
"""

from __future__ import annotations

import os


def expected_device() -> str:
    """The device the course should pick here: ``COURSE_DEVICE`` when set, else CUDA when
    torch sees a GPU, else Apple MPS when available, else the CPU."""
    import torch

    wanted = os.environ.get("COURSE_DEVICE", "").strip().lower()
    if wanted:
        return wanted
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def release(version: str) -> str:
    """A version without its local tag: ``"2.11.0+cu130"`` -> ``"2.11.0"`` (PEP 440).

    PyPI's and PyTorch's own torch wheels add ``+cu130``, ``+cpu`` and the like to
    ``torch.__version__``, and not always to the installed package's metadata."""
    return version.split("+", 1)[0]
