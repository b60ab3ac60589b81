"""Measuring what autograd graphs keep alive: the tensors saved for backward, and graph nodes.

Lesson 07 uses it to show that an evaluation loop without ``no_grad`` keeps graphs alive, and
how much a frozen prefix saves when it runs under ``no_grad``.
"""

from __future__ import annotations

import weakref

from course_helpers.errors import CourseError


class _SavedBox:
    """Holds one saved tensor; its finalizer tells the meter when the graph frees it."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor):
        self.tensor = tensor


def _flatten(tensors, who: str) -> list:
    import torch

    if isinstance(tensors, torch.Tensor):
        return [tensors]
    try:
        items = list(tensors)
    except TypeError:
        raise CourseError(
            f"{who} expects tensors (a tensor, or a list of them, e.g. model.parameters()) "
            f"but got {type(tensors).__name__}."
        ) from None
    flat = []
    for item in items:
        if isinstance(item, torch.Tensor):
            flat.append(item)
        elif isinstance(item, (list, tuple)):
            flat.extend(_flatten(item, who))
        else:
            raise CourseError(
                f"{who} expects tensors (a tensor, or a list of them, e.g. model.parameters()) "
                f"but one item is a {type(item).__name__}. Pass only tensors."
            )
    return flat


class SavedTensorMeter:
    """Counts the tensors autograd saved for backward that are still alive, and their bytes.

    Inside ``with meter:`` every tensor autograd saves is wrapped (``saved_tensors_hooks``) in
    a box that reports back when its graph is freed, so ``count`` and ``nbytes`` always describe
    the graphs alive now, also after the block. ``ignore`` names tensors that exist anyway
    (parameters, data batches); they are not counted. A storage saved twice counts its bytes
    once. ``report(label, total)`` prints one line: graph nodes behind ``total``, saved tensors,
    bytes.
    """

    def __init__(self, ignore=()):
        self._ignored: list = []  # kept alive, so their storage addresses stay theirs
        self._skip: set[int] = set()
        self._held: dict[int, list[int]] = {}  # storage address -> [boxes alive, bytes]
        self._hooks = None
        self.ignore(ignore)

    def ignore(self, tensors) -> None:
        """Leave these tensors (and anything sharing their storage) out of the counts."""
        for tensor in _flatten(tensors, "SavedTensorMeter.ignore"):
            self._ignored.append(tensor)
            self._skip.add(tensor.untyped_storage().data_ptr())

    @property
    def count(self) -> int:
        """How many saved tensors are alive (a tensor saved by two nodes counts twice)."""
        return sum(boxes for boxes, _ in self._held.values())

    @property
    def nbytes(self) -> int:
        """The bytes of the distinct storages behind the saved tensors alive."""
        return sum(size for _, size in self._held.values())

    def report(self, label: str, total=None) -> None:
        """Print graph nodes reachable from ``total``, saved tensors alive and their bytes."""
        print(
            f"{label:<14} graph nodes={graph_nodes(total):>3}  saved tensors={self.count:>3}  "
            f"bytes={self.nbytes:>6}"
        )

    def _pack(self, tensor):
        key = tensor.untyped_storage().data_ptr()
        if key in self._skip:
            return tensor
        box = _SavedBox(tensor.detach())
        entry = self._held.setdefault(key, [0, tensor.untyped_storage().nbytes()])
        entry[0] += 1
        weakref.finalize(box, self._release, key)
        return box

    def _release(self, key: int) -> None:
        entry = self._held[key]
        entry[0] -= 1
        if entry[0] == 0:
            del self._held[key]

    @staticmethod
    def _unpack(saved):
        return saved.tensor if isinstance(saved, _SavedBox) else saved

    def __enter__(self):
        import torch

        if self._hooks is not None:
            raise CourseError(
                "This SavedTensorMeter is already measuring (a `with meter:` inside another "
                "one). Use one `with` block, or a second meter."
            )
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc_info):
        hooks, self._hooks = self._hooks, None
        return hooks.__exit__(*exc_info)


def graph_nodes(t) -> int:
    """How many distinct autograd nodes are reachable from ``t`` (0 without a graph)."""
    import torch

    if not isinstance(t, torch.Tensor) or t.grad_fn is None:
        return 0
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and node not in seen:
            seen.add(node)
            todo.extend(parent for parent, _ in node.next_functions)
    return len(seen)
