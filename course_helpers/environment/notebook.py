"""One call at the top of every lesson: reproducible numbers on every machine."""

from __future__ import annotations

import os
import random
import sys


def cpu_generator(seed: int = 0):
    """A CPU ``torch.Generator`` seeded with ``seed``.

    Draw random data with it on the CPU and then move the data to the device:
    CUDA's random streams differ from the CPU's, so this keeps the printed
    numbers identical on CPU and GPU machines.
    """
    import torch

    return torch.Generator(device="cpu").manual_seed(checked_seed(seed, "cpu_generator", 2**63))


def checked_seed(seed, where: str, limit: int) -> int:
    """``seed`` as an ``int``, or a :class:`CourseError` naming the problem: a seed must be
    a whole number from 0 to ``limit - 1`` (``1.7`` would silently become ``1``)."""
    import numbers

    from course_helpers.errors import CourseError

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise CourseError(
            f"{where}: the seed must be a whole number such as 0 or 42, not {seed!r} "
            f"(a {type(seed).__name__}). Pass int(...) of it if you meant a whole number."
        )
    if not 0 <= int(seed) < limit:
        raise CourseError(
            f"{where}: the seed must be between 0 and {limit - 1}, not {int(seed)}. "
            "Use a small non-negative number such as 0 or 42."
        )
    return int(seed)


def setup_notebook(
    seed: int = 0, *, precision: int = 4, deterministic: bool = True, compact_errors: bool = True
):
    """Seed Python, NumPy and torch, set print options, and return the course device.

    - ``torch.manual_seed``, ``random.seed`` and ``numpy.random.seed`` get ``seed``;
    - tensors print with ``precision`` decimals (4 by default) so outputs stay short;
    - ``deterministic=True`` asks torch for deterministic algorithms (warn only, so
      no lesson stops on a GPU op that has no deterministic version);
    - on CPU the intra-op thread count is left alone: results of the small tensors in
      the lessons do not depend on it.

    - ``compact_errors=True`` (in IPython) shows errors without the frames inside torch and
      other libraries: the exception type, its full message and the learner's own lines stay,
      and one line says how many frames were hidden (``%tb`` shows them all; see
      :func:`course_helpers.environment.tracebacks.compact_tracebacks`).

    Returns ``course_helpers.get_device()``. Prints nothing, so the cell's output
    is the same on CPU, CUDA and MPS machines. The one exception: when ``COURSE_DEVICE``
    names a device this machine does not have, it says so once (on stderr) and returns the
    CPU, so the rest of the notebook still runs instead of failing cell after cell.
    """
    import numpy as np
    import torch

    from course_helpers.environment.device import get_device
    from course_helpers.errors import CourseError, require_flag, require_whole_number

    seed = checked_seed(seed, "setup_notebook", 2**32)  # numpy's limit
    # a negative precision was accepted and broke every later print of a tensor
    precision = require_whole_number(precision, "precision", "setup_notebook", 0, 16)
    require_flag(deterministic, "deterministic", "setup_notebook")
    require_flag(compact_errors, "compact_errors", "setup_notebook")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_printoptions(precision=precision, sci_mode=False, linewidth=88, profile=None)
    np.set_printoptions(precision=precision, suppress=True)
    if compact_errors:
        from course_helpers.environment.tracebacks import compact_tracebacks

        compact_tracebacks()
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        _deterministic_algorithms(torch)
        torch.backends.cudnn.benchmark = False
    try:
        return get_device()
    except CourseError as err:
        from course_helpers.environment.device import fall_back_to_cpu

        sys.stderr.write(f"Warning: {err}\nThis notebook continues on the CPU.\n")
        fall_back_to_cpu()  # and get_device() says the CPU from now on (one decision)
        return torch.device("cpu")


def _deterministic_algorithms(torch) -> None:
    """``torch.use_deterministic_algorithms(True, warn_only=True)`` for eager code.

    The public function also imports ``torch._inductor`` (for ``torch.compile``, which the
    course does not use) and with it dynamo and sympy: about 2 s at the start of every
    notebook. Its eager-mode effect is this one call; the public function is used when the
    private one is gone or when inductor is already loaded (someone compiles).
    """
    private = getattr(torch._C, "_set_deterministic_algorithms", None)
    if private is None or "torch._inductor" in sys.modules:
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        private(True, warn_only=True)
