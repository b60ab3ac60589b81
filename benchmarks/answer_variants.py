"""Answer variants: each solution, changed the ways learners change it, checked in a real kernel.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/answer_variants.py [--only 01,07]
[--skip 13] [--json out.json] [--markdown out.md]``. ``--code DIR`` runs another checkout's
``course_helpers`` and ``solutions/`` (e.g. an older commit unpacked with ``git archive``), so
the same variants can be counted before and after a change.

Each solution notebook runs top to bottom in one fresh kernel, as a learner runs it. At every
cell that calls ``check("ID", ...)`` the harness first runs the cell as written, then a set of
variants of it, each after a cell that checks another exercise (so every variant is judged as
a fresh attempt), and finally the cell as written again, so that later cells see its state.

Generic variants (built from the solution region of the cell):

``split``        the same code over two cells (a function's body in a helper one cell earlier)
``typed``        the answer typed in as literal numbers (value and autograd answers of up to
                 16 numbers whose check takes a plain name): the same value by another route
``numpy``        the checked value as NumPy (a NumPy scalar for a Python number)
``python``       the checked value as Python numbers (``tolist()``/``item()``)
``dirty_grad``   gradient recording switched off and left off (a function: after it returns)
``dirty_modules`` a function that flips every submodule's training flag of a module argument
``del:N``/``unwrap:N`` statement N of the solution removed / ``with`` block N unwrapped

and curated variants (``CURATED``): routes the lessons teach and mistakes walkthroughs met.

Every variant has an expected outcome: a right answer (same values, a route the task allows)
must pass; a wrong one must not. ``del``/``unwrap`` variants that still pass are listed as
*survivors*: a statement nothing checks (often harmless, e.g. an import; sometimes the step the
task asks for). The report gives, per exercise, each variant's verdict and the first line of
what it was told, and counts the variants whose verdict is not the expected one.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import queue
import re
import sys
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CHECK_CALL = re.compile(r'^check\(\s*"(?P<id>\d\d\.\w+)"\s*,\s*(?P<arg>.+)\)\s*$', re.M)

# exercises whose task says how the answer is reached: a right value by another route (typed
# numbers, a leaf with its .grad set by hand) must not pass
HOW_MATTERS = {
    "01.arange_grid": "without typing the numbers",
    "04.times_table": "one arange, a column, a row and broadcasting",
    "05.keep_intermediate_grad": "call f.backward() so that u.grad holds it",
    "05.hook_halve": "a hook on u, then f.backward()",
    "06.two_losses_two_calls": "backward() once per loss",
    "07.stop_gradient": "call backward()",
    "08.sgd_step": "update it in place",
    "08.relu_fix": "backward() works",
    "09.sum_losses": "a single backward pass",
    "09.third_derivative": "torch.autograd.grad twice, then .backward()",
    "10.resume_checkpoint": "fix the saving and the loading",
    "09.gradient_penalty": "one plain backward() on total",
    "10.fix_optimizer_order": "without adding or removing any line",
    "11.leaf_after_steps": "three steps of gradient descent",
}

# the lesson-13 ranks run in their own processes (several seconds a launch): deletions there
# are limited to these many statements per exercise
RANK_DELETIONS = 12

HARNESS_SETUP = r'''
import json as _hv_json
import course_helpers.checking.checker as _hv_checker

_HV = {}
_hv_original_check = _hv_checker.check


def _hv_check(exercise_id, answer=..., **kwargs):
    result = _hv_original_check(exercise_id, answer, **kwargs)
    if not kwargs.get("demo"):
        _HV["last"] = (exercise_id, answer, result)
    return result


_hv_checker.check = _hv_check


def _hv_report():
    last = _HV.pop("last", None)
    if last is None:
        return {"status": "no check", "message": ""}
    return {"status": last[2].status, "message": last[2].message}


# The conversions hold no loop of their own (torch's tree_map walks the containers): the method
# checks read a checked function's notebook helpers, and a learner's .numpy() has no loop.
def _hv_numpy_leaf(value):
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    return value


def _hv_python_leaf(value):
    import torch

    return value.detach().cpu().tolist() if isinstance(value, torch.Tensor) else value


def _hv_as_numpy(value):
    from torch.utils._pytree import tree_map

    return tree_map(_hv_numpy_leaf, value)


def _hv_as_python(value):
    from torch.utils._pytree import tree_map

    return tree_map(_hv_python_leaf, value)


def _hv_literal(value):
    """Python source that types ``value`` in (a tensor of at most 16 numbers) and its .grad,
    as {"value": ..., "grad": ... or None}; None for anything else."""
    import torch

    if not isinstance(value, torch.Tensor) or value.numel() > 16 or value.is_complex():
        return None
    dtype = str(value.dtype)
    flag = ", requires_grad=True" if value.requires_grad else ""
    text = f"torch.tensor({value.detach().cpu().tolist()!r}, dtype={dtype}{flag})"
    grad = None
    if value.requires_grad and value.grad is not None:
        grad = f"torch.tensor({value.grad.detach().cpu().tolist()!r}, dtype={dtype})"
    return {"value": text, "grad": grad}


def _hv_cleanup():
    import torch

    torch.set_grad_enabled(True)
    torch.autograd.set_detect_anomaly(False)
'''

# a check of another exercise between variants: each variant is a fresh attempt
SEPARATOR = 'check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]), demo=True)\n'


@dataclass
class Variant:
    name: str
    cells: list[str]
    expect: str  # "pass", "fail" or "any"
    note: str = ""


@dataclass
class Outcome:
    exercise: str
    variant: str
    expect: str
    status: str
    message: str
    note: str = ""
    code: str = ""

    @property
    def verdict(self) -> str:
        passed = self.status == "passed"
        if self.expect == "any":
            return "ok"
        if self.variant.startswith(("del:", "unwrap:")):
            return "survivor" if passed else "ok"
        if self.expect == "pass":
            return "ok" if passed else "rejected"
        return "accepted" if passed else "ok"


@dataclass
class Report:
    code: str
    outcomes: list[Outcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- curated variants


def _curated() -> dict[str, list[Variant]]:
    """Routes the lessons teach (must pass) and mistakes walkthroughs made (must not)."""

    def fn(source: str) -> str:
        return textwrap.dedent(source).strip() + "\n"

    hook_split = [
        "a = torch.tensor(2.0, requires_grad=True)\nu = a**2\n"
        "u.register_hook(lambda grad: grad / 2)\n",
        'f = u + 3 * a\nf.backward()\nanswer = a\ncheck("05.hook_halve", answer)\n',
    ]
    curated = {
        "01.arange_grid": [
            Variant(
                "int32 grid",
                [
                    "answer = torch.arange(12, dtype=torch.int32).reshape(3, 4)\n"
                    'check("01.arange_grid", answer)\n'
                ],
                "fail",
                "the task asks for the int64 tensor",
            ),
        ],
        "03.column_grid": [
            Variant(
                "int32 columns",
                [
                    "answer = torch.arange(12, dtype=torch.int32).view(3, 4).t()\n"
                    'check("03.column_grid", answer)\n'
                ],
                "pass",
                "the task asks for an integer tensor",
            ),
        ],
        "01.celsius_to_fahrenheit": [
            Variant(
                "apply_ lambda",
                [
                    fn("""
                    def celsius_to_fahrenheit(celsius):
                        return celsius.clone().apply_(lambda c: c * 9 / 5 + 32)


                    check("01.celsius_to_fahrenheit", celsius_to_fahrenheit)
                    """)
                ],
                "fail",
                "a Python function called per element: a loop",
            ),
            Variant(
                "list comprehension",
                [
                    fn("""
                    def celsius_to_fahrenheit(celsius):
                        flat = [c * 9 / 5 + 32 for c in celsius.flatten().tolist()]
                        return torch.tensor(flat, dtype=celsius.dtype).reshape(celsius.shape)


                    check("01.celsius_to_fahrenheit", celsius_to_fahrenheit)
                    """)
                ],
                "fail",
                "a Python loop",
            ),
        ],
        "04.pairwise_sq_dists": [
            Variant(
                "loop over rows",
                [
                    fn("""
                    def pairwise_sq_dists(a, b):
                        rows = [((row - b) ** 2).sum(dim=-1) for row in a]
                        return torch.stack(rows) if rows else a.new_zeros(0, len(b))


                    check("04.pairwise_sq_dists", pairwise_sq_dists)
                    """)
                ],
                "fail",
                "the task says no loops",
            ),
        ],
        "05.hand_chain_rule": [
            Variant(
                "autograd's numbers",
                [
                    fn("""
                    a = torch.tensor(1.5, requires_grad=True)
                    b = torch.tensor(-2.0, requires_grad=True)
                    (a**2 * b + b).backward()
                    answer = torch.stack([a.grad, b.grad])
                    check("05.hand_chain_rule", answer)
                    """)
                ],
                "fail",
                "the task says by hand",
            ),
            Variant(
                "numbers typed in float64",
                [
                    "answer = torch.tensor([-6.0, 3.25], dtype=torch.float64)\n"
                    'check("05.hand_chain_rule", answer)\n'
                ],
                "pass",
            ),
        ],
        "05.hook_halve": [Variant("hook one cell earlier", hook_split, "pass")],
        "06.two_losses_two_calls": [
            Variant(
                "one backward on the sum",
                [
                    fn("""
                    w = torch.tensor([1.0, 2.0], requires_grad=True)
                    x = torch.tensor([3.0, -1.0])
                    loss_a = (w**2).sum()
                    loss_b = (w * x).sum()
                    (loss_a + loss_b).backward()
                    answer = w
                    check("06.two_losses_two_calls", answer)
                    """)
                ],
                "fail",
                "the task says without adding the losses",
            ),
        ],
        "06.accumulated_grad": [
            Variant(
                "one backward on the whole batch",
                [
                    fn("""
                    def accumulated_grad(w, x, y, micro):
                        w = w.clone().requires_grad_(True)
                        ((x @ w - y) ** 2).mean().backward()
                        return w.grad


                    check("06.accumulated_grad", accumulated_grad)
                    """)
                ],
                "fail",
                "the task asks for one backward() per micro-batch",
            ),
        ],
        "07.predict_no_grad": [
            Variant(
                "set_grad_enabled(False) left on",
                [
                    fn("""
                    def predict(weight, inputs):
                        torch.set_grad_enabled(False)
                        return inputs @ weight


                    check("07.predict_no_grad", predict)
                    """)
                ],
                "fail",
                "recording stays off for the rest of the notebook",
            ),
            Variant(
                "decorator",
                [
                    fn("""
                    @torch.no_grad()
                    def predict(weight, inputs):
                        return inputs @ weight


                    check("07.predict_no_grad", predict)
                    """)
                ],
                "pass",
            ),
            Variant(
                "set_grad_enabled(False) block",
                [
                    fn("""
                    def predict(weight, inputs):
                        with torch.set_grad_enabled(False):
                            return inputs @ weight


                    check("07.predict_no_grad", predict)
                    """)
                ],
                "pass",
            ),
        ],
        "07.eval_loop_fix": [
            Variant(
                "set_grad_enabled(False) block",
                [
                    fn("""
                    total = 0.0
                    with torch.set_grad_enabled(False):
                        for xb, yb in batches:
                            loss = nn.functional.mse_loss(model(xb), yb)
                            total += loss.item()
                    mean_loss = total / len(batches)
                    answer = (mean_loss, loss)
                    check("07.eval_loop_fix", answer)
                    """)
                ],
                "pass",
            ),
            Variant(
                "decorated helper",
                [
                    fn("""
                    @torch.no_grad()
                    def mean_of_losses(batches):
                        total = 0.0
                        for xb, yb in batches:
                            loss = nn.functional.mse_loss(model(xb), yb)
                            total += loss.item()
                        return total / len(batches), loss


                    mean_loss, loss = mean_of_losses(batches)
                    answer = (mean_loss, loss)
                    check("07.eval_loop_fix", answer)
                    """)
                ],
                "pass",
            ),
            Variant(
                "set_grad_enabled(False) left on",
                [
                    fn("""
                    torch.set_grad_enabled(False)
                    total = 0.0
                    for xb, yb in batches:
                        loss = nn.functional.mse_loss(model(xb), yb)
                        total += loss.item()
                    mean_loss = total / len(batches)
                    answer = (mean_loss, loss)
                    check("07.eval_loop_fix", answer)
                    """)
                ],
                "fail",
                "recording stays off for the rest of the notebook",
            ),
        ],
        "09.sum_losses": [
            Variant(
                "retain_graph",
                [
                    fn("""
                    g = cpu_generator(9)
                    w = torch.randn(3, 2, generator=g).requires_grad_()
                    inputs = torch.randn(5, 3, generator=g)
                    h = torch.tanh(inputs @ w)
                    loss_a = h.pow(2).mean()
                    loss_b = (h[:, 0] - h[:, 1]).abs().mean()
                    loss_a.backward(retain_graph=True)
                    loss_b.backward()
                    answer = w
                    check("09.sum_losses", answer)
                    """)
                ],
                "fail",
                "the task asks for a single backward pass",
            ),
        ],
        "11.evaluate": [
            Variant(
                "model.training = was",
                [
                    fn("""
                    def evaluate(model, x, y):
                        was = model.training
                        model.eval()
                        with torch.no_grad():
                            loss = F.mse_loss(model(x), y)
                        model.training = was
                        return loss


                    def evaluate_probe(model, x, y):
                        loss = evaluate(model, x, y)
                        if loss is None:
                            return None
                        mode = "train" if model.training else "eval"
                        return {"loss": loss, "mode afterwards": mode}


                    check("11.evaluate", evaluate_probe)
                    """)
                ],
                "fail",
                "leaves the Dropout child in eval mode",
            ),
        ],
        "04.times_table": [
            Variant(
                "int32 table",
                [
                    "numbers = torch.arange(1, 6, dtype=torch.int32)\n"
                    "answer = numbers[:, None] * numbers[None, :]\n"
                    'check("04.times_table", answer)\n'
                ],
                "pass",
                "the task asks for integers",
            ),
        ],
        "05.cube_vjp": [
            Variant(
                "the formula typed in",
                [
                    fn("""
                    def cube_vjp(x, v):
                        return v * 3 * x**2


                    check("05.cube_vjp", cube_vjp)
                    """)
                ],
                "fail",
                "the task says keep using backward",
            ),
        ],
        "09.second_derivative_tanh": [
            Variant(
                "the formula typed in",
                [
                    fn("""
                    def second_derivative_of_tanh(x):
                        t = torch.tanh(x)
                        return -2 * t * (1 - t**2)


                    check("09.second_derivative_tanh", second_derivative_of_tanh)
                    """)
                ],
                "fail",
                "the task says computed by autograd",
            ),
        ],
        "09.gradient_penalty": [
            Variant(
                "backward(create_graph=True)",
                [
                    fn("""
                    g = cpu_generator(29)
                    w = torch.randn(3, generator=g).requires_grad_()
                    xs = torch.randn(6, 3, generator=g)
                    loss = (xs @ w).pow(2).mean()
                    loss.backward(create_graph=True)
                    penalty = w.grad.pow(2).sum()
                    w.grad = None
                    (loss + 0.1 * penalty).backward()
                    answer = w
                    check("09.gradient_penalty", answer)
                    """)
                ],
                "fail",
                "the lesson's leak: a graph through w.grad",
            ),
        ],
        "11.leaf_after_steps": [
            Variant(
                "an optimizer's step",
                [
                    fn("""
                    w = torch.zeros(3, 1, requires_grad=True)
                    optimizer = torch.optim.SGD([w], lr=0.1)
                    for step in range(3):
                        loss = ((x_small @ w - y_small) ** 2).mean()
                        loss.backward()
                        optimizer.step()
                        if step < 2:
                            optimizer.zero_grad(set_to_none=False)
                    answer = w
                    check("11.leaf_after_steps", answer)
                    """)
                ],
                "fail",
                "the task says by hand",
            ),
        ],
        "12.register_parameter": [
            Variant(
                "a frozen Parameter",
                [
                    fn("""
                    @repair
                    class Regressor(nn.Module):
                        def __init__(self):
                            super().__init__()
                            self.hidden = nn.Linear(4, 32)
                            self.skip = nn.Linear(4, 32)
                            self.out_w = nn.Parameter(torch.randn(32, 1) * 0.1, requires_grad=False)
                            self.out_b = nn.Parameter(torch.zeros(1))

                        def forward(self, x):
                            h = torch.tanh(self.hidden(x))
                            h = h + self.skip(x)
                            return h @ self.out_w + self.out_b


                    check("12.register_parameter", trainable_names(Regressor))
                    """)
                ],
                "fail",
                "registered but not trained",
            ),
        ],
        "13.exact_evaluation": [
            Variant(
                "every rank evaluates every sample",
                [
                    fn("""
                    def evaluate(rank, world_size, workdir):
                        g = torch.Generator().manual_seed(13)
                        x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
                        x, y = x[:5], y[:5]
                        torch.manual_seed(0)
                        model = nn.Linear(3, 1)
                        with torch.no_grad():
                            loss = F.mse_loss(model(x), y)
                        dist.all_reduce(loss)
                        return (loss / world_size).item()


                    answer = stacked(run_on_two_ranks(evaluate))
                    check("13.exact_evaluation", answer)
                    """)
                ],
                "fail",
                "each sample by exactly one rank",
            ),
            Variant(
                "DistributedSampler's padded shards",
                [
                    fn("""
                    def evaluate(rank, world_size, workdir):
                        g = torch.Generator().manual_seed(13)
                        x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
                        x, y = x[:5], y[:5]
                        torch.manual_seed(0)
                        model = nn.Linear(3, 1)
                        rows = list(DistributedSampler(range(5), shuffle=False))
                        with torch.no_grad():
                            total = F.mse_loss(model(x[rows]), y[rows], reduction="sum")
                        sums = torch.stack([total, torch.tensor(float(len(rows)))])
                        dist.all_reduce(sums)
                        return (sums[0] / sums[1]).item()


                    answer = stacked(run_on_two_ranks(evaluate))
                    check("13.exact_evaluation", answer)
                    """)
                ],
                "fail",
                "sample 0 twice; told the sampler's padding (the code calls it)",
            ),
            Variant(
                "padded by hand",
                [
                    fn("""
                    def evaluate(rank, world_size, workdir):
                        g = torch.Generator().manual_seed(13)
                        x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
                        x, y = x[:5], y[:5]
                        torch.manual_seed(0)
                        model = nn.Linear(3, 1)
                        rows = [[0, 2, 4], [1, 3, 0]][rank]
                        with torch.no_grad():
                            total = F.mse_loss(model(x[rows]), y[rows], reduction="sum")
                        sums = torch.stack([total, torch.tensor(float(len(rows)))])
                        dist.all_reduce(sums)
                        return (sums[0] / sums[1]).item()


                    answer = stacked(run_on_two_ranks(evaluate))
                    check("13.exact_evaluation", answer)
                    """)
                ],
                "fail",
                "sample 0 twice; no sampler in the code, so no sampler named",
            ),
        ],
        "13.rank0_checkpoint": [
            Variant(
                "monitored_barrier",
                [
                    fn("""
                    def save_then_load(rank, world_size, workdir):
                        torch.manual_seed(0)
                        model = nn.Linear(3, 1)
                        path = os.path.join(workdir, "model.pt")
                        if rank == 0:
                            torch.save(model.state_dict(), path)
                        dist.monitored_barrier()
                        state = torch.load(path, map_location="cpu")
                        return torch.cat([state[k].flatten() for k in state])


                    results = run_on_two_ranks(save_then_load)
                    if not isinstance(results, list):
                        answer = results
                    else:
                        saves = [r["saves"] for r in results]
                        answer = {"saves per rank": saves, "loaded": stacked(results)}
                    check("13.rank0_checkpoint", answer)
                    """)
                ],
                "pass",
            ),
        ],
    }
    for exercise_id, variants in _walkthrough_r4(fn).items():
        curated.setdefault(exercise_id, []).extend(variants)
    return curated


def _walkthrough_r4(fn) -> dict[str, list[Variant]]:
    """The round-4 beginner walkthrough's answers (its scripts: benchmarks/walkthrough/): the
    attempts that made the required-call window count a failed try, and the stated forms
    nothing checked."""
    grid = "[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]"
    a = "a = torch.tensor(2.0, requires_grad=True)\n"
    x = "x = torch.tensor(1.5, requires_grad=True)\n"
    return {
        "01.arange_grid": [
            Variant(
                "typed after a try with arange",
                [
                    'answer = torch.arange(12).reshape(4, 3)\ncheck("01.arange_grid", answer)\n',
                    f'answer = torch.tensor({grid})\ncheck("01.arange_grid", answer)\n',
                ],
                "fail",
                "#1: the earlier attempt's arange no longer counts",
            ),
        ],
        "05.hook_halve": [
            Variant(
                ".grad set by hand after a try with a hook",
                [
                    a + "u = a**2\na.register_hook(lambda g: g / 2)\nf = u + 3 * a\n"
                    'f.backward()\nanswer = a\ncheck("05.hook_halve", answer)\n',
                    a + "u = a**2\nf = u + 3 * a\nf.backward()\na.grad = torch.tensor(5.0)\n"
                    'answer = a\ncheck("05.hook_halve", answer)\n',
                ],
                "fail",
                "#14",
            ),
            Variant(
                "hook one cell earlier, the check cell edited",
                [
                    a + "u = a**2\nu.register_hook(lambda grad: grad / 2)\n",
                    'f = u + 3 * a\nanswer = a\ncheck("05.hook_halve", answer)\n',
                    'f = u + 3 * a\nf.backward()\nanswer = a\ncheck("05.hook_halve", answer)\n',
                ],
                "pass",
                "issue 34 item 4 after a failed attempt",
            ),
        ],
        "09.third_derivative": [
            Variant(
                "36 typed after a try with autograd",
                [
                    x + "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\nd1.backward()\n"
                    'answer = x\ncheck("09.third_derivative", answer)\n',
                    x + "(d1,) = torch.autograd.grad(x**4, x, create_graph=True)\n"
                    "(d2,) = torch.autograd.grad(d1, x, create_graph=True)\n"
                    "x.grad = torch.tensor(36.0)\nanswer = x\n"
                    'check("09.third_derivative", answer)\n',
                ],
                "fail",
                "#25",
            ),
        ],
        "02.match_like": [
            Variant(
                "names the meta device",
                [
                    fn("""
                    def match_like(values, reference):
                        if reference.device.type == "meta":
                            return values.to("meta").to(reference.dtype)
                        return values.to(reference.dtype)


                    check("02.match_like", match_like)
                    """)
                ],
                "fail",
                "#6: the task says name no device",
            ),
        ],
        "04.times_table": [
            Variant(
                "torch.outer",
                [
                    "numbers = torch.arange(1, 6)\nanswer = torch.outer(numbers, numbers)\n"
                    'check("04.times_table", answer)\n'
                ],
                "fail",
                "#12: a column, a row and broadcasting",
            ),
        ],
        "10.resume_checkpoint": [
            Variant(
                "eight steps, no checkpoint",
                [
                    "net, optimizer = make_run()\ntrain(net, optimizer, 8)\n"
                    'answer = net.weight.detach().clone()\ncheck("10.resume_checkpoint", answer)\n'
                ],
                "fail",
                "#28: fix the saving and the loading",
            ),
        ],
        "12.first_nonfinite": [
            Variant(
                "a float32 tensor",
                [
                    fn("""
                    def first_nonfinite(losses):
                        bad = (~torch.isfinite(torch.tensor(losses))).nonzero()
                        return int(bad[0, 0]) if len(bad) else -1


                    check("12.first_nonfinite", first_nonfinite)
                    """)
                ],
                "fail",
                "#29: a huge finite loss becomes inf in float32",
            ),
        ],
        "13.pick_backend": [
            Variant(
                "a list",
                [
                    fn("""
                    def pick_backend(cuda_count, local_rank, local_world_size):
                        if cuda_count >= local_world_size:
                            return ["nccl", f"cuda:{local_rank}"]
                        return ["gloo", "cpu"]


                    check("13.pick_backend", pick_backend)
                    """)
                ],
                "fail",
                "#33: the task says a tuple",
            ),
        ],
        "13.fix_set_epoch": [
            Variant(
                "a new sampler each epoch",
                [
                    fn("""
                    def epoch_orders(rank, world_size, workdir):
                        dataset = TensorDataset(torch.arange(12))
                        orders = []
                        for epoch in range(3):
                            sampler = DistributedSampler(dataset, shuffle=True, seed=epoch)
                            loader = DataLoader(dataset, batch_size=3, sampler=sampler)
                            orders.append([i for (batch,) in loader for i in batch.tolist()])
                        return orders


                    answer = stacked(run_on_two_ranks(epoch_orders))
                    check("13.fix_set_epoch", answer)
                    """)
                ],
                "fail",
                "#33: the same sampler, only the bug fixed",
            ),
        ],
    }


# ---------------------------------------------------------------- generic variants


def _region(source: str) -> tuple[list[str], list[str], list[str]] | None:
    """(lines before, region lines, lines after) of a cell's solution region."""
    lines = source.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.strip() == BEGIN]
    ends = [i for i, ln in enumerate(lines) if ln.strip() == END]
    if len(starts) != 1 or len(ends) != 1:
        return None
    return lines[: starts[0]], lines[starts[0] + 1 : ends[0]], lines[ends[0] + 1 :]


def _join(*parts: list[str]) -> str:
    return "\n".join(line for part in parts for line in part) + "\n"


def _indent_of(lines: list[str]) -> str:
    for line in lines:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return ""


def _mutants(region: list[str]) -> list[tuple[str, list[str]]]:
    """Each statement of the region removed (as ``pass``), each ``with`` block unwrapped."""
    indent = _indent_of(region)
    body = textwrap.dedent("\n".join(region))
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return []
    lines = body.splitlines()
    mutants = []
    number = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        number += 1
        first, last = node.lineno - 1, node.end_lineno - 1
        own = lines[first]
        pad = own[: len(own) - len(own.lstrip())]
        if isinstance(node, (ast.With, ast.For, ast.If, ast.While, ast.Try)):
            if isinstance(node, ast.With) and node.body[0].lineno - 1 == first + 1:
                inner = lines[first + 1 : last + 1]
                shift = len(_indent_of(inner)) - len(pad)
                unwrapped = lines[:first] + [ln[shift:] for ln in inner] + lines[last + 1 :]
                mutants.append((f"unwrap:{number} {own.strip()[:50]}", unwrapped))
            continue  # a compound statement: its inner statements are removed one by one
        removed = lines[:first] + [pad + "pass"] + lines[last + 1 :]
        mutants.append((f"del:{number} {own.strip()[:50]}", removed))
    return [(name, [indent + ln if ln else ln for ln in new]) for name, new in mutants]


def _function_name(before: list[str]) -> tuple[str, str] | None:
    """The name and parameters of the function whose body is the region."""
    for line in reversed(before):
        match = re.match(r"\s*def (\w+)\((.*)\):\s*$", line)
        if match:
            return match.group(1), match.group(2)
    return None


def generic_variants(exercise, source: str, literal: str | None) -> list[Variant]:
    parts = _region(source)
    if parts is None:
        return []
    before, region, after = parts
    variants: list[Variant] = []
    check = CHECK_CALL.search(source)
    arg = check.group("arg") if check else None
    reference_has_tensor = _has_tensor(exercise)
    kind = exercise.kind
    defined = _function_name(before) if _indent_of(region) else None
    if defined and kind == "function":
        name, params = defined
        names = ", ".join(p.split("=")[0].strip() for p in params.split(",") if p.strip())
        decorators = [ln for ln in before if ln.lstrip().startswith("@")]
        head = before[: before.index(next(ln for ln in before if ln.lstrip().startswith("def ")))]
        head = [ln for ln in head if not ln.lstrip().startswith("@")]
        helper = [f"def _{name}_impl({params}):"] + region
        wrapper = decorators + [f"def {name}({params}):", f"    return _{name}_impl({names})"]
        variants.append(
            Variant("split", [_join(head, helper), _join(wrapper, ["", ""], after)], "pass")
        )
        checked = arg.strip() if arg else name
        for label, body, expect in (
            ("numpy", "return _hv_as_numpy(result)", "fail" if reference_has_tensor else "any"),
            ("python", "return _hv_as_python(result)", "fail" if reference_has_tensor else "pass"),
            ("dirty_grad", "torch.set_grad_enabled(False)\n    return result", "fail"),
        ):
            wrap = (
                f"def {checked}_{label}(*args):\n    result = {checked}(*args)\n    {body}\n\n\n"
                f'check("{exercise.id}", {checked}_{label})\n'
            )
            definitions = CHECK_CALL.sub("", source).rstrip() + "\n\n\n"
            variants.append(Variant(label, [definitions + wrap], expect))
        if _has_module_argument(exercise):
            wrap = (
                f"def {checked}_dirty_modules(*args):\n    result = {checked}(*args)\n"
                "    for arg in args:\n"
                "        if isinstance(arg, torch.nn.Module):\n"
                "            for sub in list(arg.modules())[1:]:\n"
                "                sub.train(not sub.training)\n"
                f'    return result\n\n\ncheck("{exercise.id}", {checked}_dirty_modules)\n'
            )
            definitions = CHECK_CALL.sub("", source).rstrip() + "\n\n\n"
            variants.append(Variant("dirty_modules", [definitions + wrap], "fail"))
    elif _indent_of(region):  # a class (or a function checked through a probe): two cells
        checks = [ln for ln in after if CHECK_CALL.match(ln)]
        rest = [ln for ln in after if not CHECK_CALL.match(ln)]
        variants.append(Variant("split", [_join(before, region, rest), _join(checks)], "pass"))
    else:
        statements = _top_statements(region)
        if len(statements) >= 2:
            half = len(statements) // 2
            first = region[: statements[half]]
            second = region[statements[half] :]
        else:
            first, second = region, []
        variants.append(Variant("split", [_join(before, first), _join(second, after)], "pass"))
        if check and kind in ("value", "autograd", "choice"):
            for label, expect in (
                ("numpy", "fail" if reference_has_tensor else "any"),
                ("python", "fail" if reference_has_tensor else "any"),
            ):
                if kind == "choice" and exercise.options is not None:
                    continue
                changed = CHECK_CALL.sub(
                    lambda m, label=label: f'check("{m["id"]}", _hv_as_{label}({m["arg"]}))',
                    _join(before, region, after),
                )
                variants.append(Variant(label, [changed], expect))
        if kind in ("value", "autograd"):
            # recording left off by the answer's cell is told, for every exercise (r4 #24)
            dirty = _join(before, region, ["torch.set_grad_enabled(False)"], after)
            variants.append(Variant("dirty_grad", [dirty], "fail"))
        if literal and arg and re.fullmatch(r"\w+", arg.strip()):
            name = arg.strip()
            typed = [f"{name} = {literal['value']}"]
            if literal.get("grad"):
                typed.append(f"{name}.grad = {literal['grad']}")
            expect = "fail" if exercise.id in HOW_MATTERS else "pass"
            variants.append(
                Variant(
                    "typed", [_join(before, typed, after)], expect, HOW_MATTERS.get(exercise.id, "")
                )
            )
    mutants = _mutants(region)
    if exercise.id.startswith("13."):
        mutants = mutants[:RANK_DELETIONS]
    for name, new in mutants:
        variants.append(Variant(name, [_join(before, new, after)], "fail"))
    return variants


def assigned_names(region: list[str]) -> list[str]:
    """The names the region binds at the top level of its cell (forgotten before a variant,
    so that a variant without the statement that makes them cannot reuse an earlier value)."""
    if _indent_of(region):
        return []
    try:
        tree = ast.parse(textwrap.dedent("\n".join(region)))
    except SyntaxError:
        return []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return sorted(names)


def _top_statements(region: list[str]) -> list[int]:
    """Line offsets (in the region) where its top-level statements start."""
    try:
        tree = ast.parse(textwrap.dedent("\n".join(region)))
    except SyntaxError:
        return []
    return [node.lineno - 1 for node in tree.body]


def _has_tensor(exercise) -> bool:
    import torch

    try:
        if exercise.kind == "function":
            from course_helpers.environment.notebook import cpu_generator

            cases = exercise.cases(cpu_generator(0))
            value = exercise.reference(*cases[0])
        else:
            value = exercise.reference
    except Exception:
        return True
    return _contains_tensor(value, torch)


def _contains_tensor(value, torch) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v, torch) for v in value)
    if isinstance(value, dict):
        return any(_contains_tensor(v, torch) for v in value.values())
    return False


def _has_module_argument(exercise) -> bool:
    import torch

    from course_helpers.environment.notebook import cpu_generator

    try:
        cases = exercise.cases(cpu_generator(0))
    except Exception:
        return False
    return any(
        isinstance(a, torch.nn.Module) and len(list(a.modules())) > 1
        for args in cases
        for a in args
    )


# ---------------------------------------------------------------- the kernel


class Kernel:
    def __init__(self, cwd: Path, code_root: Path):
        from jupyter_client.manager import KernelManager

        env = dict(os.environ)
        env.update(
            PYTHONPATH=str(code_root),
            COURSE_PROGRESS="off",
            COURSE_STRICT="0",
            OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"),
        )
        env.pop("COURSE_GRADING_DIR", None)
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(cwd), env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)

    def run(self, code: str, store_history: bool = True, timeout: float = 600):
        """(stdout text, error or None) of one cell."""
        msg_id = self.client.execute(code, store_history=store_history, allow_stdin=False)
        out, error = [], None
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=max(1.0, deadline - time.monotonic()))
            except queue.Empty:
                self.manager.interrupt_kernel()
                return "".join(out), "timed out"
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content.get("name") == "stdout":
                out.append(content["text"])
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(out), error

    def query(self, expression: str):
        out, error = self.run(f"print('@@' + _hv_json.dumps({expression}))", store_history=False)
        for line in out.splitlines():
            if line.startswith("@@"):
                return json.loads(line[2:])
        return {"status": "harness error", "message": error or out[-300:]}

    def close(self):
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


# ---------------------------------------------------------------- running a notebook


def run_notebook(path: Path, code_root: Path, report: Report) -> None:
    import nbformat

    from course_helpers.lessons import get

    curated = _curated()
    notebook = nbformat.read(path, as_version=4)
    kernel = Kernel(path.parent, code_root)
    try:
        kernel.run(HARNESS_SETUP, store_history=False)
        for cell in notebook.cells:
            if cell.cell_type != "code":
                continue
            source = cell.source
            found = CHECK_CALL.search(source)
            if not found or _region(source) is None:
                kernel.run(source)
                continue
            exercise = get(found["id"])
            _, error = kernel.run(source)
            result = kernel.query("_hv_report()")
            if error and result["status"] == "no check":
                result = {"status": "cell error", "message": error}
            literal = None
            arg = found["arg"].strip()
            if re.fullmatch(r"\w+", arg):
                literal = kernel.query(f"_hv_literal({arg})")
                literal = literal if isinstance(literal, dict) and "value" in literal else None
            _record(report, exercise.id, Variant("solution", [source], "pass"), result)
            variants = generic_variants(exercise, source, literal) + curated.get(exercise.id, [])
            forget = assigned_names(_region(source)[1])
            for variant in variants:
                kernel.run(SEPARATOR)
                kernel.run(f"for _hv_name in {forget!r}: globals().pop(_hv_name, None)", False)
                result = {"status": "no check", "message": ""}
                for number, code in enumerate(variant.cells, start=1):
                    _, error = kernel.run(code)
                    if error and number == len(variant.cells):
                        result = kernel.query("_hv_report()")
                        if result["status"] == "no check":
                            result = {"status": "cell error", "message": error}
                        break
                else:
                    result = kernel.query("_hv_report()")
                kernel.run("_hv_cleanup()", store_history=False)
                _record(report, exercise.id, variant, result)
            kernel.run(SEPARATOR)
            kernel.run(source)  # later cells see the solution's state
            kernel.query("_hv_report()")
    finally:
        kernel.close()


def _record(report: Report, exercise_id: str, variant: Variant, result: dict) -> None:
    outcome = Outcome(
        exercise_id,
        variant.name,
        variant.expect,
        result.get("status", "?"),
        result.get("message", ""),
        variant.note,
        "\n# ---- next cell ----\n".join(variant.cells),
    )
    report.outcomes.append(outcome)
    mark = {"ok": " ", "survivor": "~"}.get(outcome.verdict, "!")
    first = outcome.message.strip().splitlines()[0][:110] if outcome.message.strip() else ""
    print(f"{mark} {exercise_id:28} {variant.name[:34]:34} {outcome.status:14} {first}", flush=True)


# ---------------------------------------------------------------- the report


def summary(report: Report) -> dict:
    counts: dict[str, int] = {}
    for outcome in report.outcomes:
        counts[outcome.verdict] = counts.get(outcome.verdict, 0) + 1
    generic = [o for o in report.outcomes if not o.variant.startswith(("del:", "unwrap:"))]
    return {
        "variants": len(report.outcomes),
        "exercises": len({o.exercise for o in report.outcomes}),
        "right answers rejected": counts.get("rejected", 0),
        "wrong answers accepted": counts.get("accepted", 0),
        "deletions that still pass": counts.get("survivor", 0),
        "deletions": len(report.outcomes) - len(generic),
    }


def markdown(report: Report) -> str:
    lines = [f"# Answer variants ({report.code})", "", "| | count |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in summary(report).items()]
    lines += ["", "| exercise | variant | expected | status | verdict | told (first line) |"]
    lines += ["|---|---|---|---|---|---|"]
    for o in report.outcomes:
        first = o.message.strip().splitlines()[0] if o.message.strip() else ""
        first = first.replace("|", "\\|")[:160]
        lines.append(
            f"| {o.exercise} | {o.variant.replace('|', '/')} | {o.expect} | {o.status} | "
            f"{o.verdict} | {first} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose code to run")
    parser.add_argument("--only", default="", help="lesson numbers, e.g. 01,07")
    parser.add_argument("--skip", default="", help="lesson numbers to leave out")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    parser.add_argument("--markdown", type=Path, help="write the table here")
    args = parser.parse_args(argv)
    code_root = args.code.resolve()
    sys.path.insert(0, str(code_root))
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    skip = {n.strip() for n in args.skip.split(",") if n.strip()}
    report = Report(str(code_root))
    for path in sorted((code_root / "solutions").glob("*.ipynb")):
        number = path.name[:2]
        if (only and number not in only) or number in skip:
            continue
        print(f"== {path.name}", flush=True)
        try:
            run_notebook(path, code_root, report)
        except Exception as err:  # one notebook's trouble must not lose the others
            report.errors.append(f"{path.name}: {type(err).__name__}: {err}")
            print(f"!! {path.name}: {type(err).__name__}: {err}", flush=True)
    print(json.dumps(summary(report), indent=2))
    if args.json:
        data = {"summary": summary(report), "errors": report.errors}
        data["outcomes"] = [asdict(o) | {"verdict": o.verdict} for o in report.outcomes]
        args.json.write_text(json.dumps(data, indent=1))
    if args.markdown:
        args.markdown.write_text(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
