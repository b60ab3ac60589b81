"""The r4 walkthrough's findings about single exercises
(numbered as that beginner walkthrough found them; its scripts are in benchmarks/walkthrough/).

Every "how" a task states is checked, and a cause says only what the code shows. The answers
run in a real kernel after the solutions notebook's own cells up to the exercise, as a
learner's cell runs (the method checks read IPython's cell history there); lesson 13's run
on two ranks and a few function answers are checked directly. Each test failed before.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import torch

from course_helpers import check

ROOT = Path(__file__).resolve().parents[2]
CHECK = re.compile(r'check\("(\d\d\.\w+)"')


def _after(lesson: str, exercise_id: str, cells: list[str]) -> list[str]:
    """What each of ``cells`` shows, run after the solutions notebook's code cells that come
    before ``exercise_id``'s check cell; each cell follows the given lines of that check cell
    (those before its solution, when they stand at the top level)."""
    from nbclient import NotebookClient

    (path,) = ROOT.glob(f"solutions/{lesson}_*.ipynb")
    before = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code" or "course-colab-link" in cell.metadata.get("tags", []):
            continue
        found = CHECK.search(cell.source)
        if found and found.group(1) == exercise_id:
            setup, marker, _ = cell.source.partition("### BEGIN SOLUTION")
            if not marker or not setup.endswith("\n"):  # inside a def: nothing given
                setup = ""
            break
        before.append(cell.source)
    nb = nbformat.v4.new_notebook()
    sources = ["import os\nos.environ['COURSE_PROGRESS'] = 'off'", *before]
    nb.cells = [nbformat.v4.new_code_cell(s) for s in [*sources, *[setup + c for c in cells]]]
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    return [
        "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in c.outputs)
        for c in nb.cells[len(sources) :]
    ]


def test_12_a_table_built_by_outer_is_not_the_broadcasting_the_task_asks_for():
    outer, broadcast = _after(
        "04",
        "04.times_table",
        [
            "numbers = torch.arange(1, 6)\nanswer = torch.outer(numbers, numbers)\n"
            'check("04.times_table", answer)',
            "numbers = torch.arange(1, 6)\nanswer = numbers[:, None] * numbers[None, :]\n"
            'check("04.times_table", answer)',
        ],
    )
    assert "not the way the task asks" in outer and "Your code calls `outer`" in outer
    assert "✓ Passed" in broadcast


def test_28_eight_steps_without_a_checkpoint_do_not_pass_the_checkpoint_task():
    uninterrupted, resumed = _after(
        "10",
        "10.resume_checkpoint",
        [
            "net, optimizer = make_run()\ntrain(net, optimizer, 8)\n"
            "answer = net.weight.detach().clone()\n"
            'check("10.resume_checkpoint", answer)',
            "net, optimizer = make_run()\ntrain(net, optimizer, 4)\nbuffer = io.BytesIO()\n"
            'torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict()}, buffer)\n'
            "buffer.seek(0)\ncheckpoint = torch.load(buffer)\nnet, optimizer = make_run()\n"
            'net.load_state_dict(checkpoint["model"])\n'
            'optimizer.load_state_dict(checkpoint["optimizer"])\n'
            "train(net, optimizer, 4)\nanswer = net.weight.detach().clone()\n"
            'check("10.resume_checkpoint", answer)',
        ],
    )
    assert "not the way the task asks" in uninterrupted and "load_state_dict" in uninterrupted
    assert "✓ Passed" in resumed


def test_6_a_named_device_or_dtype_is_told_even_when_the_values_come_out_right():
    (named,) = _after(
        "02",
        "02.match_like",
        [
            "def match_like(values, reference):\n"
            '    if reference.device.type == "meta":\n'
            '        return values.to("meta").to(reference.dtype)\n'
            "    return values.to(reference.dtype)\n\n\n"
            'check("02.match_like", match_like)'
        ],
    )
    assert "Not yet" in named and "Your code names a device" in named


def test_19_20_a_zero_grad_named_without_parentheses_is_told_so():
    (uncalled,) = _after(
        "06",
        "06.fix_training_loop",
        [
            "def fit_line(x, y, steps=50, lr=0.1):\n"
            "    w = torch.zeros((), requires_grad=True)\n"
            "    b = torch.zeros((), requires_grad=True)\n"
            "    opt = torch.optim.SGD([w, b], lr=lr)\n"
            "    for _ in range(steps):\n"
            "        opt.zero_grad\n"
            "        loss = ((w * x + b - y) ** 2).mean()\n"
            "        loss.backward()\n"
            "        opt.step()\n"
            "    return torch.tensor([w.item(), b.item()])\n\n\n"
            'check("06.fix_training_loop", fit_line)\n'
            'hint("06.fix_training_loop")'
        ],
    )
    assert "`opt.zero_grad` on a line of its own, without parentheses" in uncalled
    assert "What does the line `opt.zero_grad` do without parentheses?" in uncalled  # the hint
    assert "before the loop" not in uncalled  # (#19: no place the code does not show)


def test_19_the_zero_grad_cause_does_not_place_the_call_before_the_loop():
    from course_helpers.lessons import for_exercise

    (entry,) = [m for m in for_exercise("06.fix_training_loop") if m.evidence]
    assert "once before the loop does not help" not in entry.cause_for(None)


def test_18_22_9_2_the_cause_says_what_this_code_did():
    too_late, never = _after(
        "05",
        "05.keep_intermediate_grad",
        [
            "u = a * b\nf = u * a + u\nf.backward()\nu.retain_grad()\nanswer = u\n"
            'check("05.keep_intermediate_grad", answer)',
            "u = a * b\nf = u * a + u\nf.backward()\nanswer = u\n"
            'check("05.keep_intermediate_grad", answer)',
        ],
    )
    assert "Your code calls `retain_grad` after `backward`" in too_late
    assert "Your code calls" not in never
    (module_flag,) = _after(
        "07",
        "07.freeze_first",
        [
            "model[0].requires_grad = False\ntrain(model, inputs, targets)\n"
            'answer = model[2].weight\ncheck("07.freeze_first", answer)'
        ],
    )
    assert "Your code uses `.requires_grad`: assigning" in module_flag
    assert "requires_grad_(False)" in module_flag
    (cat_view,) = _after(
        "03",
        "03.pair_columns",
        ['answer = torch.cat([xs, ys]).view(3, 2)\ncheck("03.pair_columns", answer)'],
    )
    assert "(2, 3)" not in cat_view and "Your code calls `view`: view and reshape" in cat_view
    (tensor_floats,) = _after(
        "01",
        "01.arange_grid",
        ['answer = torch.Tensor(range(12)).reshape(3, 4)\ncheck("01.arange_grid", answer)'],
    )
    assert "Your code calls `Tensor`" in tensor_floats and "arange(12.0)" not in tensor_floats


def first_nonfinite_in_float32(losses):
    bad = (~torch.isfinite(torch.tensor(losses, dtype=torch.float32))).nonzero()
    return int(bad[0, 0]) if len(bad) else -1


def test_29_a_float32_tensor_of_the_losses_misses_a_huge_finite_loss():
    result = check("12.first_nonfinite", first_nonfinite_in_float32)
    assert result.status == "failed"
    assert "is 1 but 2 is expected" in result.message


def pick_backend_as_a_list(cuda_count, local_rank, local_world_size):
    if cuda_count >= local_world_size:
        return ["nccl", f"cuda:{local_rank}"]
    return ["gloo", "cpu"]


def test_33_a_list_is_not_the_tuple_the_task_asks_for():
    result = check("13.pick_backend", pick_backend_as_a_list)
    assert result.status == "failed"
    assert "is a list, but a tuple is expected" in result.message


def evaluate_returning_a_tensor(rank, world_size, workdir):
    g = torch.Generator().manual_seed(13)
    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
    x, y = x[:5], y[:5]
    torch.manual_seed(0)
    model = nn.Linear(3, 1)  # noqa: F821 - the rank script provides nn, F and dist
    rows = list(range(rank, 5, world_size))
    with torch.no_grad():
        total = F.mse_loss(model(x[rows]), y[rows], reduction="sum")  # noqa: F821
    sums = torch.stack([total, torch.tensor(float(len(rows)))])
    dist.all_reduce(sums)  # noqa: F821
    return sums[0] / sums[1]


def epoch_orders_new_sampler_each_epoch(rank, world_size, workdir):
    dataset = TensorDataset(torch.arange(12))  # noqa: F821
    orders = []
    for epoch in range(3):
        sampler = DistributedSampler(dataset, shuffle=True, seed=epoch)  # noqa: F821
        loader = DataLoader(dataset, batch_size=3, sampler=sampler)  # noqa: F821
        orders.append([i for (batch,) in loader for i in batch.tolist()])
    return orders


@pytest.mark.parametrize(
    ("exercise_id", "function", "told"),
    [
        ("13.exact_evaluation", evaluate_returning_a_tensor, "asks for a Python number"),
        (
            "13.fix_set_epoch",
            epoch_orders_new_sampler_each_epoch,
            "Your code calls `DistributedSampler` more than once",
        ),
    ],
)
def test_33_the_stated_form_of_a_rank_function_is_checked(exercise_id, function, told):
    import inspect

    from answer_cells import as_answer_cell

    from course_helpers.lessons.lesson13.exercises import run_on_two_ranks

    cell = inspect.getsource(function) + f"check({exercise_id!r}, answer)\n"
    with as_answer_cell(cell):  # the cell that defines the function, runs it and checks it
        results = run_on_two_ranks(function)
        answer = torch.stack([torch.as_tensor(r["value"]) for r in results])
        result = check(exercise_id, answer)
    assert result.status == "failed", result.message
    assert "The values are right, but not the way the task asks" in result.message
    assert told in result.message
