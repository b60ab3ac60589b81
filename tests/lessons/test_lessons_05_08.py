"""Lessons 05-08: the answers of "predict" exercises agree with what torch really does.

Each choice exercise below stores its answer as a literal (an option key or a number). These
tests run the exercise's code and derive the answer from torch, so a wrong key, or a torch
release that changes the behaviour, fails here instead of teaching something false.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from course_helpers.lessons import get
from course_helpers.testing.pytest_plugin import sanitize


def _option_showing(exercise_id: str, value) -> str:
    """The key of the option whose text is the printed form of ``value``."""
    options = get(exercise_id).options
    found = [key for key, text in options.items() if text.replace(" ", "") == value]
    assert len(found) == 1, (value, options)
    return found[0]


# ----------------------------------------------------------------------------------- lesson 05
def test_05_max_dim_tie_matches_torch():
    s = torch.tensor([2.0, 5.0, 5.0, 1.0], requires_grad=True)
    s.max(dim=0).values.backward()
    printed = "tensor([" + ",".join(f"{v:g}." for v in s.grad.tolist()) + "])"
    assert get("05.max_dim_tie").reference == _option_showing("05.max_dim_tie", printed)
    # and the full reduction, which option (a) describes, shares the gradient instead
    s.grad = None
    s.max().backward()
    assert s.grad.tolist() == [0.0, 0.5, 0.5, 0.0]


def test_05_mul_saves_only_the_factor_a_gradient_needs():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, 4.0])
    node = (w * x).grad_fn
    assert node._saved_self is None and torch.equal(node._saved_other, x)
    assert get("05.mul_saves").options[get("05.mul_saves").reference] == "only x"


def test_05_hook_halve_reference_gradient_is_five():
    assert get("05.hook_halve").reference.grad.item() == 5.0


# ----------------------------------------------------------------------------------- lesson 07
def _freeze_midway(set_to_none: bool, clear_on_freeze: bool = False) -> float:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    inputs, targets = torch.randn(16, 3), torch.randn(16, 1)
    sgd = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    at_freeze = None
    for step in range(8):
        if step == 3:
            net[0].requires_grad_(False)
            at_freeze = net[0].weight.detach().clone()
            if clear_on_freeze:
                net[0].weight.grad = None
        sgd.zero_grad(set_to_none=set_to_none)
        nn.functional.mse_loss(net(inputs), targets).backward()
        sgd.step()
    return (net[0].weight.detach() - at_freeze).abs().max().item()


def test_07_frozen_momentum_weight_keeps_moving_only_with_a_zero_grad():
    assert _freeze_midway(set_to_none=False) > 0
    assert _freeze_midway(set_to_none=True) == 0
    assert _freeze_midway(set_to_none=False, clear_on_freeze=True) == 0
    assert get("07.frozen_momentum").reference == "b"


@pytest.mark.parametrize("under_no_grad", [False, True])
def test_07_frozen_batchnorm_statistics_move_until_eval(under_no_grad):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    model.requires_grad_(False)
    before = model[1].running_mean.clone()
    with torch.set_grad_enabled(not under_no_grad):
        model(torch.randn(8, 3))
    assert not torch.equal(before, model[1].running_mean)  # options (a) and (c) do not help
    model.eval()
    before = model[1].running_mean.clone()
    model(torch.randn(8, 3))
    assert torch.equal(before, model[1].running_mean)
    assert get("07.frozen_batchnorm").reference == "b"


def test_07_created_in_no_grad_is_a_leaf_that_requires_grad():
    with torch.no_grad():
        w = torch.zeros(3, requires_grad=True)
        v = w * 2
    assert w.requires_grad and w.is_leaf and not v.requires_grad and v.grad_fn is None
    assert get("07.created_in_no_grad").reference == "a"


# ----------------------------------------------------------------------------------- lesson 08
def test_08_silent_cast_matches_torch():
    counts = torch.tensor([4, 5, 6])
    counts[0] = 2.9
    counts[1:].copy_(torch.tensor([-1.5, 7.99]))
    printed = "tensor([" + ",".join(str(v) for v in counts.tolist()) + "])"
    assert get("08.silent_cast").reference == _option_showing("08.silent_cast", printed)
    with pytest.raises(RuntimeError, match="can't be cast"):
        counts.add_(0.5)  # in-place arithmetic refuses, so option (a) is about another case


def test_08_version_getitem_matches_torch():
    t = torch.zeros(3)
    t[0] += 1
    t.add_(1)
    assert get("08.version_getitem").reference == t._version == 3


def test_08_copyslices_grad_matches_torch():
    b = torch.tensor(3.0, requires_grad=True)
    h = torch.ones(3)
    h[1] = b * b
    (h * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert type(h.grad_fn).__name__ == "CopySlices"
    assert get("08.copyslices_grad").reference == b.grad.item() == 12.0


def _two_losses(order):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    out = net(torch.tensor([[1.0, 2.0], [3.0, -1.0]]))
    loss_a, loss_b = out.pow(2).mean(), (out - 1).abs().mean()
    loss_a.backward(retain_graph=True)
    for action in order:
        if action == "step":
            optimizer.step()
        elif action == "zero_grad":
            optimizer.zero_grad()
        elif action == "no_grad_step":
            with torch.no_grad():
                optimizer.step()
        elif action == "backward_b_retain":
            loss_b.backward(retain_graph=True)
        else:
            loss_b.backward()


@pytest.mark.parametrize(
    "order",
    [["step", "backward_b"], ["no_grad_step", "backward_b"], ["step", "backward_b_retain"]]
    + [["step", "zero_grad", "backward_b"]],
)
def test_08_step_between_every_wrong_option_still_fails(order):
    with pytest.raises(RuntimeError, match="is at version 2; expected version 1"):
        _two_losses(order)


def test_08_step_between_right_option_works():
    _two_losses(["backward_b", "step"])
    assert get("08.step_between").reference == "a"


@pytest.mark.parametrize(
    ("key", "make_view"),
    [
        ("a", lambda h: h[:2]),
        ("b", lambda h: h.chunk(2)[0]),
        ("c", lambda h: h.narrow(0, 0, 2)),
    ],
)
def test_08_multi_view_only_the_chunk_refuses(key, make_view):
    h = torch.tensor([0.5, -1.0, 2.0, 1.0], requires_grad=True) * 1
    if key == get("08.multi_view").reference:
        with pytest.raises(RuntimeError, match="returns multiple views"):
            make_view(h).mul_(2)
    else:
        make_view(h).mul_(2)


def test_08_anomaly_culprit_message_names_the_in_place_mul():
    """The exercise's hints read 'output 0 of Mul' and the anomaly report of h4 = h3 * h1.

    torch 2.13 and 2.14 write "output 0 of Mul", torch 2.11 "output 0 of MulBackward0": the
    message is read through the sanitizer rule nbval uses for that difference, so either
    form passes and any other node fails (tests/testing/test_version_differences.py)."""

    def forward(x):
        h1 = torch.tanh(x)
        h2 = h1 * 3
        h2.add_(1)
        h3 = torch.exp(h2)
        h3_copy = h3.clone()
        h3_copy.zero_()
        h4 = h3 * h1
        h1.mul_(0.5)
        h5 = h4 + 1
        h5.sub_(1)
        return h5.sum()

    x = torch.tensor([0.1, -0.3], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.set_detect_anomaly(True):
            with pytest.raises(RuntimeError) as raised:
                forward(x).backward()
    assert "output 0 of Mul, is at version 1" in sanitize(str(raised.value)), raised.value
    report = "\n".join(str(w.message) for w in caught)
    assert "h4 = h3 * h1" in report
    assert get("08.anomaly_culprit").reference == "c"


def test_08_silent_downcast_matches_torch():
    total = torch.zeros(1, dtype=torch.int32)
    assert (total + torch.tensor([3_000_000_000])).dtype == torch.int64  # out of place widens
    total += torch.tensor([3_000_000_000])
    assert total.dtype == torch.int32
    assert get("08.silent_downcast").reference == total.item()


def test_07_frozen_middle_layer_is_back_propagated_through():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
    net[2].requires_grad_(False)
    net(torch.randn(8, 3)).pow(2).mean().backward()
    has_grad = [i for i in (0, 2, 4) if net[i].weight.grad is not None]
    assert has_grad == [0, 4]
    assert get("07.frozen_middle").reference == "b"


def test_07_frozen_prefix_with_a_missed_weight_saves_less_under_no_grad():
    from course_helpers import SavedTensorMeter

    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU())
    head = nn.Linear(256, 10)
    backbone.requires_grad_(False)
    backbone[2].weight.requires_grad_(True)
    x, y = torch.randn(16, 64), torch.randint(0, 10, (16,))

    def saved_bytes(under_no_grad):
        meter = SavedTensorMeter(ignore=[*backbone.parameters(), *head.parameters(), x, y])
        with meter:
            with torch.set_grad_enabled(not under_no_grad):
                features = backbone(x)
            loss = nn.functional.cross_entropy(head(features), y)
        saved = meter.nbytes
        del loss
        return saved

    assert saved_bytes(under_no_grad=True) < saved_bytes(under_no_grad=False)
    assert get("07.frozen_prefix_missed").reference == "b"
