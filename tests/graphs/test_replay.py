"""replay_backward: engine order, gradients per step, learner tensors left as a plain backward."""

from __future__ import annotations

import re
import shutil
import sys
from html import escape, unescape

import pytest
import torch

from course_helpers import CourseError, replay_backward
from course_helpers.graphs import dot as graph_module
from course_helpers.graphs import replay as replay_module
from course_helpers.graphs.styles import ACTIVE_FILL, DONE, HIGHLIGHT
from course_helpers.widgets import RUN_DOWN_TO_HERE, STALE_NOTE


def classic():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    loss = ((x * y + x) ** 2).sum()
    return x, y, loss


def mlp(seed=0):
    gen = torch.Generator().manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    data = torch.randn(5, 4, generator=gen)
    return model, model(data).pow(2).mean()


@pytest.fixture
def count_steps(monkeypatch):
    """Count every step object the replay's hooks create, even after the replay returned."""
    made = []
    original = replay_module.ReplayStep

    def counting(*args, **kwargs):
        step = original(*args, **kwargs)
        made.append(step)
        return step

    monkeypatch.setattr(replay_module, "ReplayStep", counting)
    return made


def test_classic_steps_in_engine_order_with_hand_derived_gradients():
    x, y, loss = classic()
    replay = replay_backward(loss, {"x": x, "y": y})
    names = [(s.node, s.name) for s in replay.steps]
    assert names == [
        ("n1", "SumBackward0"),
        ("n2", "PowBackward0"),
        ("n3", "AddBackward0"),
        ("n4", "MulBackward0"),
        ("n5", "AccumulateGrad"),
        ("n7", "AccumulateGrad"),
    ]
    # w = x*y + x = [4, 10]; d loss/dw = 2w = [8, 20]
    pow_step = replay.steps[1]
    assert torch.equal(pow_step.grad_out[0][1], torch.tensor([8.0, 20.0]))
    mul_step = replay.steps[3]  # d/dx (x*y) = y, d/dy = x
    assert mul_step.grad_out[0][0] == "n5" and mul_step.grad_out[1][0] == "n7"
    assert torch.equal(mul_step.grad_out[0][1], torch.tensor([24.0, 80.0]))
    assert torch.equal(mul_step.grad_out[1][1], torch.tensor([8.0, 40.0]))
    # x's AccumulateGrad receives 8+24 and 20+80: the engine summed both branches first
    acc_x = replay.steps[4]
    assert acc_x.leaf == "x" and torch.equal(acc_x.grad_in[0], torch.tensor([32.0, 100.0]))
    assert torch.equal(acc_x.leaf_grad, torch.tensor([32.0, 100.0]))
    table = replay.table()
    assert table.splitlines()[0].startswith("backward replay of output: 6 steps")
    assert "x.grad = [32.0000, 100.0000]" in table
    assert "-> n5: [24.0000, 80.0000]; -> n7: [8.0000, 40.0000]" in table
    assert str(replay) == repr(replay) == table and len(replay) == 6


def test_grad_equals_a_plain_backward_and_no_hook_remains(count_steps):
    model, loss = mlp()
    reference, ref_loss = mlp()
    ref_loss.backward()
    replay = replay_backward(loss, model, retain_graph=True)
    for (name, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
        assert torch.equal(p.grad, q.grad), name
    accumulated = sorted(s.leaf for s in replay.steps if s.name == "AccumulateGrad")
    assert accumulated == sorted(name for name, _ in model.named_parameters())
    made = len(count_steps)
    assert made == len(replay.steps)
    loss.backward()  # the graph was retained: a second plain backward runs no hook of ours
    ref_loss2 = mlp()[1]
    ref_loss2.backward()
    assert len(count_steps) == made
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        assert torch.allclose(p.grad, 2 * q.grad)


def test_existing_grad_accumulates_as_in_plain_backward():
    x, y, loss = classic()
    x.grad = torch.tensor([1.0, 1.0])
    replay = replay_backward(loss, {"x": x, "y": y})
    assert torch.equal(x.grad, torch.tensor([33.0, 101.0]))
    assert torch.equal(y.grad, torch.tensor([8.0, 40.0]))
    assert "x.grad = [33.0000, 101.0000]" in replay.table()
    assert "grad [1.0000, 1.0000]" in replay.picture(1).text()  # before x accumulates


def test_graph_is_freed_unless_retain_graph():
    _, _, loss = classic()
    replay_backward(loss)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    _, _, kept = classic()
    replay_backward(kept, retain_graph=True)
    kept.backward()  # still possible


def test_replaying_a_freed_graph_is_explained():
    _, _, loss = classic()
    loss.backward()
    with pytest.raises(CourseError, match="Run the forward computation again"):
        replay_backward(loss)


def test_hooks_are_removed_when_backward_fails(count_steps):
    x = torch.ones(3, requires_grad=True)
    a = x * 2
    b = a.exp()
    b.add_(1)  # exp saved its result; backward through it must fail
    with pytest.raises(CourseError, match="modified by an inplace operation"):
        replay_backward(b.sum())
    made = len(count_steps)
    assert made >= 1
    a.sum().backward()  # MulBackward0 was hooked during the failed replay
    assert len(count_steps) == made
    assert torch.equal(x.grad, torch.full((3,), 2.0))


def test_non_scalar_output_needs_gradient():
    x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    out = x.relu() * 3
    with pytest.raises(CourseError, match="gradient=torch.ones_like"):
        replay_backward(out)
    with pytest.raises(CourseError, match="shape"):
        replay_backward(out, gradient=torch.ones(3))
    replay = replay_backward(out, {"x": x}, gradient=torch.ones_like(out))
    assert torch.equal(x.grad, torch.tensor([[3.0, 0.0], [3.0, 3.0]]))
    assert replay.steps[-1].leaf == "x"


def test_bad_input():
    with pytest.raises(CourseError, match="replay_backward expects a tensor"):
        replay_backward("loss")
    with pytest.raises(CourseError, match="single tensor"):
        replay_backward([torch.ones(1)])
    with pytest.raises(CourseError, match="requires_grad=True"):
        replay_backward(torch.ones(()))


def test_step_pictures_mark_running_and_finished_nodes():
    x, y, loss = classic()
    replay = replay_backward(loss, {"x": x, "y": y})
    fourth = replay.picture(4)
    assert [n.id for n in fourth.nodes if n.active] == ["n4"]
    assert [n.id for n in fourth.nodes if n.done] == ["n1", "n2", "n3"]
    assert "> n4" in fourth.text() and "in: [8.0000, 20.0000]" in fourth.text()
    last = replay.picture(6).text()
    assert "grad [32.0000, 100.0000]" in last and "grad [8.0000, 40.0000]" in last
    with pytest.raises(CourseError, match="from 1 to 6"):
        replay.picture(7)


def test_leaf_boxes_stand_for_accumulate_grad_when_hidden():
    x, y, loss = classic()
    replay = replay_backward(loss, {"x": x, "y": y}, show_accumulate=False)
    acc = [(s.node, s.leaf) for s in replay.steps if s.name == "AccumulateGrad"]
    assert acc == [("n5", "x"), ("n6", "y")]


def test_collapsed_chain_steps_point_at_the_collapsed_box():
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(40):
        y = y.sin()
    replay = replay_backward(y.sum(), {"x": x}, max_nodes=10)
    collapsed = {n.id for n in replay._base.nodes if n.kind == "collapsed"}
    assert len(collapsed) == 1
    assert sum(s.node in collapsed for s in replay.steps) >= 38
    assert torch.allclose(x.grad, _chain_grad())


def _chain_grad():
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(40):
        y = y.sin()
    y.sum().backward()
    return x.grad


def scalar_example():
    """Lesson 05's example: loss = (x*y + x)**2 at x = 2, y = 3."""
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    return x, y, (x * y + x) ** 2


def test_gradients_travel_on_the_edges_of_the_current_step():
    x, y, loss = scalar_example()
    replay = replay_backward(loss, {"x": x, "y": y})
    # w = x*y + x = 8, dloss/dw = 2w = 16; the addition passes 16 to both of its inputs;
    # the product sends 16*y = 48 towards x and 16*x = 32 towards y; x gets 16 + 48 = 64
    assert replay.picture(1).edge_labels == {("n2", "n1"): "16.0000"}
    assert replay.picture(2).edge_labels == {("n3", "n2"): "16.0000", ("n4", "n2"): "16.0000"}
    assert replay.picture(3).edge_labels == {("n4", "n3"): "48.0000", ("n6", "n3"): "32.0000"}
    assert replay.picture(4).edge_labels == {("n5", "n4"): "64.0000"}  # into x's .grad
    assert torch.equal(x.grad, torch.tensor(64.0)) and torch.equal(y.grad, torch.tensor(32.0))
    source = replay.picture(3).source
    # arrows drawn the way gradients flow (dir=back), the layout of the forward graph kept
    assert 'n4 -> n3 [dir=back color="#d62728" penwidth=2 xlabel="48.0000"' in source
    assert "n5 -> n4 [dir=back]\n" in source  # edges not used at this step stay plain


def test_large_gradients_on_edges_show_their_shape():
    model, loss = mlp()
    replay = replay_backward(loss, model)
    labels = [
        text for k in range(1, len(replay) + 1) for text in replay.picture(k).edge_labels.values()
    ]
    assert "(5, 2)" in labels  # the gradient of the model's output: shape, not 10 values
    assert all(not text.startswith("[") or text.count(",") < 3 for text in labels)


def test_nodes_keep_their_in_line_once_they_ran():
    x, y, loss = scalar_example()
    replay = replay_backward(loss, {"x": x, "y": y})
    last = {n.id: n.lines for n in replay.picture(5).nodes}
    assert last["n1"][-1] == "in: 1.0000" and last["n2"][-1] == "in: 16.0000"
    assert last["n3"][-1] == "in: 16.0000" and last["n4"][-1] == "in: 64.0000"
    assert last["n5"] == ("x scalar", "grad 64.0000")
    first = {n.id: n.lines for n in replay.picture(1).nodes}
    assert not any(line.startswith("in:") for line in first["n2"])  # not run yet


def node_rects(svg: str) -> list[tuple[str, ...]]:
    return re.findall(r"<title>(n\d+)</title>\s*<(?:rect|polygon) ([^>]*?)(?: fill=| rx=)", svg)


def geometry(svg: str):
    """Size of the picture and the position of every box (either renderer)."""
    size = re.search(r'<svg[^>]*?width="([\d.]+)(?:pt)?" height="([\d.]+)', svg).groups()
    fallback = re.findall(
        r'<title>(n\d+)</title>\s*<rect (x="[^"]+" y="[^"]+" width="[^"]+" height="[^"]+")', svg
    )
    dot = re.findall(r'<title>(n\d+)</title>\s*<polygon [^>]*points="([^"]+)"', svg)
    return size, fallback or dot


@pytest.mark.parametrize("use_dot", [False, True])
def test_layout_is_the_same_at_every_step(monkeypatch, use_dot):
    if use_dot and shutil.which("dot") is None:
        pytest.skip("Graphviz dot is not installed here")
    monkeypatch.delenv("COURSE_GRAPHVIZ", raising=False)
    if not use_dot:
        monkeypatch.setattr(graph_module, "graphviz_dot", lambda: None)
        monkeypatch.setitem(graph_module._notice, "given", False)  # step 1 gets the notice
    model, loss = mlp()
    replay = replay_backward(loss, model)
    svgs = [replay.picture(k).svg() for k in range(1, len(replay) + 1)]
    first = geometry(svgs[0])
    assert len(first[1]) == len(replay._base.nodes)
    for svg in svgs[1:]:
        assert geometry(svg) == first
    assert svgs[0] != svgs[1]  # the colours and texts do change
    if not use_dot:  # the notice once, on step 1; the other steps keep its space
        assert [graph_module.INSTALL_NOTE in svg for svg in svgs] == [True] + [False] * (
            len(svgs) - 1
        )


def test_step_view_has_a_legend_and_the_text_form():
    x, y, loss = scalar_example()
    replay = replay_backward(loss, {"x": x, "y": y})
    html = replay._step_html(3)
    assert html.startswith("<pre>step 3 of 5: node n3 MulBackward0 runs")
    for colour in (ACTIVE_FILL, DONE, HIGHLIGHT):
        assert colour in html.split('class="course-legend"')[1].split("</div>")[0]
    assert "running now" in html and "saved tensors released" in html
    assert "gradient sent now (sender &#8594; receiver)" in html
    assert "<summary>Step picture as text</summary>" in html
    assert unescape(html).count(replay.picture(3).text()) == 1


def test_static_sequence_outside_a_kernel(monkeypatch):
    _, _, loss = classic()
    replay = replay_backward(loss)
    monkeypatch.setattr(replay_module, "widgets_available", lambda: False)
    bundle = replay._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == replay.table()
    html = bundle["text/html"]
    assert "Fix:" not in html  # not in a kernel: nothing to fix
    assert html.count("<summary>step ") == len(replay)  # each step, then the table
    assert html.count("<summary>All steps as a table</summary>") == 1
    assert html.count("data:image/svg+xml;base64,") == len(replay)
    assert "step 6 of 6: node n7 AccumulateGrad runs" in html
    assert escape(replay.table()) in html


@pytest.mark.parametrize("failure", ["import", "create", "display"])
def test_broken_widgets_degrade_to_static_steps_with_the_fix(monkeypatch, failure):
    x, y, loss = scalar_example()
    replay = replay_backward(loss, {"x": x, "y": y})
    monkeypatch.setattr(replay_module, "widgets_available", lambda: True)
    if failure == "import":
        monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import raises ImportError
    elif failure == "create":

        def broken(self):
            raise AttributeError("module 'ipywidgets' has no attribute 'IntSlider'")

        monkeypatch.setattr(replay_module.BackwardReplay, "widget", broken)
    else:

        class NoView:
            def _repr_mimebundle_(self, **kwargs):
                raise RuntimeError("comm closed")

        monkeypatch.setattr(replay_module.BackwardReplay, "widget", lambda self: NoView())
    bundle = replay._repr_mimebundle_()  # no exception
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == replay.table()
    note = re.search(r"<p><em>(.*?)</em></p>", bundle["text/html"]).group(1)
    assert note.startswith("Showing all steps: ") and "Fix: pip install ipywidgets" in note
    assert "\n" not in note and "Traceback" not in bundle["text/html"]
    assert bundle["text/html"].count("data:image/svg+xml;base64,") == len(replay)


def test_missing_ipywidgets_in_a_kernel_is_named(monkeypatch):
    import importlib.util

    import IPython

    class Shell:
        kernel = object()

    real = importlib.util.find_spec
    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ipywidgets" else real(name, *a),
    )
    _, _, loss = classic()
    html = replay_backward(loss)._repr_mimebundle_()["text/html"]
    assert "Showing all steps: ipywidgets is not installed. Fix: pip install ipywidgets" in html


def test_widget_slider_and_buttons_redraw(monkeypatch):
    pytest.importorskip("ipywidgets")
    monkeypatch.setenv("COURSE_GRAPHVIZ", "off")  # fast and the same on every machine
    _, _, loss = classic()
    replay = replay_backward(loss)
    box = replay.widget()
    back, slider, forward = box.children[0].children
    view = box.children[1]
    assert (slider.min, slider.max, slider.value) == (1, 6, 1)
    assert back.disabled and not forward.disabled
    first = view.value
    assert "step 1 of 6: node n1 SumBackward0 runs" in first
    forward.click()
    assert slider.value == 2 and "node n2 PowBackward0" in view.value
    slider.value = 6
    assert forward.disabled and "AccumulateGrad" in view.value
    back.click()
    assert slider.value == 5
    # the note that says what to do once the buttons lose their kernel, right in the box
    assert "course-widget" in box._dom_classes
    (note,) = [c for c in box.children if "course-stale-note" in c._dom_classes]
    assert escape(STALE_NOTE) in note.value
    monkeypatch.setattr(replay_module, "widgets_available", lambda: True)
    bundle = replay._repr_mimebundle_()
    assert bundle["text/plain"] == replay.table()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # the static copy a reopened notebook (or a front end without widgets) shows instead
    html = bundle["text/html"]
    # the way back to the buttons that works with a fresh kernel (issue 36 item 1: "run this
    # cell again" raised NameError there)
    assert "Static copy of step 1. To step through the replay, run the notebook down to " in html
    assert escape(RUN_DOWN_TO_HERE) in html and "running kernel with ipywidgets" in html
    assert "step 1 of 6: node n1 SumBackward0 runs" in html
    assert html.count("data:image/svg+xml;base64,") == 1 and escape(replay.table()) in html
