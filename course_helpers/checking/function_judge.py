"""The judge for ``function`` exercises: the learner's recorded runs on the exercise's
cases, compared run by run with the reference function's (outputs, errors, changed inputs)."""

from __future__ import annotations

import copy
import dataclasses

from course_helpers.checking import diagnosis as dx
from course_helpers.checking.autograd_judge import task_context
from course_helpers.checking.submissions import CASE_SEED, call_and_record, is_tensor
from course_helpers.lessons.model import fresh_rng


def judge_function(exercise, answer) -> dx.Diagnosis:
    if dx.kind_of(answer) != "function_run":
        return dx.failed(
            f"Your answer is {dx.python_type_name(answer)}, but this exercise checks your "
            "function itself: pass the function without calling it, e.g. check(ID, my_function)."
        )
    from course_helpers.environment.notebook import cpu_generator

    made = fresh_rng(lambda: exercise.cases(cpu_generator(CASE_SEED)))
    cases = [tuple(args) for args in made]
    runs = answer["runs"]
    if len(runs) != len(cases):
        return dx.Diagnosis("error", "The submission does not match this exercise's test inputs.")
    reference = exercise.reference
    expected_runs = reference_runs(exercise, cases)
    names = _parameter_names(reference)
    all_none = all(
        run["error"] is None and dx.kind_of(run["output"]) == "none" and not any(run["mutated"])
        for run in runs
    )
    reference_acts = exercise.mutates_input or any(
        dx.kind_of(r["output"]) != "none" for r in expected_runs
    )
    if all_none and reference_acts:
        # only the untouched stub is "not attempted" (a submission without "stub" is older)
        if answer.get("stub", True):
            return dx.not_attempted(
                "Not attempted yet: your function does nothing yet (it returns None and changes "
                "nothing). Write its body in place of the `...`."
            )
        if exercise.mutates_input:
            return dx.failed(
                "Your function changes nothing for every input: it should modify its input in "
                "place (e.g. x.mul_(...), x[...] = ...)."
            )
        return dx.failed("Your function returns None for every input: did you forget `return`?")
    if all(r["error"] is None and dx.kind_of(r["output"]) == "ellipsis" for r in runs):
        # a probe around a stub says so by returning `...` (lesson 12's normalize_probe)
        return dx.not_attempted("Not attempted yet: write the function's body first.")
    if all(r["error"] and r["error"]["type"] == "NotImplementedError" for r in runs):
        return dx.not_attempted("Not attempted yet: your function raises NotImplementedError.")
    for number, (args, run, wanted) in enumerate(
        zip(cases, runs, expected_runs, strict=True), start=1
    ):
        where = f"For input {number} of {len(cases)} ({_describe_args(args, names)})"
        verdict = _judge_run(exercise, args, run, wanted, where)
        if not verdict.passed:
            return verdict
    return dx.passed(f"Correct on all {len(cases)} test inputs, edge cases included.")


_reference_cache: dict[tuple, list[dict]] = {}


def reference_runs(exercise, cases: list[tuple]) -> list[dict]:
    """The reference's records on the cases; computed once per exercise and process
    (the cases come from a fixed seed, so they are the same every time)."""
    key = (exercise.id, exercise.build_reference, exercise.cases)
    if key not in _reference_cache:
        reference = exercise.reference
        _reference_cache[key] = [_reference_run(reference, args) for args in cases]
    return _reference_cache[key]


def _reference_run(reference, args: tuple) -> dict:
    return call_and_record(reference, copy.deepcopy(args))  # ``args`` stay as they were


def _judge_run(exercise, args: tuple, run: dict, wanted: dict, where: str) -> dx.Diagnosis:
    error = run["error"]
    if wanted["error"] is not None:
        if error is not None and error["type"] == wanted["error"]["type"]:
            return dx.passed()
        return dx.failed(
            f"{where}: your function should raise {wanted['error']['type']}, "
            + ("but it returned normally." if error is None else f"but it raised {error['type']}.")
        )
    if error is not None:
        return dx.Diagnosis(
            "error",
            f"{where}, your function raised {error['type']}: {error['message']}",
            learner_error=True,
        )
    if exercise.mutates_input:
        for i, (mine, theirs) in enumerate(
            zip(run["args_after"], wanted["args_after"], strict=True)
        ):
            if theirs is None:
                continue
            verdict = dx.diagnose_tensor(
                mine,
                theirs,
                rtol=exercise.rtol,
                atol=exercise.atol,
                subject=f"argument {i} after your function ran",
            )
            if not verdict.passed:
                return _at(where, verdict)
    else:
        # a change the reference makes too (e.g. training a model) is part of the task
        allowed = wanted["mutated"]
        for i, changed in enumerate(run["mutated"]):
            if changed == allowed[i]:
                continue
            if changed == "training":
                return dx.failed(
                    f"{where}: your function switched its input argument {i} (a module) between "
                    "training and evaluation mode and left it there. Put it back as it was, "
                    "e.g. was_training = model.training ... model.train(was_training)."
                )
            if changed.startswith("training:"):
                return dx.failed(_submodule_mode(where, i, changed.removeprefix("training:")))
            if changed == "requires_grad":
                return dx.failed(
                    f"{where}: your function changed its input argument {i}'s requires_grad "
                    "(e.g. x.requires_grad_()). Leave the input as it is; if you need a tensor "
                    "that tracks gradients, make a new one, e.g. x.detach().requires_grad_()."
                )
            if changed:
                return dx.failed(
                    f"{where}: your function changed its input argument {i} in place (e.g. "
                    "x += 1, x.add_(...), x[...] = ...). Work on a copy or use out-of-place "
                    "operations such as x = x + 1."
                )
    left = [x for x in run.get("left_behind") or [] if x not in wanted.get("left_behind", [])]
    if left:
        return dx.failed(f"{where}: {left_behind_text(left[0])}")
    if dx.kind_of(wanted["output"]) == "none":
        return dx.passed()  # an in-place function: its return value is not checked
    inputs = tuple(a for a in run["args_after"] if a is not None)
    verdict = dx.diagnose(
        run["output"],
        wanted["output"],
        rtol=exercise.rtol,
        atol=exercise.atol,
        inputs=inputs,
        subject="Your function's output",
        in_function=True,
        context=task_context(exercise),
    )
    if verdict.status == "not_attempted":
        return dx.failed(f"{where}: your function returned None; did you forget `return`?")
    if verdict.passed:
        return verdict
    return _at(where, verdict)


def _at(where: str, verdict: dx.Diagnosis) -> dx.Diagnosis:
    """``verdict`` about one test input: its message after ``where``, the rest kept (the
    question the first hint asks, the generic advice)."""
    return dataclasses.replace(verdict, message=f"{where}: {_lower_first(verdict.message)}")


def _submodule_mode(where: str, i: int, which: str) -> str:
    name, _, kind = which.partition(" ")
    return (
        f"{where}: your function left the submodule `{name}` {kind} of its input argument {i} "
        "in another mode than it found it, while the module's own `.training` flag is back "
        "as it was. Assigning `model.training = ...` changes only the module's own flag; "
        "`model.train(was_training)` (or `model.eval()`) sets every submodule's, so restore "
        "the mode with `model.train(was_training)`."
    )


_LEFT_BEHIND = {
    "grad_mode_off": (
        "after your function returned, gradient recording was still off: "
        "`torch.set_grad_enabled(False)` outside a `with` block stays in force for the rest of "
        "the notebook, so every later cell silently records no graph. Use a block, "
        "`with torch.no_grad():` (or the decorator `@torch.no_grad()`), which switches recording "
        "back on when it ends. (The check switched it back on.)"
    ),
    "grad_mode_on": (
        "your function switched gradient recording on and left it on, although it was off "
        "when the function was called. Use `with torch.enable_grad():` for the part that needs "
        "it. (The check switched it back off.)"
    ),
    "anomaly_on": (
        "your function switched anomaly detection on and left it on for the rest of the "
        "notebook, which slows every later backward() down. Use it as a block, "
        "`with torch.autograd.detect_anomaly():`. (The check switched it back off.)"
    ),
    "anomaly_off": (
        "your function switched anomaly detection off and left it off. (The check switched it "
        "back on.)"
    ),
}


def left_behind_text(code: str) -> str:
    """What a ``left_behind`` code of a run (``checking.left_behind``) means, as a sentence."""
    if code in _LEFT_BEHIND:
        return _LEFT_BEHIND[code]
    kind, _, name = code.partition(":")
    if kind == "default_dtype":
        return (
            f"your function changed the default dtype to torch.{name} "
            "(`torch.set_default_dtype`), which changes every tensor the rest of the notebook "
            "creates. Give the dtype to the tensors that need it instead. (The check put the "
            "default back.)"
        )
    if kind == "global":
        return (
            f"your function rebinds the notebook's global name `{name}` (a `global` statement), "
            "so calling it changes what later cells see. Return the value instead of storing it "
            "in a global. (The check put the old value back.)"
        )
    return (
        f"your function changed the notebook's tensor `{name}` in place, so calling it changes "
        "what later cells see. Work on a new tensor instead (e.g. `t = t.to(...)` inside the "
        "function). (The check put its values back.)"
    )


def _few_numbers(value) -> bool:
    """A list or tuple of at most 6 plain Python numbers."""
    return (
        isinstance(value, (list, tuple))
        and len(value) <= 6
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    )


def _lower_first(text: str) -> str:
    if text.startswith(("Your ", "Item ", "Every ", "The value for key ")):
        return text[0].lower() + text[1:]
    return text


def _parameter_names(function) -> list[str]:
    import inspect

    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def _describe_args(args: tuple, names: list[str]) -> str:
    parts = []
    for i, value in enumerate(args):
        label = names[i] if i < len(names) else f"argument {i}"
        if is_tensor(value):
            dtype = dx.dtype_name(value.dtype)
            where = " on meta" if value.device.type == "meta" else ""  # never cpu/cuda: stable
            parts.append(f"{label}: shape {dx.fmt_shape(value.shape)} {dtype}{where}")
        elif isinstance(value, (bool, int, float, str)) or value is None:
            parts.append(f"{label}={value!r}")
        elif _few_numbers(value):  # a short list says more than "list": [1.0, 1e+300, inf]
            parts.append(f"{label}={value!r}")
        else:
            parts.append(f"{label}: {type(value).__name__}")
    return ", ".join(parts) if parts else "no arguments"
