"""Which code constructs a feedback text names: the detector behind the catalogue's evidence
rule (``tests/lessons/test_misconception_evidence.py``).

A misconception is recognised by behaviour, so a text shown without evidence from the
learner's code must not name a function, method, attribute, keyword argument, operator or
step: the learner may have reached the same values without it. The detector decides in
plain, checkable steps; it errs towards flagging (a rewrite costs less than a false claim):

1. Anything in backticks.
2. A call: a name of two or more characters followed by ``(`` (``squeeze()``,
   ``mean(dim=0)``, ``torch.cdist(``). One-letter names are maths (``f(x)``).
3. An attribute: ``.name`` right after a name, ``)`` or ``]`` (``x.t``, ``model.eval``,
   ``torch.cdist``); "e.g." and "i.e." are prose.
4. A keyword argument: ``name=`` not followed by ``=`` (``keepdim=True``, ``dim=0``).
5. Indexing with a slice or ``None`` (``x[::2]``, ``a[None]``), and the operators ``@``,
   ``//``, ``-=``, ``+=``, ``*=``, ``/=``.
6. A bare word that can only be code: any name of PyTorch's API (``torch``, ``Tensor``
   methods, ``torch.nn.functional``, ``nn.Module``, optimizers, ``torch.autograd``,
   ``torch.distributed``, ``torch.utils.data``) that holds an underscore (``zero_grad``,
   ``retain_graph``), a class name of ``torch.nn``/``torch.optim``/``torch.utils.data`` in
   its capitalised form (``Parameter``, ``DataLoader``, ``SGD``; at the start of a sentence
   it is prose: "Flatten the batch"), or one of
   :data:`CODE_WORDS`, names that are no English word (``cdist``, ``bmm``) or that this course
   uses only for a step (``hook``, ``keepdim``).

Not flagged, because they describe what the answer itself shows (its observable state, read
from the answer record): :data:`STATE_WORDS` (``grad``, ``requires_grad``, ``is_leaf``,
``grad_fn``, ``training``, ``shape``, ``dtype``...) and dtype names (``torch.float32``).
"""

from __future__ import annotations

import functools
import re

# names the course uses for a step or a tool, and names no English word shares
CODE_WORDS = {
    "arange",
    "linspace",
    "cdist",
    "bmm",
    "matmul",
    "mm",
    "numel",
    "allclose",
    "isfinite",
    "isnan",
    "isinf",
    "unsqueeze",
    "squeeze",
    "keepdim",
    "einsum",
    "hook",
    "hooks",
    "mT",
    "detach",
    "detached",
    "detaching",
    "retain_grad",
    "from_numpy",
    "as_tensor",
    "mse_loss",
    "cross_entropy",
    "one_hot",
    "state_dict",
    "state_dicts",
    "no_sync",
    "all_reduce",
    "set_epoch",
    "drop_last",
    "init_process_group",
}

# what the answer record shows about a tensor or module: describing it is an observation
STATE_WORDS = {
    "grad",
    "requires_grad",
    "is_leaf",
    "grad_fn",
    "training",
    "shape",
    "dtype",
    "device",
    "_version",
    "version",
}

_DTYPES = r"(?:u?int(?:8|16|32|64)|float(?:16|32|64)|bfloat16|complex(?:64|128)|bool)"


@functools.cache
def api_names() -> frozenset[str]:
    """Every public name of the PyTorch API namespaces the course teaches."""
    import torch
    import torch.distributed
    import torch.nn.functional
    import torch.utils.data

    spaces = [
        torch,
        torch.Tensor,
        torch.nn.functional,
        torch.nn.Module,
        torch.optim.Optimizer,
        torch.autograd,
        torch.distributed,
        torch.utils.data,
    ]
    names = {n for space in spaces for n in dir(space) if not n.startswith("__")}
    return frozenset(names)


@functools.cache
def class_names() -> frozenset[str]:
    import torch
    import torch.utils.data

    found = set()
    for space in (torch.nn, torch.optim, torch.utils.data, torch.nn.parallel):
        found |= {n for n in dir(space) if n[:1].isupper() and isinstance(getattr(space, n), type)}
    found |= {"Parameters"}  # the plural, as prose writes it
    return frozenset(found)


def constructs(text: str) -> list[str]:
    """The code constructs ``text`` names, in order of appearance (see the module doc)."""
    text = re.sub(rf"\btorch\.{_DTYPES}\b", " ", text)  # a dtype is state, not a construct
    text = re.sub(r"\b(?:e\.g|i\.e)\.", " ", text)
    found: list[tuple[int, str]] = []

    def add(match, value=None):
        found.append((match.start(), value if value is not None else match.group(0)))

    for m in re.finditer(r"`[^`]+`", text):
        add(m)
    for m in re.finditer(r"([A-Za-z_][\w.]*[A-Za-z_0-9])\(", text):
        if m.group(1).split(".")[-1] not in STATE_WORDS:
            add(m, m.group(1) + "(")
    for m in re.finditer(r"(?<=[\w)\]])\.([A-Za-z_]\w*)", text):
        if m.group(1) not in STATE_WORDS:
            add(m, "." + m.group(1))
    for m in re.finditer(r"\b([A-Za-z_]\w*)=(?!=)", text):
        if m.group(1) not in STATE_WORDS:
            add(m)
    for m in re.finditer(r"\b\w+\[[^\]]*(?::|None|\.\.\.)[^\]]*\]", text):
        add(m)
    for m in re.finditer(r"(?<![\w/])(?:@|//|-=|\+=|\*=|/=)(?!\w*/)", text):
        add(m)
    for m in re.finditer(r"\b[A-Za-z_]\w*\b", text):
        word = m.group(0)
        if word in STATE_WORDS:
            continue
        if word in CODE_WORDS:
            add(m)
        elif word in class_names() and not _starts_sentence(text, m.start()):
            add(m)
        elif "_" in word.strip("_") and word in api_names():
            add(m)
    return [value for _, value in sorted(found)]


def _starts_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before.endswith((".", ":", "?", "!", ";"))
