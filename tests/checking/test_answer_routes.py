"""The issue-34 examples, played in one real kernel as a learner plays them: the routes the
lessons teach pass, the routes a task rules out do not, state left dirty is named, and code
split over two cells is read as one answer (items 2, 3 and 4)."""

from __future__ import annotations

import json

import pytest
from answer_cells import run_in_kernel

SETUP = """
import json
import torch
import torch.nn.functional as F
from torch import nn
from course_helpers import check, cpu_generator

def report(name, result):
    print("@@" + json.dumps([name, result.status, result.message]))
"""

# (name, cells); each scenario's last cell reports one check
SCENARIOS = [
    # item 4: a hook registered one cell before the check
    (
        "hook split",
        [
            "a = torch.tensor(2.0, requires_grad=True)\nu = a**2\nu.register_hook(lambda g: g / 2)",
            'f = u + 3 * a\nf.backward()\nreport("hook split", check("05.hook_halve", a))',
        ],
    ),
    # the numbers from arange one cell before; the check's cell run again; then another
    # exercise's check: what came before it no longer counts
    (
        "arange split",
        [
            "numbers = torch.arange(12)",
            'answer = numbers.reshape(3, 4)\nreport("arange split", check("01.arange_grid",'
            " answer))",
        ],
    ),
    (
        "arange again",
        [
            'answer = numbers.reshape(3, 4)\nreport("arange split", check("01.arange_grid",'
            " answer))",
        ],
    ),
    (
        "arange after another check",
        [
            'report("x", check("01.linspace_points", torch.linspace(-1, 1, 5)))',
            'answer = numbers.reshape(3, 4)\nreport("arange split", check("01.arange_grid",'
            " answer))",
        ],
    ),
    # item 2: by hand; autograd in a later cell does not count against the check's cell
    (
        "by hand",
        [
            "answer = torch.tensor([2 * 1.5 * -2.0, 1.5**2 + 1])\n"
            'report("by hand", check("05.hand_chain_rule", answer))',
        ],
    ),
    (
        "by hand after the autograd cell",
        [
            "a = torch.tensor(1.5, requires_grad=True)\nb = torch.tensor(-2.0,"
            " requires_grad=True)\n"
            "(a**2 * b + b).backward()\nby_autograd = torch.stack([a.grad, b.grad])",
            "answer = torch.tensor([2 * 1.5 * -2.0, 1.5**2 + 1])\n"
            'report("by hand", check("05.hand_chain_rule", answer))',
        ],
    ),
    (
        "autograd's numbers",
        [
            "a = torch.tensor(1.5, requires_grad=True)\nb = torch.tensor(-2.0,"
            " requires_grad=True)\n"
            "(a**2 * b + b).backward()\nanswer = torch.stack([a.grad, b.grad])\n"
            'report("autograd", check("05.hand_chain_rule", answer))',
        ],
    ),
    # item 2: no Python loop
    (
        "apply_",
        [
            "def celsius_to_fahrenheit(celsius):\n"
            "    return celsius.clone().apply_(lambda c: c * 9 / 5 + 32)\n"
            'report("apply_", check("01.celsius_to_fahrenheit", celsius_to_fahrenheit))',
        ],
    ),
    (
        "comprehension",
        [
            "def celsius_to_fahrenheit(celsius):\n"
            "    flat = [c * 9 / 5 + 32 for c in celsius.flatten().tolist()]\n"
            "    return torch.tensor(flat, dtype=celsius.dtype).reshape(celsius.shape)\n"
            'report("comprehension", check("01.celsius_to_fahrenheit", celsius_to_fahrenheit))',
        ],
    ),
    (
        "arithmetic",
        [
            "def celsius_to_fahrenheit(celsius):\n    return celsius * 9 / 5 + 32\n"
            'report("arithmetic", check("01.celsius_to_fahrenheit", celsius_to_fahrenheit))',
        ],
    ),
    # item 3: grad mode left off by a function; items 4: the decorator and the block
    (
        "grad mode left off",
        [
            "def predict(weight, inputs):\n    torch.set_grad_enabled(False)\n    return inputs"
            " @ weight\n"
            'report("left off", check("07.predict_no_grad", predict))\n'
            'print("@@" + json.dumps(["grad mode after", torch.is_grad_enabled(), ""]))',
        ],
    ),
    (
        "decorator",
        [
            "@torch.no_grad()\ndef predict(weight, inputs):\n    return inputs @ weight\n"
            'report("decorator", check("07.predict_no_grad", predict))',
        ],
    ),
    (
        "set_grad_enabled block",
        [
            "def predict(weight, inputs):\n    with torch.set_grad_enabled(False):\n"
            "        return inputs @ weight\n"
            'report("block", check("07.predict_no_grad", predict))',
        ],
    ),
    # 07.eval_loop_fix: the block and a decorated helper pass; recording left off does not
    (
        "eval setup",
        [
            "torch.manual_seed(7)\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Tanh(),"
            " nn.Linear(8, 1))\n"
            "g = cpu_generator(7)\nbatches = [(torch.randn(10, 4, generator=g), "
            "torch.randn(10, 1, generator=g)) for _ in range(3)]",
        ],
    ),
    (
        "eval block",
        [
            "total = 0.0\nwith torch.set_grad_enabled(False):\n    for xb, yb in batches:\n"
            "        loss = nn.functional.mse_loss(model(xb), yb)\n        total += loss.item()\n"
            "mean_loss = total / len(batches)\n"
            'report("eval block", check("07.eval_loop_fix", (mean_loss, loss)))',
        ],
    ),
    (
        "eval helper",
        [
            "@torch.no_grad()\ndef mean_of_losses(batches):\n    total = 0.0\n"
            "    for xb, yb in batches:\n        loss = nn.functional.mse_loss(model(xb), yb)\n"
            "        total += loss.item()\n    return total / len(batches), loss",
            "mean_loss, loss = mean_of_losses(batches)\n"
            'report("eval helper", check("07.eval_loop_fix", (mean_loss, loss)))',
        ],
    ),
    (
        "eval left off",
        [
            "torch.set_grad_enabled(False)\ntotal = 0.0\nfor xb, yb in batches:\n"
            "    loss = nn.functional.mse_loss(model(xb), yb)\n    total += loss.item()\n"
            "mean_loss = total / len(batches)\n"
            'report("eval left off", check("07.eval_loop_fix", (mean_loss, loss)))\n'
            "torch.set_grad_enabled(True)",
        ],
    ),
    # item 3: the Dropout child left in eval mode
    (
        "training flag only",
        [
            "def evaluate(model, x, y):\n    was = model.training\n    model.eval()\n"
            "    with torch.no_grad():\n        loss = F.mse_loss(model(x), y)\n"
            "    model.training = was\n    return loss\n\n"
            "def evaluate_probe(model, x, y):\n    loss = evaluate(model, x, y)\n"
            '    return {"loss": loss, "mode afterwards": "train" if model.training else "eval"}\n'
            'report("training flag", check("11.evaluate", evaluate_probe))',
        ],
    ),
    # item 4: "an integer tensor"
    (
        "int32 columns",
        [
            "answer = torch.arange(12, dtype=torch.int32).view(3, 4).t()\n"
            'report("int32", check("03.column_grid", answer))',
        ],
    ),
    # item 2: two backward() calls, not one on the sum; split over two cells is fine
    (
        "sum of losses",
        [
            "w = torch.tensor([1.0, 2.0], requires_grad=True)\nx = torch.tensor([3.0, -1.0])\n"
            "((w**2).sum() + (w * x).sum()).backward()\n"
            'report("sum", check("06.two_losses_two_calls", w))',
        ],
    ),
    (
        "two calls over two cells",
        [
            "w = torch.tensor([1.0, 2.0], requires_grad=True)\nx = torch.tensor([3.0, -1.0])\n"
            "(w**2).sum().backward()",
            '(w * x).sum().backward()\nreport("two", check("06.two_losses_two_calls", w))',
        ],
    ),
    (
        "one backward for the whole batch",
        [
            "def accumulated_grad(w, x, y, micro):\n    w = w.clone().requires_grad_(True)\n"
            "    ((x @ w - y) ** 2).mean().backward()\n    return w.grad\n"
            'report("whole", check("06.accumulated_grad", accumulated_grad))',
        ],
    ),
    (
        "the formula typed in",
        [
            "def second_derivative_of_tanh(x):\n    t = torch.tanh(x)\n    return -2 * t * (1 -"
            " t**2)\n"
            'report("formula", check("09.second_derivative_tanh", second_derivative_of_tanh))',
        ],
    ),
    (
        "retain_graph",
        [
            "g = cpu_generator(9)\nw = torch.randn(3, 2, generator=g).requires_grad_()\n"
            "inputs = torch.randn(5, 3, generator=g)\nh = torch.tanh(inputs @ w)\n"
            "loss_a = h.pow(2).mean()\nloss_b = (h[:, 0] - h[:, 1]).abs().mean()\n"
            "loss_a.backward(retain_graph=True)\nloss_b.backward()\n"
            'report("retain", check("09.sum_losses", w))',
        ],
    ),
]


@pytest.fixture(scope="module")
def told():
    cells = [SETUP] + [cell for _, scenario in SCENARIOS for cell in scenario]
    nb = run_in_kernel(cells, timeout=300)
    seen: dict[str, list] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines():
                if line.startswith("@@"):
                    name, status, message = json.loads(line[2:])
                    seen.setdefault(name, []).append((status, message))
    return seen


def test_a_hook_registered_one_cell_earlier_counts(told):
    assert told["hook split"] == [("passed", told["hook split"][0][1])]


def test_the_cells_run_for_an_exercise_are_read_until_another_exercise_is_checked(told):
    first, again, after = told["arange split"]
    assert first[0] == "passed" and again[0] == "passed"
    assert after[0] == "failed" and "torch.arange" in after[1]


def test_by_hand_means_no_autograd_in_the_check_s_cell(told):
    typed, after_autograd_cell = told["by hand"]
    assert typed[0] == "passed" and after_autograd_cell[0] == "passed"
    ((status, message),) = told["autograd"]
    assert status == "failed" and "worked out by hand" in message


def test_no_python_loop_rules_out_apply_and_comprehensions(told):
    for name in ("apply_", "comprehension"):
        ((status, message),) = told[name]
        assert status == "failed" and "no Python loop" in message, name
    assert told["arithmetic"][0][0] == "passed"


def test_grad_mode_left_off_by_a_function_is_named_and_switched_back_on(told):
    ((status, message),) = told["left off"]
    assert status == "failed" and "gradient recording was still off" in message
    assert told["grad mode after"] == [(True, "")]


def test_the_no_grad_forms_the_lessons_teach_pass(told):
    for name in ("decorator", "block", "eval block", "eval helper"):
        assert told[name][0][0] == "passed", (name, told[name])


def test_recording_left_off_by_a_cell_is_named(told):
    ((status, message),) = told["eval left off"]
    assert status == "failed" and "recording is still switched off" in message
    assert "`torch.set_grad_enabled(False)` is not a `with` block" in message  # its code shows it


def test_a_submodule_left_in_eval_mode_is_named(told):
    ((status, message),) = told["training flag"]
    assert status == "failed"
    assert "(Dropout)" in message and "model.train(was_training)" in message


def test_an_integer_tensor_may_be_int32(told):
    assert told["int32"][0][0] == "passed", told["int32"]


def test_backward_once_per_loss(told):
    ((status, message),) = told["sum"]
    assert status == "failed" and "one `backward()` call per loss" in message
    assert told["two"][0][0] == "passed", told["two"]


def test_counted_calls(told):
    ((status, message),) = told["whole"]
    assert status == "failed" and "one backward() per micro-batch" in message
    ((status, message),) = told["formula"]
    assert status == "failed" and "two calls to torch.autograd.grad" in message


def test_retain_graph_is_not_a_single_backward_pass(told):
    ((status, message),) = told["retain"]
    assert status == "failed" and "retain_graph" in message
