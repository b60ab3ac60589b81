"""The pattern language of the method checks: what a piece of code uses, read with :mod:`ast`.

A pattern is ``KIND:NAME``; ``|`` separates alternatives (any one of them matches).

``attr:data``            the attribute ``.data`` is read or written
``call:detach``          a method or function named ``detach`` is called (``torch.x``,
                         ``t.x()``); ``call:squeeze()`` only without arguments. Calls on
                         ``math``/``np``/``numpy`` never count: patterns name torch's tools
``with:no_grad``         a ``with`` block whose manager's text names ``no_grad``; a decorator
                         (``@torch.no_grad()``) counts too, and ``set_grad_enabled(False)``
                         counts as ``no_grad``
``op:matmul``            the ``@`` operator (``@=`` too)
``loop:python``          a Python loop: ``for``, ``while``, a comprehension, ``map(...)``, or a
                         Python function applied per element (``.apply_``, ``.map_``,
                         ``np.vectorize``)
``many:backward``        ``.backward()`` called at two places or more, or inside a loop
``kw:backward.retain_graph``  a ``backward`` call given ``retain_graph`` (other than a
                         literal False or None); ``kw:retain_graph``: any call given it
``named:device``         a device written into the code: a string such as ``"cpu"``,
                         ``"cuda:0"``, ``"meta"``, or ``torch.device(...)``
``named:dtype``          a dtype written into the code: ``torch.float32`` (any torch dtype
                         attribute), a cast such as ``.float()``/``.double()``, a string
                         such as ``"float64"``

A call of a plain name counts when the code imports it from torch, or when it is a class
name (capitalised) that the code read does not define: ``DistributedSampler(...)`` in a
lesson-13 function, where the launcher provides it.
"""

from __future__ import annotations

import ast

from course_helpers.checking import syntax_trees

KINDS = ("attr", "call", "with", "op", "loop", "many", "kw", "named")
_OPERATORS = {"matmul": ast.MatMult}  # op:NAME -> the ast operator it names
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp)
_PER_ELEMENT = ("apply_", "map_", "map2_", "vectorize")
_NOT_TORCH = ("math", "np", "numpy")


def valid_pattern(pattern: str) -> bool:
    kind, _, name = pattern.partition(":")
    if kind == "kw":  # kw:KEYWORD (in any call) or kw:CALL.KEYWORD
        call, dot, keyword = name.partition(".")
        return bool(call and (keyword or not dot))
    if kind == "loop":
        return name == "python"
    if kind == "named":
        return bool(name) and all(n in ("device", "dtype") for n in name.split("|"))
    return kind in KINDS and bool(name)


def uses(tree: ast.AST, patterns) -> set[str]:
    """The patterns that occur in ``tree``."""
    found = set()
    patterns = list(patterns)
    imported = _imported_from_torch(tree)
    for pattern in patterns:
        if pattern.startswith("many:") and _many(tree, pattern[5:].split("|"), imported):
            found.add(pattern)
    for node in ast.walk(tree):
        for pattern in patterns:
            if pattern not in found and _matches(node, pattern, imported):
                found.add(pattern)
    return found


def _imported_from_torch(tree: ast.AST) -> frozenset[str]:
    """Names the code imports from torch (``from torch.autograd import grad``), and class
    names it calls without defining them (``DistributedSampler``): a call of the plain name
    counts as a call of torch's."""
    names, defined, classes = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id[:1].isupper():
                classes.add(node.func.id)
    return frozenset(names | (classes - defined))


def _matches(node: ast.AST, pattern: str, imported=frozenset()) -> bool:
    kind, _, name = pattern.partition(":")
    if kind == "attr":
        return isinstance(node, ast.Attribute) and node.attr == name
    if kind == "call":  # "call:a|b": either method
        return any(_is_call(node, alternative, imported) for alternative in name.split("|"))
    if kind == "with":  # "with:a|b": either context manager (or decorator)
        return any(
            _names_manager(expression, alternative)
            for expression in _managers(node)
            for alternative in name.split("|")
        )
    if kind == "op":  # a @ b, and a @= b
        operator = _OPERATORS.get(name)
        return (
            operator is not None
            and isinstance(node, (ast.BinOp, ast.AugAssign))
            and isinstance(node.op, operator)
        )
    if kind == "loop":
        return _is_loop(node)
    if kind == "named":
        return any(_names_a(node, alternative) for alternative in name.split("|"))
    if kind == "kw":
        calls, _, keyword = name.rpartition(".")
        if not isinstance(node, ast.Call):
            return False
        on_call = not calls or any(_is_call(node, call, imported) for call in calls.split("|"))
        return on_call and any(
            k.arg == keyword and not _false_or_none(k.value) for k in node.keywords
        )
    return False


def _is_call(node: ast.AST, name: str, imported=frozenset()) -> bool:
    """``node`` calls ``name`` as a method or module function, or as a plain name imported
    from torch (``name()``: without arguments)."""
    if not isinstance(node, ast.Call):
        return False
    plain = name.removesuffix("()")
    if isinstance(node.func, ast.Name):
        called = node.func.id if node.func.id in imported else None
    elif isinstance(node.func, ast.Attribute):
        owner = node.func.value
        if isinstance(owner, ast.Name) and owner.id in _NOT_TORCH:
            return False  # math.isfinite is not torch.isfinite: patterns name torch's tools
        called = node.func.attr
    else:
        return False
    return called == plain and (not name.endswith("()") or not (node.args or node.keywords))


_DEVICES = ("cpu", "cuda", "meta", "mps", "xpu")
_DTYPES = (
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "complex64",
    "complex128", "cfloat", "cdouble", "uint8", "int8", "int16", "int32", "int64", "short",
    "int", "long", "bool",
)  # fmt: skip
_CASTS = ("float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool")


def _names_a(node: ast.AST, what: str) -> bool:
    """``node`` writes a device (``what`` "device") or a dtype ("dtype") into the code."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.strip().lower().removeprefix("torch.")
        if what == "device":
            return text.split(":")[0] in _DEVICES
        return text in _DTYPES
    if what == "device":
        return _is_call(node, "device") and isinstance(node.func, ast.Attribute)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.value.id == "torch" and node.attr in _DTYPES:
            return True  # torch.float32, torch.long
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _CASTS
        and not node.args
        and not node.keywords
    )


def _managers(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in node.items]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return list(node.decorator_list)
    return []


def _names_manager(expression: ast.expr, name: str) -> bool:
    text = ast.unparse(expression)
    if name in text:
        return True
    # torch.set_grad_enabled(False) records nothing, exactly like no_grad
    return (
        name == "no_grad"
        and isinstance(expression, ast.Call)
        and isinstance(expression.func, (ast.Attribute, ast.Name))
        and (getattr(expression.func, "attr", None) or getattr(expression.func, "id", ""))
        == "set_grad_enabled"
        and len(expression.args) == 1
        and isinstance(expression.args[0], ast.Constant)
        and expression.args[0].value is False
    )


def _is_loop(node: ast.AST) -> bool:
    if isinstance(node, (*_LOOPS, ast.GeneratorExp)):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in ("map", "vectorize")
        if isinstance(func, ast.Attribute):
            return func.attr in _PER_ELEMENT
    return False


def _many(tree: ast.AST, names: list[str], imported=frozenset()) -> bool:
    """Some name in ``names`` is called at two places or more, or inside a loop."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, (*_LOOPS, ast.GeneratorExp)):
            inside = [n for n in ast.walk(node) if n is not node]
            if any(_is_call(n, name, imported) for n in inside for name in names):
                return True
        if any(_is_call(node, name, imported) for name in names):
            count += 1
    return count >= 2


def _false_or_none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value in (False, None)


# how an ``op:`` pattern's operator is written in code
OPERATORS = {"matmul": "`@`", "floordiv": "`//`", "is": "`is`", "isub": "`-=`"}
OPERATORS |= {"iadd": "`+=`", "imul": "`*=`", "idiv": "`/=`"}


def shown(pattern: str) -> str:
    """The pattern as a learner reads it, e.g. "`.detach()`"."""
    kind, _, name = pattern.partition(":")
    if kind == "attr":
        return f"`.{name}`"
    if kind in ("call", "many"):
        calls = " or ".join(
            f"`.{part}`" if part.endswith(")") else f"`.{part}()`" for part in name.split("|")
        )
        return calls + (" more than once" if kind == "many" else "")
    if kind == "op":
        return OPERATORS.get(name, f"the `{name}` operator")
    if kind == "loop":
        return "a Python loop"
    if kind == "named":
        return " or ".join(f"a {n} written into the code" for n in name.split("|"))
    if kind == "kw":
        calls, _, keyword = name.rpartition(".")
        if not calls:
            return f"`{keyword}=...`"
        return " or ".join(f"`{call}({keyword}=...)`" for call in calls.split("|"))
    return " or ".join(f"`with torch.{alternative}()`" for alternative in name.split("|"))


def used(pattern: str) -> str:
    """How the pattern reads after "Your code ", as the code holds it: "calls `cdist`",
    "uses `.data`", "has a `with` block on `no_grad`", "passes `retain_graph=` to `backward`"."""
    kind, _, name = pattern.partition(":")
    names = name.split("|")
    if kind in ("call", "many"):
        calls = " or ".join(
            f"`{n[:-2]}` with no arguments" if n.endswith("()") else f"`{n}`" for n in names
        )
        return f"calls {calls}" + (" more than once" if kind == "many" else "")
    if kind == "attr":
        return " or ".join(f"uses `.{n}`" for n in names)
    if kind == "with":
        return "has a `with` block on " + " or ".join(f"`{n}`" for n in names)
    if kind == "op":
        return f"uses {shown(pattern)}"
    if kind == "loop":
        return "uses a Python loop"
    if kind == "named":
        return "names " + " and ".join(f"a {n}" for n in names)
    if kind == "kw":
        calls, _, keyword = name.rpartition(".")
        target = " or ".join(f"`{c}`" for c in calls.split("|")) if calls else ""
        return f"passes `{keyword}=`" + (f" to {target}" if target else "")
    return f"uses {shown(pattern)}"


def parse(source: str) -> ast.AST | None:
    """``source`` as a tree (IPython magics and shell escapes dropped); None when it is no
    Python."""
    if not source.strip():
        return None
    try:
        return syntax_trees.build(source)
    except SyntaxError:
        try:
            kept = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
            return syntax_trees.build("\n".join(kept))
        except SyntaxError:
            return None
