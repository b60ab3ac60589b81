"""What an exercise is: the data the checker, the hints and the grader read.

Each lesson's exercises live in ``course_helpers/lessons/lessonNN/exercises.py`` as a
module-level list ``EXERCISES``; its typical wrong answers (``Misconception``) sit beside
them in ``misconceptions.py``, as a list ``MISCONCEPTIONS``. References are *callables* so
that importing
the catalog stays cheap: ``Exercise.reference`` builds the value on first use.

Kinds
-----
value     the answer is a tensor (or Python number/bool) compared with ``reference``.
function  the answer is a learner-written function; it is called on ``cases(gen)``
          (seeded random inputs plus edge cases) and compared with ``reference``.
autograd  the answer is a tensor whose autograd state is checked: ``.grad`` after
          backward, ``requires_grad``, ``is_leaf``, ``grad_fn`` name, ``_version``, the
          values themselves (the attributes named in ``attributes``: "grad",
          "requires_grad", "is_leaf", "grad_fn", "version", "value"), against the
          reference tensor.
choice    multiple choice / "predict the output": the answer is one of ``options``'
          keys (or, for ``options=None``, a free value such as a shape tuple, a dtype
          or a number compared with ``reference``).
error     "which error does this raise": the answer is the exception class itself
          (e.g. ``RuntimeError``), or ``None`` for "no error" (then ``reference`` is None).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

KINDS = ("value", "function", "autograd", "choice", "error")
# function exercises: cases(cpu_generator(CASE_SEED)), the same in the kernel and the grader
CASE_SEED = 0
# forbid/require patterns (checking.code_patterns reads them)
PATTERN_KINDS = ("attr", "call", "with", "op", "loop", "many", "kw", "named")
# autograd exercises: what ``attributes`` may name (``version`` is ``tensor._version``,
# ``value`` the tensor's own values)
AUTOGRAD_ATTRIBUTES = ("requires_grad", "is_leaf", "grad_fn", "version", "value", "grad")


@dataclass(frozen=True)
class Exercise:
    """One checked exercise.

    id          "NN.slug", e.g. "01.arange_grid" (NN = lesson number).
    title       short human title shown in feedback and progress tables.
    lesson      lesson notebook stem, e.g. "01_tensors".
    kind        one of KINDS.
    build_reference  zero-argument callable returning the reference answer
                (value/autograd: the expected tensor; function: the reference
                function itself; choice: the correct option key or value; error:
                the exception class, or None for code that raises no error).
    hints       tiered hints: (nudge, stronger, near-solution). At least 2.
    solution    the full solution as text (shown only when explicitly asked).
    """

    id: str
    title: str
    lesson: str
    kind: str
    build_reference: Callable[[], Any]
    hints: tuple[str, ...]
    solution: str
    # value / function / autograd: tolerances; None = torch.testing.assert_close defaults per dtype
    rtol: float | None = None
    atol: float | None = None
    # function: given a seeded CPU torch.Generator, return a list of argument tuples
    # (random inputs first, then edge cases such as size-1 and empty dims).
    cases: Callable[[Any], Sequence[tuple]] | None = None
    # function: True when the learner's function is *meant* to modify its input in place
    mutates_input: bool = False
    # autograd: attributes to compare, any of AUTOGRAD_ATTRIBUTES
    attributes: tuple[str, ...] = ("grad",)
    # choice: option key -> text shown to the learner (None for free-form predictions)
    options: Mapping[str, str] | None = None
    # choice: per-wrong-answer explanation, keyed like options (optional)
    explanations: Mapping[str, str] = field(default_factory=dict)
    # by-hand / prediction exercises: False = feedback says how far off, never the expected values
    reveal_values: bool = True
    # value: the task asks for numbers, not a dtype: any floating dtype with the right values
    # passes (e.g. a by-hand answer built in float64)
    any_float_dtype: bool = False
    # method checks (checking.method_checks): code patterns the task forbids / requires,
    # e.g. forbid=("attr:data", "call:squeeze()", "op:matmul"), require=("with:no_grad",)
    forbid: tuple[str, ...] = ()
    require: tuple[str, ...] = ()
    # the task must record no autograd graph at all (a detached result is not enough)
    must_build_no_graph: bool = False
    # what the task asks of autograd, so advice never contradicts it: "" (nothing special),
    # "no_graph", "keep_graph" (e.g. a second derivative, a penalty that stays connected)
    # or "many_inputs" (a function: fixes must hold for every input)
    context: str = ""
    # "keep every line, change their order": the task's code (with the cell's given lines);
    # the answer cell must hold exactly these statements, in any order
    keep_lines: str = ""
    # a function whose result must stay connected to every parameter of its module argument
    # (e.g. a penalty added to the loss): probed with autograd in the kernel
    reach_parameters: bool = False
    # autograd: the leaves the answer's graph reaches must end with the reference's .grad
    # (a graph cut after the answer, e.g. by .detach(), leaves one of them wrong)
    check_leaf_grads: bool = False
    # a training loop: zero_grad(), backward() and step() in the answer's code must come in
    # order; a wrong order is named instead of a typical mistake with the same values
    check_step_order: bool = False
    # value: the task asks for an integer tensor, not a width: any integer dtype with the
    # right values passes (int32 as well as int64)
    any_integer_dtype: bool = False
    # function: the least number of calls of torch functions per test input, counted in the
    # kernel: {"backward": (count or callable(*case) -> count, "why, in the task's words")};
    # "a|b" counts either
    min_calls: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    # lesson 13: the rows the two ranks' nn.Linear layers must be given in all (every sample
    # evaluated by exactly one rank), counted by run_on_two_ranks; 0: not counted
    rank_rows: int = 0
    # lesson 13: what each rank's function must return, "number" (a Python number, as the
    # task says), read from run_on_two_ranks's last run; "": not checked
    rank_value: str = ""
    # every imperative of the task text ("no Python loop", "by hand", "exactly once") and how
    # it is honoured: "check:NAME" (a pattern in forbid/require, or one of TASK_CHECKS) or
    # "advice: why it cannot be checked" (tests/lessons/test_task_imperatives.py)
    task_says: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"exercise {self.id}: kind {self.kind!r} is not one of {KINDS}")
        if len(self.hints) < 2:
            raise ValueError(f"exercise {self.id}: give at least two tiered hints")
        if self.kind == "function" and self.cases is None:
            raise ValueError(f"exercise {self.id}: a function exercise needs cases=")
        patterns = tuple(self.forbid) + tuple(self.require)
        bad = [p for p in patterns if p.partition(":")[0] not in PATTERN_KINDS]
        if isinstance(self.forbid, str) or isinstance(self.require, str) or bad:
            raise ValueError(
                f"exercise {self.id}: forbid/require should be tuples of KIND:NAME patterns "
                f"(KIND one of {PATTERN_KINDS}), not {bad or patterns!r}"
            )
        wrong = [
            (k, v)
            for k, v in dict(self.task_says).items()
            if not (isinstance(v, str) and v.startswith(("check:", "advice:")))
        ]
        if wrong:
            raise ValueError(
                f"exercise {self.id}: task_says maps a phrase of the task to 'check:NAME' or "
                f"'advice: why', not {wrong!r}"
            )
        if self.context not in ("", "no_graph", "keep_graph", "many_inputs"):
            raise ValueError(
                f"exercise {self.id}: context={self.context!r} should be '', 'no_graph', "
                "'keep_graph' or 'many_inputs'"
            )
        unknown = [a for a in self.attributes if a not in AUTOGRAD_ATTRIBUTES]
        if isinstance(self.attributes, str) or unknown:
            raise ValueError(
                f"exercise {self.id}: attributes={self.attributes!r} should be a tuple of "
                f"names from {AUTOGRAD_ATTRIBUTES}"
            )

    @property
    def reference(self) -> Any:
        """The reference answer (built on first use, then cached)."""
        return _build(self.build_reference)


@functools.cache
def _build(builder: Callable[[], Any]) -> Any:
    return fresh_rng(builder)


def fresh_rng(make: Callable[[], Any]) -> Any:
    """``make()`` in a forked copy of torch's global CPU generator: building a reference or
    test inputs (e.g. an ``nn.Linear``'s initial weights) never moves the learner's RNG. It
    runs in the :func:`known_state`, so it never depends on what the notebook left switched."""
    import torch

    with torch.random.fork_rng(devices=[]), known_state():
        return make()


@contextlib.contextmanager
def known_state():
    """A block in the state a fresh kernel starts in, whatever the notebook switched: gradient
    recording on and the default dtype float32 (put back as they were afterwards). References,
    test inputs, the catalogue's wrong answers and the checker's calls of a learner's function
    run in it, so a cell that left recording off changes no verdict (it is told so instead:
    ``checking.left_behind.notebook_state``)."""
    import torch

    dtype = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float32)
        with torch.enable_grad():
            yield
    finally:
        torch.set_default_dtype(dtype)


@dataclass(frozen=True)
class Misconception:
    """One typical wrong answer to one exercise.

    An entry is recognised by what the answer *does* (the same values, the same outputs on
    every test input), and many routes lead to the same values. So its texts are split by
    what they may claim:

    exercise_id  the exercise, e.g. "03.permute_shape".
    label        a few words naming the misunderstanding (for tests and reports).
    build_answer zero-argument callable returning the wrong answer, in the form the learner
                 would pass to ``check`` (a tensor, a number, a function, an option key,
                 an exception class).
    message      what the answer shows, true of every route to these values, and how to
                 think instead, without giving the answer away. For a value, function or
                 autograd exercise it names no code construct (no function, method,
                 keyword argument or step the learner may not have used):
                 ``tests/lessons/test_misconceptions.py`` checks that.
    hint         the first hint after this mistake: a question that leads away from it,
                 claiming nothing the answer does not show (same rule as ``message``).
    cause        the mechanism: what the learner's code did to get these values. Shown as
                 fact only when every pattern of ``evidence`` occurs in the learner's code;
                 as one possible cause when the code could not be read; not at all when it
                 was read and the evidence is absent (``checking.misconceptions.explain``).
                 Written about the construct ("torch.cdist returns ..."); the lead-in
                 ("Your code calls `cdist`: ") is added from the evidence found. A mapping
                 from the alternatives of one evidence pattern to their own texts
                 (``{"call:arange": ..., "call:Tensor": ...}``) shows only the texts of the
                 alternatives the code holds.
    evidence     the code patterns ``cause`` needs, all of them: the method checks'
                 language (``"call:squeeze()"``, ``"attr:data"``, ``"with:no_grad"``,
                 ``"op:matmul"``; ``"call:a|b"`` for either) plus ``"kw:NAME"`` (a keyword
                 argument), the operators ``"op:floordiv"``, ``"op:is"``, ``"op:isub"``,
                 ``"op:iadd"``, ``"op:imul"``, ``"op:idiv"``, and ``"order:a<b"`` (a call of
                 ``b`` on a line after a call of ``a``; see ``checking.evidence``).
    """

    exercise_id: str
    label: str
    build_answer: Callable[[], Any]
    message: str
    hint: str = ""
    cause: str | Mapping[str, str] = field(default="", hash=False)
    evidence: tuple[str, ...] = ()

    def __post_init__(self):
        where = f"misconception {self.exercise_id} {self.label!r}"
        if isinstance(self.evidence, str) or not all(
            isinstance(p, str) and valid_evidence(p) for p in self.evidence
        ):
            raise ValueError(
                f"{where}: evidence should be a tuple of patterns such as 'call:cdist', "
                f"'attr:data', 'with:no_grad', 'op:matmul' or 'kw:retain_graph', "
                f"not {self.evidence!r}"
            )
        if bool(self.cause) != bool(self.evidence):
            raise ValueError(
                f"{where}: a cause (the mechanism, said as fact) needs evidence= (the code "
                "patterns that show it), and evidence needs a cause to show"
            )
        if isinstance(self.cause, Mapping):
            alternatives = {
                f"{kind}:{name}"
                for kind, _, names in (p.partition(":") for p in self.evidence)
                for name in names.split("|")
            }
            stray = [k for k in self.cause if k not in alternatives]
            if stray or set(alternatives) - set(self.cause):
                raise ValueError(
                    f"{where}: a cause per alternative needs one text for each alternative of "
                    f"the evidence, {sorted(alternatives)}, not {sorted(self.cause)}"
                )

    @property
    def causes(self) -> tuple[str, ...]:
        """Every text the cause may show."""
        return tuple(self.cause.values()) if isinstance(self.cause, Mapping) else (self.cause,)

    def cause_for(self, found: list[str] | None = None) -> str:
        """The cause's text for the evidence ``found`` (single alternatives such as
        "call:Tensor"; None: every alternative, as when the code could not be read)."""
        if not isinstance(self.cause, Mapping):
            return self.cause
        return " ".join(t for k, t in self.cause.items() if found is None or k in found)

    @property
    def hint_text(self) -> str:
        """What the first hint after this mistake says (``hint``, else ``message``)."""
        return self.hint or self.message


# evidence patterns: the method checks' kinds, plus keyword arguments and more operators
EVIDENCE_KINDS = ("attr", "call", "with", "op", "kw", "order")
EVIDENCE_OPERATORS = ("matmul", "floordiv", "is", "isub", "iadd", "imul", "idiv")


def valid_evidence(pattern: str) -> bool:
    """``pattern`` is one the evidence reader understands (``"call:cdist"``, ``"kw:dim"``...)."""
    kind, _, name = pattern.partition(":")
    if kind not in EVIDENCE_KINDS or not name:
        return False
    if kind == "order":  # "order:backward<retain_grad": two calls, the second after the first
        first, _, then = name.partition("<")
        return bool(first and then) and "|" not in name
    return kind != "op" or name in EVIDENCE_OPERATORS
