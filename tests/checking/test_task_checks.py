"""What a task demands besides the value (issue 12): 10.fix_optimizer_order keeps every line,
10.fix_scaler registers its parameter in the module, 12.keep_penalty_graph reaches every
parameter."""

import ast
import io

import pytest
import torch
from answer_cells import check_answer_cell
from torch import nn

from course_helpers import check
from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.checking.task_checks import compare_lines, statements
from course_helpers.environment.notebook import cpu_generator
from course_helpers.lessons import get
from course_helpers.lessons.lesson10.exercises import _HEAD_TASK

OLD_ORDER = "optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\nnet[2] = nn.Linear(4, 1)\n"
NEW_ORDER = "net[2] = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"


def _names():
    return {"torch": torch, "nn": nn, "cpu_generator": cpu_generator}


# --------------------------------------------------------------- 10.fix_optimizer_order
def test_reordered_lines_pass_comments_and_layout_aside():
    code = _HEAD_TASK.replace(OLD_ORDER, NEW_ORDER.replace("\n", "  # moved\n", 1))
    result = check_answer_cell("10.fix_optimizer_order", code, _names())
    assert result.passed, result.message


@pytest.mark.parametrize(
    "added",
    [
        "optimizer = torch.optim.SGD(net.parameters(), lr=0.1)",
        "optimizer.add_param_group({'params': net[2].parameters()})",
    ],
)
def test_an_added_line_fails_although_the_values_are_right(added):
    code = _HEAD_TASK.replace("net[2] = nn.Linear(4, 1)\n", f"net[2] = nn.Linear(4, 1)\n{added}\n")
    result = check_answer_cell("10.fix_optimizer_order", code, _names())
    assert result.status == "failed"
    assert result.message.startswith("The values are right, but not the way the task asks.")
    assert f"(`{added}`)" in result.message.replace('"', "'")
    assert "keep every line and change only their order" in result.message


def test_a_dropped_line_fails():
    code = _HEAD_TASK.replace(OLD_ORDER, "net[2] = nn.Linear(4, 1)\n")
    code = code.replace("    optimizer.zero_grad()\n", "")
    code = code.replace(
        "for _ in range(20):\n",
        "optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "for _ in range(20):\n"
        "    net.zero_grad()\n",
    )
    result = check_answer_cell("10.fix_optimizer_order", code, _names())
    assert result.status == "failed"
    assert "lacks this line (`optimizer.zero_grad()`)" in result.message
    assert "(`net.zero_grad()`)" in result.message


def test_statements_count_the_lines_inside_a_loop():
    tree = ast.parse(
        "for i in range(2):\n    a = i  # note\n    print(a)\ncheck('x', a)\nb = ...\n"
    )
    assert statements(tree) == ["for i in range(2):", "a = i"]
    assert compare_lines("a = 1\nb = 2\n", ast.parse("b = 2\na = 1\nc = 3\n")) == {
        "extra_lines": ["c = 3"],
        "missing_lines": [],
    }


# ------------------------------------------------------------------------ 10.fix_scaler
SCALER = """g = cpu_generator(10)
x = torch.randn(16, 3, generator=g)
y = x * torch.tensor([2.0, -1.0, 0.5]) + torch.tensor([1.0, 0.0, -1.0])


class Scaler(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scale = SCALE
        self.shift = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        return x * self.scale + self.shift


model = Scaler(3)
optimizer = torch.optim.SGD(PARAMS, lr=0.1)
for _ in range(30):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
answer = model.state_dict()
"""


def _scaler(scale, params="model.parameters()"):
    names = _names()
    exec(SCALER.replace("SCALE", scale).replace("PARAMS", params), names)
    return names["answer"]


def test_the_registered_parameter_passes():
    assert check("10.fix_scaler", _scaler("nn.Parameter(torch.ones(n))")).passed


def test_a_plain_tensor_handed_to_the_optimizer_fails_and_is_named():
    answer = _scaler("torch.ones(n, requires_grad=True)", "[*model.parameters(), model.scale]")
    result = check("10.fix_scaler", answer)
    assert result.status == "failed"
    assert "lacks the key 'scale'" in result.message
    assert "handed it to the optimizer yourself" in result.message


# ---------------------------------------------------------------- 12.keep_penalty_graph
def penalty_half_cut(model):
    params = list(model.parameters())
    return params[0].pow(2).sum() + sum(p.pow(2).sum().item() for p in params[1:])


def penalty(model):
    return sum(p.pow(2).sum() for p in model.parameters())


def test_a_penalty_cut_off_from_some_parameters_fails_and_names_them():
    result = check("12.keep_penalty_graph", penalty_half_cut)
    assert result.status == "failed"
    first = get("12.keep_penalty_graph").cases(cpu_generator(0))[0][0]
    names = [n for n, _ in first.named_parameters()]
    assert f"does not reach {', '.join(names[1:])}:" in result.message
    assert "later results differ" in result.message


def test_the_connected_penalty_passes_and_its_probe_travels_to_the_grader():
    exercise = get("12.keep_penalty_graph")
    submission = collect(exercise, penalty)
    assert submission["method"]["cut_off"] == {}
    assert judge(exercise, submission).passed
    cut = collect(exercise, penalty_half_cut)
    buffer = io.BytesIO()
    torch.save(cut, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    assert loaded["method"]["cut_off"]["input"] == 1
    assert not judge(exercise, loaded).passed
