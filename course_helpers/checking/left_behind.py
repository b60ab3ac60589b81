"""What a learner's function leaves behind when it returns, besides its result.

``call_and_record`` takes a :func:`snapshot` before each call and :func:`restore` after it:
the kernel-wide switches (gradient recording, anomaly detection, the default dtype) and the
notebook's globals the function names (rebinding one with ``global``, changing a global
tensor in place). Whatever changed is put back, so the checker's own calls never change the
learner's notebook, and named in the run's record (``"left_behind"``), e.g.
``["grad_mode_off"]``, ``["global:FEATURE_MEAN"]``; ``function_judge`` explains each.
"""

from __future__ import annotations

import dis
import inspect

_MISSING = object()
_MAX_COPIED = 1_000_000  # a larger global tensor changed in place is named, not put back


def snapshot(function) -> dict:
    import torch

    names = _globals_named(function)
    saved = {}
    for namespace, name in names:
        value = namespace.get(name, _MISSING)
        copy = None
        if isinstance(value, torch.Tensor) and value.device.type != "meta":
            small = value.numel() <= _MAX_COPIED
            copy = (value._version, value.detach().clone() if small else None)
        saved[(id(namespace), name)] = (namespace, value, copy)
    return {
        "grad": torch.is_grad_enabled(),
        "anomaly": torch.is_anomaly_enabled(),
        "dtype": torch.get_default_dtype(),
        "globals": saved,
    }


def restore(state: dict) -> list[str]:
    """Put back what changed since :func:`snapshot`; what it was, as short codes."""
    import torch

    left = []
    if torch.is_grad_enabled() != state["grad"]:
        left.append("grad_mode_off" if state["grad"] else "grad_mode_on")
        torch.set_grad_enabled(state["grad"])
    if torch.is_anomaly_enabled() != state["anomaly"]:
        left.append("anomaly_on" if not state["anomaly"] else "anomaly_off")
        torch.autograd.set_detect_anomaly(state["anomaly"])
    if torch.get_default_dtype() != state["dtype"]:
        left.append(f"default_dtype:{str(torch.get_default_dtype()).removeprefix('torch.')}")
        torch.set_default_dtype(state["dtype"])
    for (_, name), (namespace, value, copy) in state["globals"].items():
        now = namespace.get(name, _MISSING)
        if now is not value:
            left.append(f"global:{name}")
            if value is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = value
        elif copy is not None and value._version != copy[0]:
            left.append(f"global_tensor:{name}")
            kept = copy[1]
            if kept is not None and value.shape == kept.shape and value.dtype == kept.dtype:
                with torch.no_grad():
                    value.copy_(kept)
    return left


def _globals_named(function, depth: int = 2) -> list[tuple[dict, str]]:
    """(globals dict, name) for every global name ``function`` (and the notebook functions it
    calls) reads or assigns."""
    found: dict[tuple[int, str], tuple[dict, str]] = {}
    seen: set[int] = set()

    def visit(item, level: int) -> None:
        if id(item) in seen or not inspect.isfunction(item):
            return
        seen.add(id(item))
        module = getattr(item, "__module__", "") or ""
        if module.startswith(("torch", "course_helpers", "numpy")):
            return
        namespace = item.__globals__
        for name in _names(item.__code__):
            found.setdefault((id(namespace), name), (namespace, name))
            if level < depth and inspect.isfunction(namespace.get(name)):
                visit(namespace[name], level + 1)

    visit(function, 0)
    return list(found.values())


def _names(code) -> list[str]:
    """Global names a code object (and its nested code) loads or stores."""
    names: list[str] = []
    stack = [code]
    while stack:
        current = stack.pop()
        for instruction in dis.get_instructions(current):
            if instruction.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL"):
                name = instruction.argval
                if isinstance(name, str) and name not in names:
                    names.append(name)
        stack.extend(c for c in current.co_consts if inspect.iscode(c))
    return names
