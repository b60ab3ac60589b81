"""What an answer becomes before it is judged: a *submission* of plain records.

:func:`collect` runs where the answer lives (the learner's kernel). For a function exercise
it calls the learner's function on deep copies of the exercise's cases (seeded with
``CASE_SEED``) and records outputs, exceptions and whether an input was modified. While a
notebook is graded (``COURSE_GRADING_DIR`` names the grader's answer channel), every
submission is also sent to the grader as it is made (:func:`save_for_grader`).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from course_helpers.checking import diagnosis as dx
from course_helpers.checking.repairs import does_nothing as _does_nothing
from course_helpers.lessons.model import CASE_SEED, fresh_rng

GRADING_ENV = "COURSE_GRADING_DIR"  # while graded: the path of the answer channel


SUBMISSION_FORMAT = 1


def save_for_grader(exercise_id: str, submission: dict) -> None:
    """While graded (``COURSE_GRADING_DIR`` names the grader's answer channel), send this
    attempt to the grader at once. The grader keeps what arrives, in order: an attempt, once
    sent, cannot be taken back or rewritten by a later cell (``--first-attempt`` grades
    what the grader saw first)."""
    send_to_grader({"exercise_id": exercise_id, "submission": submission})


def note_hint_for_grader(exercise_id: str, tier: int) -> None:
    """While graded: tell the grader that hint ``tier`` of ``exercise_id`` was shown (0: the
    full solution was asked for). Reported as the kernel said it; it changes no score."""
    send_to_grader({"exercise_id": exercise_id, "hint": int(tier)})


CHANNEL_MAGIC = b"CGA3"  # starts every frame of the answer channel
MAX_FRAME_BYTES = 64 * 2**20  # one attempt, serialised; the grader refuses larger ones


def encode_frame(entry: dict) -> bytes:
    """One entry of the answer channel: magic, the 8-byte length of the rest, the exercise id
    (2-byte length, UTF-8), then ``torch.save`` of ``entry`` (an attempt that cannot be
    saved is sent as the reason; one that cannot be loaded keeps its id: only it is lost)."""
    import io

    import torch

    exercise_id = str(entry.get("exercise_id", ""))
    buffer = io.BytesIO()
    try:
        torch.save(entry, buffer)
    except Exception as err:
        buffer = io.BytesIO()
        reason = f"could not be saved ({type(err).__name__})"
        torch.save({"exercise_id": exercise_id, "unsaved": reason}, buffer)
    name = exercise_id.encode("utf-8", "backslashreplace")[:65535]
    rest = len(name).to_bytes(2, "big") + name + buffer.getvalue()
    return CHANNEL_MAGIC + len(rest).to_bytes(8, "big") + rest


def send_to_grader(entry: dict) -> None:
    """Write ``entry`` to the answer channel, a FIFO the grading worker reads as the kernel
    runs. Outside grading (no channel, or one that is not a FIFO) nothing happens."""
    import stat

    channel = os.environ.get(GRADING_ENV, "")
    if not channel:
        return
    try:
        handle = os.open(channel, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return  # nobody reads it: not being graded
    try:
        if not stat.S_ISFIFO(os.fstat(handle).st_mode):
            return
        os.set_blocking(handle, True)
        view = memoryview(encode_frame(entry))
        while view:
            view = view[os.write(handle, view) :]
    except OSError:
        pass
    finally:
        os.close(handle)


def frame_length(head: bytes) -> int | None:
    """The payload length a frame header (12 bytes) announces; None if it is no header."""
    if len(head) < 12 or head[:4] != CHANNEL_MAGIC:
        return None
    return int.from_bytes(head[4:12], "big")


def read_grader_log(data: bytes) -> tuple[list[tuple[str, Any]], dict[str, tuple[int, bool]]]:
    """The attempts, in order (``(exercise id, submission)``), and per exercise the highest
    hint tier shown and whether the solution was, from the frames the grading worker
    collected. An attempt that cannot be loaded safely comes back as a text saying why (only
    that attempt is lost). ``ValueError`` when the frames themselves are malformed."""
    import io

    attempts: list[tuple[str, Any]] = []
    hints: dict[str, tuple[int, bool]] = {}
    view, at = memoryview(data), 0
    while at < len(view):
        size = frame_length(bytes(view[at : at + 12]))
        if size is None or size > MAX_FRAME_BYTES or at + 12 + size > len(view) or size < 2:
            raise ValueError("a malformed frame")
        rest = bytes(view[at + 12 : at + 12 + size])
        at += 12 + size
        length = int.from_bytes(rest[:2], "big")
        exercise_id = rest[2 : 2 + length].decode("utf-8", "replace")
        try:
            entry = load_submission(io.BytesIO(rest[2 + length :]))
        except Exception as err:
            attempts.append((exercise_id, f"unreadable ({type(err).__name__})"))
            continue
        if not isinstance(entry, dict) or entry.get("exercise_id") != exercise_id:
            attempts.append((exercise_id, "unreadable (its id disagrees with its frame)"))
        elif "hint" in entry:
            tier = entry["hint"]
            if isinstance(tier, int) and not isinstance(tier, bool) and 0 <= tier <= 100:
                highest, solution = hints.get(exercise_id, (0, False))
                hints[exercise_id] = (max(highest, tier), solution or tier == 0)
        elif "submission" in entry:
            attempts.append((exercise_id, entry["submission"]))
        else:
            saved = entry.get("unsaved")
            attempts.append((exercise_id, saved if isinstance(saved, str) else "unreadable"))
    return attempts, hints


def submission_path(folder: str | os.PathLike, exercise_id: str) -> Path:
    """Where the grader finds the last submission for ``exercise_id``."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in exercise_id)
    return Path(folder) / f"{safe}.pt"


def load_submission(path: str | os.PathLike) -> dict:
    """Read a submission safely (``weights_only=True``: no code runs while loading)."""
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)


def collect(exercise, answer: Any) -> dict:
    """Turn ``answer`` into a serialisable submission for ``exercise`` (runs in the kernel)."""
    from course_helpers.checking.left_behind import notebook_state
    from course_helpers.lessons.model import known_state

    submission = {
        "format": SUBMISSION_FORMAT,
        "exercise_id": exercise.id,
    }
    state = notebook_state(exercise)  # what the notebook's cells left switched, read first
    if state is not None:
        submission["notebook"] = state
    with known_state():  # the checker's own calls run as in a fresh kernel
        _collect_answer(exercise, answer, submission)
    return submission


def _collect_answer(exercise, answer: Any, submission: dict) -> None:
    if exercise.kind == "function" and callable(answer):
        submission["answer"] = _run_function(exercise, answer)
    else:
        submission["answer"] = dx.describe(answer)
    if dx.is_record(answer):  # a hand-made record is not an answer (the grader rejects it)
        submission["learner_record"] = True
    from course_helpers.checking.evidence import read_code

    code = read_code(exercise, answer)  # what feedback may say the code did (never raises)
    if code is not None:
        submission["code"] = code
    from course_helpers.checking import method_checks

    if method_checks.wants_inspection(exercise):
        try:  # what the learner's code uses; "not checked" on trouble
            submission["method"] = method_checks.inspect_answer(exercise, answer)
        except Exception:
            submission["method"] = method_checks.not_checked()


def _run_function(exercise, function) -> dict:
    from course_helpers.checking.repairs import unanswered
    from course_helpers.environment.notebook import cpu_generator

    name = getattr(function, "__name__", type(function).__name__)
    if unanswered(function):  # a script's version kept by @repair: not answered, not run
        function = _stub

    runs = []
    for args in fresh_rng(lambda: exercise.cases(cpu_generator(CASE_SEED))):
        # the cases are built afresh on every call: the function gets them, ``before`` is the
        # one copy kept to see what it changed
        given = tuple(args)
        run = call_and_record(function, given)
        runs.append(run)
    return {"_r": "function_run", "name": name, "runs": runs, "stub": _is_untouched_stub(function)}


def call_and_record(function, given: tuple) -> dict:
    """Call ``function(*given)``: its output or error, what it changed, the tensors after,
    and the state it left behind (``checking.left_behind``; put back after the call)."""
    from course_helpers.checking import left_behind

    before = copy.deepcopy(given)
    run = {"output": None, "error": None, "mutated": [], "args_after": []}
    state = left_behind.snapshot(function)
    try:
        run["output"] = dx.describe(function(*given))
    except (Exception, SystemExit) as err:  # sys.exit() in a learner's function: an error too
        run["error"] = {"type": type(err).__name__, "message": _first_line(str(err))}
    finally:
        run["left_behind"] = left_behind.restore(state)
    run["mutated"] = [_mutation(b, a) for b, a in zip(before, given, strict=True)]
    run["args_after"] = [dx.describe(a) if is_tensor(a) else None for a in given]
    return run


def _stub(*args):
    """What an unanswered ``@repair`` stub counts as: a function that does nothing."""


def _is_untouched_stub(function) -> bool:
    """True for a function whose body is still only ``...`` (a docstring may stay), or that
    calls such a function defined next to it (a probe around a stub, as in 11.evaluate)."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    if _does_nothing(code):
        return True
    return any(_does_nothing(getattr(f, "__code__", None)) for f in _globals_used(function))


def _globals_used(function) -> list:
    """The global objects a function's code names (those defined next to it)."""
    code = getattr(function, "__code__", None)
    names = getattr(function, "__globals__", None)
    if code is None or not isinstance(names, dict):
        return []
    return [names[name] for name in code.co_names if name in names]


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _mutation(before: Any, after: Any) -> str:
    """What the function changed in an input ("" for nothing): "values", "requires_grad"
    or "training" (a module's mode). Looks inside lists, tuples, dicts, modules (their
    parameters and buffers) and optimizers (their state)."""
    import torch

    if isinstance(before, torch.nn.Module) and isinstance(after, torch.nn.Module):
        modes = _training_change(before, after)
        if modes:
            return modes
        return _mutation(before.state_dict(keep_vars=True), after.state_dict(keep_vars=True))
    if isinstance(before, torch.optim.Optimizer) and isinstance(after, torch.optim.Optimizer):
        return _mutation(before.state_dict(), after.state_dict())
    if isinstance(before, dict) and isinstance(after, dict):
        if list(before) != list(after):
            return "values"
        return _first_change(list(before.values()), list(after.values()))
    if isinstance(before, (list, tuple)) and isinstance(after, (list, tuple)):
        if type(before) is not type(after) or len(before) != len(after):
            return "values"
        return _first_change(before, after)
    if isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor):
        if before.shape != after.shape or before.dtype != after.dtype:
            return "values"
        if before.device != after.device or before.stride() != after.stride():
            return "values"
        if before.device.type != "meta":  # meta tensors have no values to compare
            if not bool(dx.close_mask(after.detach().cpu(), before.detach().cpu()).all()):
                return "values"
        if before.requires_grad != after.requires_grad:
            return "requires_grad"
        return ""
    if isinstance(before, torch.Tensor) or isinstance(after, torch.Tensor):
        return "values"  # a tensor replaced by something else, or the other way round
    plain = (bool, int, float, complex, str, type(None))
    if isinstance(before, plain) and isinstance(after, plain):
        return "values" if before != after and before == before else ""  # nan == nan here
    return ""  # other objects (a deep copy is never `==` the original): nothing to say


def _training_change(before, after) -> str:
    """ "training" when the module's own mode changed; "training:NAME (Type)" when only a
    submodule's did (e.g. ``model.training = was`` leaves its Dropout in eval mode); ""."""
    if before.training != after.training:
        return "training"
    was = dict(before.named_modules())
    flipped = [
        (name, type(module).__name__)
        for name, module in after.named_modules()
        if name and name in was and was[name].training != module.training
    ]
    if not flipped:
        return ""
    # name one whose behaviour depends on the mode (dropout, batch norm) when there is one
    modal = [f for f in flipped if "Dropout" in f[1] or "Norm" in f[1]]
    name, kind = (modal or flipped)[0]
    return f"training:{name} ({kind})"


def _first_change(before, after) -> str:
    for b, a in zip(before, after, strict=True):
        change = _mutation(b, a)
        if change:
            return change
    return ""
