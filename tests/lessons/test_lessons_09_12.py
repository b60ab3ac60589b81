"""Lessons 09-12: the checkers accept the right answers, reject the wrong ones the lessons warn
about, and the literal answers of the new choice exercises agree with what torch does."""

from __future__ import annotations

import io

import torch
from torch import nn

from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.lessons import get
from course_helpers.lessons.lesson09 import exercises as lesson09
from course_helpers.lessons.lesson10 import exercises as lesson10
from course_helpers.lessons.lesson12 import exercises as lesson12


def _verdict(exercise_id: str, answer):
    exercise = get(exercise_id)
    return judge(exercise, collect(exercise, answer))


# ----------------------------------------------------------------------------------- lesson 09
def _train_both(keep: str, fresh_features: bool = True):
    proj, head, data, target = lesson09._train_both_data()
    losses = []
    features = torch.tanh(data @ proj)
    for _ in range(5):
        if fresh_features:
            features = torch.tanh(data @ proj)
        loss = ((features @ head - target) ** 2).mean()
        loss.backward(retain_graph=not fresh_features)
        with torch.no_grad():
            for p in (proj, head):
                p -= 0.1 * p.grad
                p.grad = None
        losses.append({"item": loss.item(), "detach": loss.detach(), "tensor": loss}[keep])
    return losses


def _what_is_checked(items):
    # the same conversion as the check cell of solutions/09_graph_lifetime.ipynb
    values = [v.item() if isinstance(v, torch.Tensor) and v.numel() == 1 else v for v in items]
    graphs = sum(isinstance(v, torch.Tensor) and v.grad_fn is not None for v in items)
    return {"losses": values, "items holding a graph": graphs}


def test_09_train_both_accepts_floats_and_detached_tensors():
    assert _verdict("09.train_both", _what_is_checked(_train_both("item"))).passed
    assert _verdict("09.train_both", _what_is_checked(_train_both("detach"))).passed


def test_09_train_both_rejects_kept_graphs_and_stale_features():
    kept = _verdict("09.train_both", _what_is_checked(_train_both("tensor")))
    assert not kept.passed and "items holding a graph" in kept.message
    stale = _verdict("09.train_both", _what_is_checked(_train_both("item", False)))
    assert not stale.passed and "losses" in stale.message


def _carry_hidden(detach: str, retain_graph: bool = False):
    """The loop of the exercise, as a learner might write it; `detach`: "start", "end", "never"."""
    sequence, targets, (w_in, w_h, w_out) = lesson09._carry_hidden_data()
    h = torch.zeros(1, 4)
    losses = []
    for start in (0, 4, 8):
        if detach == "start":
            h = h.detach()
        loss = torch.zeros(())
        for t in range(start, start + 4):
            h = torch.tanh(sequence[t : t + 1] @ w_in + h @ w_h)
            loss = loss + (h @ w_out - targets[t : t + 1]).pow(2).sum()
        loss.backward(retain_graph=retain_graph)
        with torch.no_grad():
            for p in (w_in, w_h, w_out):
                p -= 0.1 * p.grad
                p.grad = None
        if detach == "end":
            h.detach_()  # in place, after the update: the same cut
        losses.append(loss.item())
    return losses


def test_09_carry_hidden_accepts_a_cut_at_either_end_of_the_chunk():
    assert _verdict("09.carry_hidden", _carry_hidden("start")).passed
    assert _verdict("09.carry_hidden", _carry_hidden("end")).passed


def test_09_carry_hidden_loop_fails_as_the_lesson_says_and_retain_graph_does_not_help():
    import pytest

    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _carry_hidden("never")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _carry_hidden("never", retain_graph=True)


def _penalised(how: str):
    """The exercise written out by a learner: "grad" (autograd.grad), "reset" (backward with
    create_graph, then w.grad = None) or "kept" (backward with create_graph, .grad kept)."""
    import warnings

    w, xs = lesson09._penalty_data()
    loss = (xs @ w).pow(2).mean()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if how == "grad":
            (grad_w,) = torch.autograd.grad(loss, w, create_graph=True)
        else:
            loss.backward(create_graph=True)
            grad_w = w.grad
            if how == "reset":
                w.grad = None
    (loss + 0.1 * grad_w.pow(2).sum()).backward()
    return w, caught


def test_09_gradient_penalty_accepts_both_fixes_of_the_lesson():
    w, _ = _penalised("grad")
    assert _verdict("09.gradient_penalty", w).passed and not w.grad.requires_grad
    w, _ = _penalised("reset")
    assert _verdict("09.gradient_penalty", w).passed and not w.grad.requires_grad


def test_09_gradient_penalty_rejects_a_gradient_left_in_grad():
    w, _ = _penalised("kept")
    assert w.grad.requires_grad  # the graph the lesson's pitfall warns about
    verdict = _verdict("09.gradient_penalty", w)
    assert not verdict.passed and "counts twice" in verdict.message


# ----------------------------------------------------------------------------------- lesson 10
def _standardize_answer(how: str):
    data = lesson10._standardize_data()

    class Standardize(nn.Module):
        def __init__(self):
            super().__init__()
            for name, value in (("mean", data.mean(dim=0)), ("std", data.std(dim=0))):
                if how == "parameter":
                    setattr(self, name, nn.Parameter(value))
                else:
                    self.register_buffer(name, value, persistent=how == "buffer")

    model = Standardize().double()
    return {"buffers": dict(model.named_buffers()), "state_dict keys": sorted(model.state_dict())}


def test_10_standardize_buffers_accepts_persistent_buffers():
    assert _verdict("10.standardize_buffers", _standardize_answer("buffer")).passed


def test_10_standardize_buffers_rejects_unsaved_buffers_and_parameters():
    unsaved = _verdict("10.standardize_buffers", _standardize_answer("non-persistent"))
    assert not unsaved.passed and "state_dict keys" in unsaved.message
    parameters = _verdict("10.standardize_buffers", _standardize_answer("parameter"))
    assert not parameters.passed and "buffers" in parameters.message


def test_10_parameter_to_answer_matches_torch():
    p = nn.Parameter(torch.ones(2)).to(torch.float64)
    assert type(p) is torch.Tensor and not p.is_leaf
    assert get("10.parameter_to").reference == "b"
    assert "plain Tensor" in get("10.parameter_to").options["b"]


def _resume(load_optimizer: bool):
    x, y = lesson10._checkpoint_data()
    net, opt = lesson10._checkpoint_run()
    lesson10._checkpoint_train(net, opt, x, y, 4)
    buffer = io.BytesIO()
    torch.save({"model": net.state_dict(), "optimizer": opt.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer)
    net, opt = lesson10._checkpoint_run()
    net.load_state_dict(checkpoint["model"])
    if load_optimizer:
        opt.load_state_dict(checkpoint["optimizer"])
    lesson10._checkpoint_train(net, opt, x, y, 4)
    return net.weight.detach().clone()


def test_10_resume_checkpoint_needs_the_optimizer_state():
    assert _verdict("10.resume_checkpoint", _resume(load_optimizer=True)).passed
    assert not _verdict("10.resume_checkpoint", _resume(load_optimizer=False)).passed


# ----------------------------------------------------------------------------------- lesson 11
def test_11_seeded_loader_rejects_a_global_seed():
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(3)
    loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True)
    global_order = [batch.tolist() for (batch,) in loader]
    assert not _verdict("11.seeded_loader", global_order).passed
    assert _verdict("11.seeded_loader", get("11.seeded_loader").reference).passed


def test_11_clip_with_scaler_answer_unscales_before_clipping():
    text = get("11.clip_with_scaler").options[get("11.clip_with_scaler").reference]
    assert text.index("unscale_") < text.index("clip_grad_norm_") < text.index("scaler.step")


def _lrs_used(scheduler_first: bool, per_batch: bool = False):
    """A learner's loop, written out: 4 epochs of 2 batches with a StepLR(2, 0.5)."""
    import warnings

    x, y = torch.randn(16, 3), torch.randn(16, 1)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    lrs = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4):
            if scheduler_first:
                scheduler.step()
            for xb, yb in ((x[:8], y[:8]), (x[8:], y[8:])):
                optimizer.zero_grad()
                nn.functional.mse_loss(model(xb), yb).backward()
                lrs.append(optimizer.param_groups[0]["lr"])
                optimizer.step()
                if per_batch:
                    scheduler.step()
            if not scheduler_first and not per_batch:
                scheduler.step()
    return lrs, [str(w.message) for w in caught]


def test_11_lr_schedule_accepts_the_optimizer_then_scheduler_order():
    lrs, warned = _lrs_used(scheduler_first=False)
    assert warned == []
    assert _verdict("11.lr_schedule", lrs).passed


def test_11_lr_schedule_rejects_the_orders_torch_warns_about_or_not():
    lrs, warned = _lrs_used(scheduler_first=True)
    assert any("before `optimizer.step()`" in w for w in warned)  # torch's own warning
    early = _verdict("11.lr_schedule", lrs)
    assert not early.passed and "before the epoch's optimizer steps" in early.message
    lrs, warned = _lrs_used(scheduler_first=False, per_batch=True)
    assert warned == []  # no warning for the wrong frequency: only the check sees it
    per_batch = _verdict("11.lr_schedule", lrs)
    assert not per_batch.passed and "after every batch" in per_batch.message


# ----------------------------------------------------------------------------------- lesson 12
def test_12_first_nonfinite_reference_on_known_runs():
    f = lesson12._first_nonfinite
    assert f([1.0, 2.0, float("inf"), float("nan")]) == 2
    assert f([float("-inf")]) == 0
    assert f([1.0, 1e300]) == -1  # finite in float64
    assert f([]) == -1


def test_12_first_nonfinite_rejects_a_check_for_nan_only():
    def nan_only(losses):
        bad = torch.isnan(torch.tensor(losses, dtype=torch.float64)).nonzero()
        return int(bad[0, 0]) if len(bad) else -1

    assert not _verdict("12.first_nonfinite", nan_only).passed
    assert _verdict("12.first_nonfinite", lesson12._first_nonfinite).passed
