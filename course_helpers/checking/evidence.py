"""The learner's code behind an answer, kept as evidence for what feedback may claim.

A typical mistake is recognised by behaviour (``checking.misconceptions``), and many routes
lead to the same values. Feedback may say *how* the learner got them ("your code calls
`cdist`") only when the code shows it. :func:`read_code` runs in the kernel (called by
``collect``) and keeps the code as plain text in the submission, under ``"code"``:

    {"where": "function source" | "answer cell", "text": "..."}

so that the grader, judging the same submission in its own process with the full catalogue,
finds the same evidence. :func:`found` answers "which of these patterns does the code
hold?" with the method checks' pattern language (``checking.method_checks``: ``call:``,
``attr:``, ``with:``, ``op:matmul``) plus ``kw:NAME`` (a keyword argument in any call) and a
few more operators (``op:floordiv``, ``op:is``, ``op:isub``, ``op:iadd``, ``op:imul``,
``op:idiv``) and ``order:a<b`` (``b`` called on a line after a call of ``a``: ``u.retain_grad()``
after ``f.backward()``); ``call:NAME`` also finds a call of the plain name (``cdist(a, b)`` after
``from torch import cdist``). Code that could not be read (a value checked outside IPython,
a function without source) is recorded as nothing: then no mechanism is stated as fact.
"""

from __future__ import annotations

import ast
from typing import Any

MAX_CODE_CHARS = 20_000  # more than any answer cell needs; the record stays small
_HELPER_DEPTH = 2  # a function answer: its own source, and the helpers it calls, 2 levels

# op:NAME -> the ast operators it names, in an expression (a // b) or an augmented
# assignment (a //= b); "i..." names only the augmented form (x -= y writes into x)
_BINARY = {"floordiv": ast.FloorDiv}
_AUGMENTED = {"isub": ast.Sub, "iadd": ast.Add, "imul": ast.Mult, "idiv": ast.Div}


def read_code(exercise, answer: Any) -> dict | None:
    """The code behind ``answer`` (see the module docstring), or None when none was read.
    Never raises: reading code is a help, never a reason for a check to fail."""
    if exercise.kind not in ("value", "function", "autograd"):
        return None  # predictions: the answer is a thought, not code
    try:
        from course_helpers.checking import answer_code
        from course_helpers.checking.method_checks import _source_of

        text, where = _source_of(exercise, answer)
        if text.strip() and exercise.kind == "function" and callable(answer):
            text = "\n\n".join([text, *_helper_sources(answer)])
        if not text.strip() and not (exercise.kind == "function" and callable(answer)):
            text, where = answer_code.executing_cell(), "answer cell"
    except Exception:
        return None
    if not text.strip():
        return None
    return {"where": where, "text": text[:MAX_CODE_CHARS]}


def _helper_sources(function) -> list[str]:
    """The sources of the learner's functions that ``function`` calls: those it closes over
    (a probe around the learner's function) and the global functions it names that were
    defined next to it (a helper in the same notebook), two levels deep."""
    import inspect
    import textwrap

    seen, sources, frontier = {id(function)}, [], [function]
    for _ in range(_HELPER_DEPTH):
        nearer = []
        for outer in frontier:
            for helper in _named_functions(outer):
                if id(helper) in seen:
                    continue
                seen.add(id(helper))
                nearer.append(helper)
                try:
                    sources.append(textwrap.dedent(inspect.getsource(helper)))
                except (OSError, TypeError):
                    pass
        frontier = nearer
    return sources


def _named_functions(function) -> list:
    import inspect

    code = getattr(function, "__code__", None)
    if code is None:
        return []
    found = []
    for cell in getattr(function, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if inspect.isfunction(value) and not _library(value):
            found.append(value)
    names = getattr(function, "__globals__", {})
    for name in code.co_names:
        value = names.get(name)
        if inspect.isfunction(value) and value.__module__ == function.__module__:
            found.append(value)
    return found


def _library(function) -> bool:
    module = (getattr(function, "__module__", "") or "").split(".")[0]
    return module in ("torch", "numpy", "functools", "typing", "builtins")


def found(code: Any, patterns) -> dict[str, list[str]] | None:
    """For each pattern, the alternatives of it that occur in the recorded ``code``
    (``[]`` for a pattern that does not occur); None when no code was read."""
    tree = _tree(code)
    if tree is None:
        return None
    return {pattern: _alternatives_found(tree, pattern) for pattern in patterns}


def _tree(code: Any) -> ast.AST | None:
    if not isinstance(code, dict) or not isinstance(code.get("text"), str):
        return None
    from course_helpers.checking.method_checks import _parse

    return _parse(code["text"][:MAX_CODE_CHARS])


def _alternatives_found(tree: ast.AST, pattern: str) -> list[str]:
    """``"call:detach|tensor"`` -> the alternatives (``"call:detach"``...) the tree holds."""
    kind, _, names = pattern.partition(":")
    hits = []
    for name in names.split("|"):
        single = f"{kind}:{name}"
        if _occurs(tree, single):
            hits.append(single)
    return hits


def _occurs(tree: ast.AST, pattern: str) -> bool:
    kind, _, name = pattern.partition(":")
    if kind == "order":
        first, _, then = name.partition("<")
        before, after = _call_lines(tree, first), _call_lines(tree, then)
        return bool(before and after) and max(after) > min(before)
    if kind in ("attr", "call", "with") or pattern == "op:matmul":
        from course_helpers.checking.method_checks import uses

        if pattern in uses(tree, [pattern]):
            return True
        if kind != "call":
            return False
    for node in ast.walk(tree):
        if kind == "call" and _bare_call(node, name):  # DataLoader(...) after an import
            return True
        if kind == "kw" and isinstance(node, ast.keyword) and node.arg == name:
            return True
        if kind == "op" and _is_operator(node, name):
            return True
    return False


def _call_lines(tree: ast.AST, name: str) -> list[int]:
    """The lines on which ``name`` is called (as a method, a torch function or a plain name)."""
    from course_helpers.checking.method_checks import uses

    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (f"call:{name}" in uses(node, [f"call:{name}"]) or _bare_call(node, name))
    ]


def _bare_call(node: ast.AST, name: str) -> bool:
    """A call of a plain name, ``cdist(a, b)``; ``"name()"`` only without arguments."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    if name.endswith("()"):
        return node.func.id == name[:-2] and not (node.args or node.keywords)
    return node.func.id == name


def _is_operator(node: ast.AST, name: str) -> bool:
    if name == "is":
        return isinstance(node, ast.Compare) and any(
            isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops
        )
    if name in _BINARY:
        return isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, _BINARY[name])
    if name in _AUGMENTED:
        return isinstance(node, ast.AugAssign) and isinstance(node.op, _AUGMENTED[name])
    return False


# methods that act by being called (their result is not the point): a line holding only the
# method, without parentheses, does nothing, and no error says so
_ACTIONS = (
    "zero_grad", "backward", "step", "eval", "train", "retain_grad", "requires_grad_",
    "zero_", "detach_", "barrier", "set_epoch", "no_grad",
)  # fmt: skip


def uncalled(code: Any) -> list[str]:
    """The statements of the recorded ``code`` that name such a method without calling it
    (``opt.zero_grad`` on a line of its own), as written; [] when none (or no code)."""
    tree = _tree(code)
    if tree is None:
        return []
    return [
        ast.unparse(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr in _ACTIONS
    ]


def shown(pattern: str) -> str:
    """How a single pattern reads after "Your code ...": "calls `cdist`", "uses `.data`"
    (the method checks' wording, ``code_patterns.used``, plus ``order:``)."""
    from course_helpers.checking.code_patterns import used

    kind, _, name = pattern.partition(":")
    if kind == "order":
        first, _, then = name.partition("<")
        return f"calls `{then}` after `{first}`"
    return used(pattern)


def lead_in(patterns) -> str:
    """``["call:sum", "kw:keepdim"]`` -> "calls `sum` and passes `keepdim=`"; the
    alternatives of one pattern are joined with "or"."""
    parts = []
    for pattern in patterns:
        kind, _, names = pattern.partition(":")
        alternatives = [shown(f"{kind}:{name}") for name in names.split("|")]
        verb = alternatives[0].split(" ", 1)[0]
        if len(alternatives) > 1 and all(a.split(" ", 1)[0] == verb for a in alternatives):
            rest = " or ".join(a.split(" ", 1)[1] for a in alternatives)
            parts.append(f"{verb} {rest}")
        else:
            parts.append(" or ".join(alternatives))
    return " and ".join(parts)
