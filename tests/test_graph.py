"""draw_graph / GraphPicture / torchviz_graph: golden text, determinism, big graphs, no-dot path.

Golden files live in tests/golden/graph/. After an intended change, regenerate them with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_graph.py`` and review the diff by eye.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from course_helpers import CourseError, GraphPicture, draw_graph, torchviz_graph
from course_helpers import graph as graph_module

GOLDEN = Path(__file__).parent / "golden" / "graph"
ROOT = Path(__file__).resolve().parents[1]


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- small graphs


def classic():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    z = x * y
    w = z + x
    loss = (w**2).sum()
    return x, y, loss


def mlp():
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    data = torch.randn(5, 4, generator=gen)
    loss = model(data).pow(2).mean()
    return model, loss


def test_classic_graph_golden_before_and_after_backward():
    x, y, loss = classic()
    before = draw_graph(loss, {"x": x, "y": y})
    assert_golden("classic_before.txt", before.text())
    assert_golden("classic.dot", before.source)
    loss.backward()
    after = draw_graph(loss, {"x": x, "y": y})
    assert_golden("classic_after.txt", after.text())
    # hand derivation: w = x*y + x, loss = sum(w^2), so dx = 2w(y+1), dy = 2w*x
    # x=[1,2], y=[3,4]: w=[4,10]; dx=[8*4, 20*5]=[32,100]; dy=[8*1, 20*2]=[8,40]
    assert "x (2,)" in after.text() and "grad [32.0000, 100.0000]" in after.text()
    assert "grad [8.0000, 40.0000]" in after.text()
    assert "saved self: freed after backward" in after.text()
    assert "saved self: freed after backward" not in before.text()


def test_classic_graph_structure():
    x, y, loss = classic()
    picture = draw_graph(loss, {"x": x, "y": y})
    kinds = [n.kind for n in picture.nodes]
    assert kinds[0] == "output"
    assert kinds.count("leaf") == 2 and kinds.count("accumulate") == 2
    labels = [n.lines[0].split(" ")[0] for n in picture.nodes]
    assert labels[:5] == ["output", "SumBackward0", "PowBackward0", "AddBackward0", "MulBackward0"]
    assert [n.id for n in picture.nodes] == [f"n{i}" for i in range(len(picture.nodes))]
    # x feeds both the multiplication and the addition: one AccumulateGrad, two users
    acc_x = next(n for n in picture.nodes if n.kind == "accumulate" and "n6" in n.inputs)
    users = [n.id for n in picture.nodes if acc_x.id in n.inputs]
    assert len(users) == 2


def test_mlp_golden():
    model, loss = mlp()
    assert_golden("mlp_before.txt", draw_graph(loss, model).text())
    loss.backward()
    after = draw_graph(loss, model, grad_limit=3)
    assert_golden("mlp_after.txt", after.text())
    # 2.bias has 2 values (<= grad_limit): shown in full; the (3, 4) weight grad is summarised
    bias = model[2].bias.grad
    assert "grad [" + ", ".join(f"{v:.4f}" for v in bias.tolist()) + "]" in after.text()
    weight = model[0].weight.grad
    summary = f"grad (3, 4) mean {weight.mean().item():.4f} min {weight.min().item():.4f}"
    assert summary in after.text()


def test_view_graph_golden():
    x = torch.arange(6.0, requires_grad=True)
    y = (x * 2).view(2, 3)
    out = y.t().sum()
    picture = draw_graph(out, {"x": x})
    assert_golden("view.txt", picture.text())
    text = picture.text()
    assert "ViewBackward0 (2, 3)" in text and "TBackward0 (3, 2)" in text


def test_inplace_graph_golden_shows_versions():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.add_(1)
    out = y.exp().sum()
    picture = draw_graph(out, {"x": x}, show_version=True, show_requires_grad=True)
    assert_golden("inplace.txt", picture.text())
    assert "AddBackward0" in picture.text()
    assert y._version == 1


def test_saved_tensor_modified_in_place_is_marked_not_raised():
    x = torch.ones(3, requires_grad=True)
    y = x.exp()  # exp saves its result ...
    y.add_(1)  # ... which this in-place add then changes
    picture = draw_graph(y.sum(), {"x": x})
    assert_golden("inplace_broken.txt", picture.text())
    assert "saved result: modified in place (version 1, saved at 0)" in picture.text()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_non_scalar_output_golden_and_several_outputs():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = x.relu() * 3
    assert_golden("non_scalar.txt", draw_graph(out, {"x": x}, show_dtype=True).text())
    a, b = x.sum(dim=0), x.mean()
    both = draw_graph([a, b], names={"x": x, "a": a, "b": b})
    assert [n.lines[0] for n in both.nodes[:2]] == ["a (2,)", "b ()"]
    unnamed = draw_graph([a, b])
    assert [n.lines[0] for n in unnamed.nodes[:2]] == ["output 0 (2,)", "output 1 ()"]
    assert sum(1 for n in both.nodes if n.kind == "leaf") == 1


def test_unnamed_leaves_are_numbered_in_traversal_order():
    _, _, loss = classic()
    leaves = [n.lines[0] for n in draw_graph(loss).nodes if n.kind == "leaf"]
    assert leaves == ["leaf 0 (2,)", "leaf 1 (2,)"]


def test_options_turn_parts_off_and_on():
    x, y, loss = classic()
    plain = draw_graph(
        loss, {"x": x, "y": y}, show_saved=False, show_grad=False, show_accumulate=False
    )
    assert all(n.kind != "accumulate" for n in plain.nodes)
    assert "saved" not in plain.text() and "grad" not in plain.text().split("backward()")[1]
    extra = draw_graph(loss, {"x": x, "y": y}, show_device=True, show_attrs=True)
    assert "device cpu" in extra.text()
    assert "exponent = 2" in extra.text()
    assert "device" not in draw_graph(loss).text()


def test_highlight_marks_the_path_to_one_parameter():
    x, y, loss = classic()
    picture = draw_graph(loss, {"x": x, "y": y}, highlight="y")
    on_path = [n.id for n in picture.nodes if n.on_path]
    # output, Sum, Pow, Add, Mul, y's AccumulateGrad, y; not x's branch
    assert on_path == ["n0", "n1", "n2", "n3", "n4", "n7", "n8"]
    assert "* n8" in picture.text()
    assert 'n7 -> n4 [color="#d62728" penwidth=2]' in picture.source
    same = draw_graph(loss, {"x": x, "y": y}, highlight=y)
    assert [n.on_path for n in same.nodes] == [n.on_path for n in picture.nodes]


# ----------------------------------------------------------------------------- display forms


def test_mimebundle_has_svg_and_the_text_form():
    _, _, loss = classic()
    picture = draw_graph(loss)
    bundle = picture._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "text/plain"}
    assert bundle["text/plain"] == picture.text() == str(picture) == repr(picture)
    assert bundle["image/svg+xml"].lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE"))
    assert isinstance(picture, GraphPicture)


def test_no_dot_uses_the_python_renderer_with_an_install_note(monkeypatch):
    _, _, loss = classic()
    with_dot_text = draw_graph(loss).text()
    monkeypatch.setattr(graph_module, "graphviz_dot", lambda: None)
    picture = draw_graph(loss)
    svg = picture._repr_mimebundle_()["image/svg+xml"]
    assert "Graphviz" in svg and "install graphviz" in svg
    assert "n4: MulBackward0 (2,)" in svg
    assert svg.count("<rect") == len(picture.nodes)
    assert picture._repr_mimebundle_()["text/plain"] == with_dot_text
    assert "Graphviz" not in picture.text()
    assert picture.svg() == picture.svg()  # deterministic layout


def test_dot_lookup_honours_env_and_path(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_GRAPHVIZ", "off")
    assert graph_module.graphviz_dot() is None
    monkeypatch.delenv("COURSE_GRAPHVIZ")
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no dot program
    assert graph_module.graphviz_dot() is None
    _, _, loss = classic()
    assert "install graphviz" in draw_graph(loss).svg()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed here")
def test_dot_is_used_when_present(monkeypatch):
    monkeypatch.delenv("COURSE_GRAPHVIZ", raising=False)
    _, _, loss = classic()
    svg = draw_graph(loss).svg()
    assert "<!-- Generated by graphviz" not in svg
    assert 'class="node"' in svg  # Graphviz's own SVG structure
    assert "install graphviz" not in svg


def test_same_text_and_dot_in_two_processes():
    script = (
        "import torch\n"
        "from course_helpers import draw_graph, torchviz_graph\n"
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = torch.tensor([3.0, 4.0], requires_grad=True)\n"
        "loss = ((x * y + x) ** 2).sum()\n"
        "loss.backward(retain_graph=True)\n"
        "p = draw_graph(loss, {'x': x, 'y': y}, show_dtype=True, show_version=True)\n"
        "print(p.text()); print(p.source)\n"
        "print(torchviz_graph(loss, {'x': x, 'y': y}).source)\n"
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "random"}
    procs = [  # both at once: each pays torch's import time
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs[0][1]
    assert outputs[0][0] == outputs[1][0]
    assert "grad [32.0000, 100.0000]" in outputs[0][0]
    assert "0x" not in outputs[0][0]


# ----------------------------------------------------------------------------- big graphs


def chain(n: int):
    x = torch.ones(3, requires_grad=True)
    y = x
    for i in range(n):
        y = y * 1.5 if i % 2 else y.sin()
    return x, y.sum()


def test_ten_thousand_op_chain_draws_without_recursion_error():
    x, out = chain(10_000)
    picture = draw_graph(out, {"x": x})
    assert len(picture.nodes) <= 500
    assert "10,004 nodes" in picture.notes[0]
    collapsed = [n for n in picture.nodes if n.kind == "collapsed"]
    assert collapsed and collapsed[0].lines[0] == "chain of 10,000 ops"
    assert "5,000 x MulBackward0" in collapsed[0].lines
    full = draw_graph(out, {"x": x}, max_nodes=20_000)
    assert len(full.nodes) == 10_004  # output + 10,001 ops + AccumulateGrad + leaf
    assert full.nodes[-1].lines[0] == "x (3,)"


def test_huge_wide_graph_is_truncated_with_a_note():
    leaves = [torch.full((2,), float(i), requires_grad=True) for i in range(400)]
    out = torch.stack([leaf * 2 for leaf in leaves]).sum()
    picture = draw_graph(out, max_nodes=100)
    assert len(picture.nodes) == 100
    assert picture.nodes[-1].kind == "note"
    assert "more nodes not drawn" in picture.notes[-1]
    assert "max_nodes=" in picture.text()
    assert any(picture.nodes[-1].id in n.inputs for n in picture.nodes)


def test_highlighted_path_survives_collapsing():
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(50):
        y = y.sin()
    out = (y * w).sum()
    picture = draw_graph(out, {"x": x, "w": w}, highlight="x", max_nodes=20)
    assert any(n.kind == "collapsed" for n in picture.nodes)
    assert next(n for n in picture.nodes if n.lines[0].startswith("x ")).on_path
    assert next(n for n in picture.nodes if n.kind == "collapsed").on_path
    assert not next(n for n in picture.nodes if n.lines[0].startswith("w ")).on_path


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("make", "phrase"),
    [
        (lambda: 3, "expects a tensor"),
        (lambda: [], "empty list"),
        (lambda: torch.ones(2), "requires_grad=True"),
        (lambda: torch.ones(2, requires_grad=True), "is a leaf"),
    ],
)
def test_bad_output_gets_a_course_error(make, phrase):
    with pytest.raises(CourseError, match=phrase):
        draw_graph(make())


def test_graph_made_under_no_grad_is_explained():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    with pytest.raises(CourseError, match="no_grad"):
        draw_graph(y)


def test_bad_options_get_course_errors():
    x, y, loss = classic()
    with pytest.raises(CourseError, match="unknown option"):
        draw_graph(loss, show_everything=True)
    with pytest.raises(CourseError, match="params must be a dict"):
        draw_graph(loss, [x, y])
    with pytest.raises(CourseError, match="not a tensor"):
        draw_graph(loss, {"x": 1.0})
    with pytest.raises(CourseError, match="not a leaf of this graph"):
        draw_graph(loss, {"x": x}, highlight="q")
    with pytest.raises(CourseError, match="max_nodes"):
        draw_graph(loss, max_nodes=0)


# ----------------------------------------------------------------------------- torchviz


def test_torchviz_graph_has_stable_names(monkeypatch):
    x, y, loss = classic()
    first = torchviz_graph(loss, {"x": x, "y": y})
    second = torchviz_graph(loss, {"x": x, "y": y})
    assert first.source == second.source
    assert_golden("classic_torchviz.dot", first.source)
    assert "\tn0 [label=" in first.source
    ids = set(re.findall(r"(?m)^\t(n\d+) \[", first.source))
    assert ids == {f"n{i}" for i in range(len(ids))}
    monkeypatch.setattr(graph_module, "graphviz_dot", lambda: None)
    bundle = first._repr_mimebundle_()
    assert bundle["text/plain"] == first.source
    assert "install graphviz" in bundle["image/svg+xml"]
    assert bundle["image/svg+xml"].count("<rect") == len(ids)


def test_torchviz_graph_too_deep_gets_a_course_error():
    _, out = chain(3_000)
    with pytest.raises(CourseError, match="draw_graph"):
        torchviz_graph(out)


def test_torchviz_accepts_a_module():
    model, loss = mlp()
    source = torchviz_graph(loss, model).source
    assert "0.weight" in source and "2.bias" in source


def test_a_picture_does_not_keep_the_graph_or_its_saved_tensors_alive():
    import gc
    import weakref

    x = torch.randn(50, 50, requires_grad=True)
    h = x * 2
    saved = weakref.ref(h)  # sin() saves its input h for backward
    y = h.sin().sum()
    del h
    picture = draw_graph(y)
    del y
    gc.collect()
    assert saved() is None, "the drawn picture still holds the graph"
    assert "SinBackward0" in picture.text()


def test_internal_keywords_are_not_options():
    x = torch.tensor(2.0, requires_grad=True)
    for option in ("who", "use_dot"):
        with pytest.raises(CourseError, match="unknown option"):
            draw_graph(x * 3, **{option: "nonsense"})
