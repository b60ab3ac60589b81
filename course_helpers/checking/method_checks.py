"""Method checks: does the learner's code use the method the task prescribes?

An exercise declares what it forbids or requires (``Exercise.forbid`` / ``Exercise.require``,
patterns of ``checking.code_patterns`` such as ``"attr:data"``, ``"call:detach"``,
``"with:no_grad"``, ``"loop:python"``, ``"many:backward"``), whether it must build no autograd
graph (``Exercise.must_build_no_graph``) and how often a function must call a torch function
(``Exercise.min_calls``, e.g. one ``backward()`` per micro-batch).

:func:`inspect_answer` runs in the learner's kernel (called by ``collect``). It reads the code
(``checking.answer_code``): a forbidden pattern in the check's cell or the checked function
(with the notebook functions it calls); a required one in every cell run for the exercise, or
in that function. A function is called once more on the exercise's cases while torch calls
are counted (operations that record a ``grad_fn``; ``backward``, ``grad``, ...). The result
is a plain record (strings, ints, bools) that travels in the submission, so the grader judges
the same findings outside the kernel (gradient mode left off by a cell is read by
``checking.left_behind.notebook_state``, for every exercise). Outside IPython a cell cannot
be read: the record then says "not checked" and nothing fails for it.
"""

from __future__ import annotations

from typing import Any

from course_helpers.checking.code_patterns import KINDS, parse, shown, used, uses, valid_pattern

__all__ = ["KINDS", "WHY", "inspect_answer", "not_checked", "uses", "valid_pattern", "verdict_note"]

# pattern -> why it is not the course's way (shown to the learner)
WHY = {
    "attr:data": (
        "`.data` changes values behind autograd's back (no error, silently wrong gradients): "
        "the course uses `with torch.no_grad():` instead."
    ),
    "call:detach": (
        "`.detach()` after the forward pass still records the whole graph first and only cuts "
        "it off at the end: compute under `with torch.no_grad():` so nothing is recorded."
    ),
    "call:squeeze()": (
        "`.squeeze()` with no dim removes every size-1 dim, including one a batch of one "
        "example needs: name the dim, e.g. `.squeeze(1)`."
    ),
    "with:no_grad": "the task asks for a `with torch.no_grad():` block, and your code has none.",
    "with:no_grad|inference_mode": (
        "the task asks for a block that records no graph, `with torch.no_grad():` (or "
        "`with torch.inference_mode():`), and your code has none."
    ),
    "call:register_hook": (
        "the task asks you to halve the gradient with a hook on u (`u.register_hook(...)`, "
        "registered before backward()): a changed formula gives the same number here, but "
        "it is not the technique the exercise practises."
    ),
    "call:grad": (
        "the task asks for the derivatives from `torch.autograd.grad` (with "
        "create_graph=True), and your code has no `torch.autograd.grad` call."
    ),
    "call:backward": (
        "the task asks you to call `.backward()` on the second derivative, so that autograd "
        "itself fills x.grad."
    ),
    "call:backward|grad": (
        "the task asks for the gradient from autograd (`loss.backward()` or "
        "`torch.autograd.grad`), not from a formula typed by hand."
    ),
    "call:isfinite": (
        "the task asks for `torch.isfinite` on a float64 tensor of the losses, so that "
        "`inf`, `-inf` and `nan` are all found in one vectorised test."
    ),
    "call:barrier|monitored_barrier": (
        "the task asks that no rank reads the file before it is complete: a "
        "`dist.barrier()` (or `dist.monitored_barrier()`) between rank 0's save and the loads "
        "makes the others wait. Without it the run can pass by luck, as here, and fail on "
        "another machine."
    ),
    "call:all_reduce": (
        "the task asks the ranks to add up their loss sums and sample counts with "
        "`dist.all_reduce`, and your code has no `all_reduce` call: each rank must end with "
        "the same exact mean, computed from what every rank holds."
    ),
    # integer matrix products: the CPU has them, CUDA does not (torch 2.x)
    **dict.fromkeys(
        ("op:matmul", "call:matmul", "call:mm"),
        "the task asks for a column and a row combined by broadcasting (`*`), not for a "
        "matrix product. On integer tensors a matrix product runs on the CPU only: PyTorch has "
        "no CUDA kernel for it (`\"addmm_cuda\" not implemented for 'Long'`), so this cell "
        "would stop on a GPU. `*` with broadcasting builds the table on every device.",
    ),
    "loop:python": (
        "the task asks for tensor operations on whole tensors, no Python loop: a `for`, a "
        "comprehension or a Python function applied per element (`.apply_`, `map`) runs "
        "element by element in Python, far slower on large tensors, and not at all on a GPU "
        "tensor (`.apply_` is CPU-only)."
    ),
    **dict.fromkeys(
        ("call:backward|grad|jacobian|hessian|vjp|jvp", "attr:grad"),
        "the task asks for the derivatives worked out by hand, and this cell asks autograd "
        "for them. Type your own numbers (or their arithmetic) here; the cell after the "
        "check compares them with autograd's.",
    ),
    "many:backward": (
        "the task asks for one `backward()` call per loss, without adding the losses: two "
        "calls whose gradients add up in `.grad`, and the code read has fewer than two."
    ),
    "kw:backward|grad.retain_graph": (
        "the task asks for no `retain_graph`: keeping a graph alive for a second backward "
        "pass is what the exercise replaces (build one loss, or a fresh graph each step)."
    ),
    "kw:backward.create_graph": (
        "the task asks for one plain `backward()` on the total: `backward(create_graph=True)` "
        "leaves a graph in `w.grad` (the lesson's leak). Get the inner gradient from "
        "`torch.autograd.grad(..., create_graph=True)` instead."
    ),
    "many:backward|grad": (
        "the task asks for a single backward pass through the graph: add the losses and call "
        "`backward()` once on the sum, so the graph is walked once."
    ),
    "many:grad": (
        "the task asks for `torch.autograd.grad` twice (the first with `create_graph=True`), "
        "so that the second derivative comes from autograd; your code calls it once."
    ),  # shown only when the code calls it at all (else "call:grad" says so)
    "call:cdist": (
        "the task asks for the differences built with broadcasting "
        "(`a[:, None, :] - b[None, :, :]`); `torch.cdist` computes the distances for you."
    ),
    "call:step": (
        "the task asks for the update written by hand, `w -= lr * w.grad` under "
        "`torch.no_grad()`; an optimizer's `step()` does it for you."
    ),
    "named:device|dtype": (
        "the task asks you to read the device and the dtype from reference (`.to(reference)`, "
        "or `reference.device` and `reference.dtype`): one written into the code is right on "
        "one machine, or for one input, only."
    ),
    "call:outer|einsum|kron|ger": (
        "the task asks for a column and a row combined by broadcasting (`*`): this function "
        "builds the table for you, so the broadcasting the exercise practises never happens."
    ),
    "call:load_state_dict": (
        "the task asks you to resume from the checkpoint: save the model's and the optimizer's "
        "state with `torch.save`, then load both into a fresh model and optimizer with "
        "`load_state_dict`, as a new process would. Eight steps without a stop give the same "
        "numbers here, but they resume nothing."
    ),
    "many:DistributedSampler": (
        "the task asks for the same sampler and loader with only the bug fixed: a new "
        "DistributedSampler made for each epoch hides the bug instead of fixing it. Tell the one "
        "sampler the epoch, `sampler.set_epoch(epoch)`, before each epoch."
    ),
    "call:arange": (
        "the task asks you to make the numbers with `torch.arange`: numbers typed by hand "
        "give the same grid here but do not scale to a grid of a thousand."
    ),
}


def wants_inspection(exercise) -> bool:
    return bool(
        getattr(exercise, "forbid", ())
        or getattr(exercise, "require", ())
        or getattr(exercise, "must_build_no_graph", False)
        or getattr(exercise, "keep_lines", "")
        or getattr(exercise, "reach_parameters", False)
        or getattr(exercise, "check_leaf_grads", False)
        or getattr(exercise, "check_step_order", False)
        or getattr(exercise, "min_calls", None)
        or getattr(exercise, "rank_rows", 0)
        or getattr(exercise, "rank_value", "")
    )


def not_checked() -> dict:
    """The record of an answer whose code was not (or could not be) read."""
    return {"checked": False, "where": "", "found": [], "missing": [], "graph_ops": None}


def inspect_answer(exercise, answer: Any) -> dict:
    """The record ``collect`` stores under ``submission["method"]``."""
    from course_helpers.checking import answer_code, left_behind

    switches = left_behind.snapshot(None)  # the probes below must not change the kernel
    try:
        return _inspect(exercise, answer, answer_code)
    finally:
        left_behind.restore(switches)


def _inspect(exercise, answer, answer_code) -> dict:
    record = not_checked()
    is_function = exercise.kind == "function" and callable(answer)
    if is_function:
        own = [t for t in map(parse, answer_code.function_sources(answer)) if t is not None]
        everything, where = own, "function source"
    else:
        cell = parse(answer_code.check_cell())
        own = [cell] if cell is not None else []
        everything = [t for t in map(parse, answer_code.cells_run(exercise.id)) if t is not None]
        where = "answer cell" if len(everything) <= 1 else f"answer cells ({len(everything)})"
    patterns = tuple(exercise.forbid) + tuple(exercise.require)
    if patterns and own:
        found = set().union(*(uses(tree, exercise.forbid) for tree in own))
        present = _used_together(everything, exercise.require)
        record.update(
            checked=True,
            where=where,
            found=[p for p in exercise.forbid if p in found],
            missing=[p for p in exercise.require if p not in present],
        )
        # which alternatives of a found "a|b" pattern the code holds (named, not the others)
        found_as = {
            pattern: [
                single
                for single in _alternatives(pattern)
                if any(single in uses(tree, [single]) for tree in own)
            ]
            for pattern in record["found"]
            if "|" in pattern
        }
        if found_as:
            record["found_as"] = found_as
    if exercise.kind == "function" and callable(answer) and _wants_probe(exercise):
        record.update(probe_calls(exercise, answer))
    if getattr(exercise, "keep_lines", "") and own and not is_function:
        from course_helpers.checking.task_checks import compare_lines

        record.update(checked=True, where=where)
        record.update(compare_lines(exercise.keep_lines, own[0], everything))
    if getattr(exercise, "check_step_order", False) and own:
        from course_helpers.checking.task_checks import step_order

        record.update(checked=True, where=where, step_order=step_order(own[0]))
    if getattr(exercise, "check_leaf_grads", False):
        from course_helpers.checking.task_checks import leaf_grads

        record["leaf_grads"] = leaf_grads(answer)
    if getattr(exercise, "rank_rows", 0) or getattr(exercise, "rank_value", ""):
        from course_helpers.environment.two_ranks import LAST_RUN, execution_count

        # counted only for a run of this very cell: an earlier run may be another function's
        here = LAST_RUN.get("rows") and LAST_RUN.get("cell") == execution_count()
        record["rank_rows"] = sum(LAST_RUN["rows"]) if here else None
        record["rank_values"] = list(LAST_RUN.get("values") or []) if here else None
    if getattr(exercise, "reach_parameters", False) and callable(answer):
        from course_helpers.checking.task_checks import cut_off_parameters

        record["cut_off"] = cut_off_parameters(exercise, answer)
    return record


def _source_of(exercise, answer) -> tuple[str, str]:
    """(code, where): a checked function's own source ("function source"), else the check's
    cell ("answer cell"); ("", "") when neither can be read. Kept for readers that want the
    answer's own code (``checking.evidence``)."""
    from course_helpers.checking import answer_code

    if exercise.kind == "function" and callable(answer):
        sources = answer_code.function_sources(answer, depth=0)
        return (sources[0], "function source") if sources else ("", "")
    return answer_code.check_cell(), "answer cell"


_parse = parse  # the name other checking modules import


def _alternatives(pattern: str) -> list[str]:
    """ "call:a|b" -> ["call:a", "call:b"]; "kw:a|b.k" -> ["kw:a.k", "kw:b.k"]."""
    kind, _, name = pattern.partition(":")
    if kind == "kw":
        calls, dot, keyword = name.rpartition(".")
        return [f"kw:{call}.{keyword}" for call in calls.split("|")] if dot else [pattern]
    return [f"{kind}:{alternative}" for alternative in name.split("|")]


def _used_together(trees: list, patterns) -> set[str]:
    """The patterns the trees use, read as one program (a call made twice over two cells
    counts as two calls)."""
    import ast

    if not trees:
        return set()
    return uses(ast.Module(body=[n for t in trees for n in t.body], type_ignores=[]), patterns)


def _wants_probe(exercise) -> bool:
    return bool(exercise.must_build_no_graph or getattr(exercise, "min_calls", None))


def verdict_note(exercise, record: Any, values_right: bool = True) -> str:
    """What the method record says is wrong ("" when nothing is, or nothing was checked).
    A required method that is missing is named only when the values are right: for a wrong
    value it is not the first thing to fix (and "gives the same result" would be untrue)."""
    if not isinstance(record, dict):
        return ""
    notes = []
    said: dict[str, list[str]] = {}  # why -> what the code uses (one note per reason)
    parts = record.get("found_as") or {}
    for pattern in list(record.get("found", []) or []):
        if pattern in exercise.forbid:
            why = WHY.get(pattern, "the task forbids it.")
            said.setdefault(why, []).extend(used(p) for p in parts.get(pattern) or [pattern])
    for why, what in said.items():
        notes.append(f"Your code {' and '.join(dict.fromkeys(what))}: {why}")
    missing = list(record.get("missing", []) or [])
    for pattern in missing if values_right else []:
        kind, _, name = pattern.partition(":")
        if kind == "many" and f"call:{name}" in missing:
            continue  # not called at all: "call:NAME" says so, "once" would be untrue
        if pattern in exercise.require:
            text = WHY.get(pattern, f"the task asks for {shown(pattern)}.")
            notes.append(text[:1].upper() + text[1:])
    from course_helpers.checking.task_checks import call_notes, line_notes, wrong_leaf_grads

    if getattr(exercise, "check_leaf_grads", False):
        record = {
            **record,
            "wrong_leaf_grads": wrong_leaf_grads(record.get("leaf_grads"), exercise.reference),
        }
    if values_right:  # a step-order finding explains wrong values only
        record = {**record, "step_order": ""}
    notes.extend(line_notes(record))
    if values_right:  # too few calls: the route, named once the values are right
        notes.extend(call_notes(exercise, record))
    rows, wanted = record.get("rank_rows"), getattr(exercise, "rank_rows", 0)
    if values_right and wanted and isinstance(rows, int) and rows != wanted:
        notes.append(
            f"Your ranks gave their model {rows} rows in all, for {wanted} samples: the task "
            "asks that every sample is evaluated by exactly one rank. "
            + ("Some were evaluated twice" if rows > wanted else "Some were never evaluated")
            + " (the mean can still come out right when every rank evaluates the same rows)."
        )
    kinds, wanted_kind = record.get("rank_values"), getattr(exercise, "rank_value", "")
    if values_right and wanted_kind and isinstance(kinds, list):
        other = sorted({k for k in kinds if k != wanted_kind})
        if other:
            notes.append(
                f"Your function returns a {' and a '.join(other)} on each rank where the task "
                "asks for a Python number: take it out of its tensor with `.item()` (here "
                "the check turns both into the same values, but a number is what the task's "
                "callers print and compare)."
            )
    ops = record.get("graph_ops")
    if exercise.must_build_no_graph and isinstance(ops, int) and ops > 0:
        notes.append(
            f"Your function recorded {ops} operation{'s' * (ops != 1)} in an autograd graph: "
            "this task must build no graph at all (returning a detached result is not enough). "
            "Put the computation under `with torch.no_grad():`."
        )
    return "\n".join(notes)


def probe_calls(exercise, function) -> dict:
    """Call ``function`` once more on the exercise's cases while counting torch calls: the
    operations that record a ``grad_fn`` (``graph_ops``, when the task must build no graph)
    and, per case, the calls ``Exercise.min_calls`` names (``calls``). Empty on trouble."""
    import torch
    from torch.overrides import TorchFunctionMode

    from course_helpers.checking.answer_code import written_by_learner
    from course_helpers.environment.notebook import cpu_generator
    from course_helpers.lessons.model import CASE_SEED, fresh_rng

    # the course's own reference functions compute with formulas: their calls are not counted
    counted = _counted_names(exercise) if written_by_learner(function) else set()

    class Count(TorchFunctionMode):
        ops = 0
        calls: dict = {}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name in counted:
                Count.calls[name] = Count.calls.get(name, 0) + 1
            out = func(*args, **(kwargs or {}))
            outs = out if isinstance(out, (tuple, list)) else (out,)
            if any(isinstance(o, torch.Tensor) and o.grad_fn is not None for o in outs):
                Count.ops += 1
            return out

    per_case = []
    try:
        cases = fresh_rng(lambda: exercise.cases(cpu_generator(CASE_SEED)))
        grad_mode = torch.is_grad_enabled()
        with Count():
            for args in cases:
                Count.calls = {}
                try:
                    function(*args)
                except Exception:
                    pass  # its error is judged from the ordinary run
                finally:
                    torch.set_grad_enabled(grad_mode)  # a function may leave it off
                per_case.append(dict(Count.calls))
    except Exception:
        return {"graph_ops": None}
    record: dict = {"graph_ops": Count.ops if exercise.must_build_no_graph else None}
    if counted:
        record["calls"] = per_case
    return record


def _counted_names(exercise) -> set[str]:
    """The torch functions whose calls ``Exercise.min_calls`` counts."""
    names: set[str] = set()
    for key in getattr(exercise, "min_calls", None) or {}:
        names.update(key.split("|"))
    return names


def count_graph_ops(exercise, function) -> int | None:
    """How many torch operations inside ``function`` made a result with a ``grad_fn``,
    over all the exercise's cases (None when the probe could not run)."""
    return probe_calls(exercise, function).get("graph_ops")
