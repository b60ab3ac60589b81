"""Choosing the device the course runs on."""

from __future__ import annotations

import os

from course_helpers.errors import CourseError

ENV_VAR = "COURSE_DEVICE"
_KNOWN = ("cpu", "cuda", "mps")


def available_devices() -> list[str]:
    """Device types usable on this machine, best first (always ends with ``"cpu"``)."""
    import torch

    found = []
    if torch.cuda.is_available():
        found.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    found.append("cpu")
    return found


def device_choice() -> tuple[str, str]:
    """Return ``(device_string, reason)`` without creating a ``torch.device``."""
    available = available_devices()
    wanted = os.environ.get(ENV_VAR, "").strip()
    if wanted:
        kind = wanted.split(":", 1)[0].lower()
        if kind not in _KNOWN:
            raise CourseError(
                f"{ENV_VAR}={wanted!r} is not a device type. Use one of: "
                f"{', '.join(available)} (available here), or unset {ENV_VAR}."
            )
        if kind not in available:
            raise CourseError(
                f"{ENV_VAR}={wanted!r} asks for {kind.upper()}, which is not available on this "
                f"machine. Available here: {', '.join(available)}. Unset {ENV_VAR} to let the "
                "course choose."
            )
        if kind == "cuda" and ":" in wanted:
            import torch

            index = wanted.split(":", 1)[1]
            count = torch.cuda.device_count()
            if not index.isdigit() or int(index) >= count:
                raise CourseError(
                    f"{ENV_VAR}={wanted!r} names a GPU that does not exist; this machine has "
                    f"{count} CUDA device(s): use cuda:0 .. cuda:{count - 1}."
                )
        return wanted.lower(), f"set by {ENV_VAR}"
    best = available[0]
    reasons = {
        "cuda": "a CUDA GPU is available",
        "mps": "Apple MPS is available (no CUDA GPU)",
        "cpu": "no CUDA GPU or Apple MPS found",
    }
    return best, reasons[best]


def get_device():
    """The ``torch.device`` the course uses: CUDA if available, else MPS, else CPU.

    Set the environment variable ``COURSE_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``,
    ``mps``) to override; an unknown or unavailable value raises ``CourseError``
    naming the devices that are available, unless :func:`setup_notebook` already warned
    about that value and chose the CPU: then it is the CPU here too.
    """
    import torch

    wanted = os.environ.get(ENV_VAR, "").strip()
    if wanted and wanted == _fell_back_from:  # setup_notebook already chose the CPU for it
        return torch.device("cpu")
    name, _ = device_choice()
    return torch.device(name)


# the COURSE_DEVICE value that setup_notebook found unusable and replaced by the CPU (with a
# warning): get_device then gives the CPU for it too, so a notebook makes one decision and
# keeps to it instead of running on the CPU until a later cell's get_device() raises
_fell_back_from: str | None = None


def fall_back_to_cpu() -> None:
    """Remember that the current ``COURSE_DEVICE`` was replaced by the CPU (see above)."""
    global _fell_back_from
    _fell_back_from = os.environ.get(ENV_VAR, "").strip() or None
