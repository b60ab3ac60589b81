"""draw_graph / GraphPicture / torchviz_graph: golden text, determinism, big graphs, no-dot path.

Golden files live in tests/golden/graph/. After an intended change, regenerate them with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/graphs/test_graph.py`` and review the diff by eye.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
import torch

from course_helpers import CourseError, GraphPicture, draw_graph, torchviz_graph
from course_helpers.graphs import dot as graph_module

GOLDEN = Path(__file__).parents[1] / "golden" / "graph"
ROOT = Path(__file__).resolve().parents[2]


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
    assert [n.lines[0] for n in both.nodes[:2]] == ["a (2,)", "b scalar"]
    unnamed = draw_graph([a, b])
    assert [n.lines[0] for n in unnamed.nodes[:2]] == ["output 0 (2,)", "output 1 scalar"]
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


def test_mimebundle_has_svg_html_with_the_text_under_it_and_plain_text():
    _, _, loss = classic()
    picture = draw_graph(loss)
    bundle = picture._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "text/html", "text/plain"}
    assert bundle["text/plain"] == picture.text() == str(picture) == repr(picture)
    assert bundle["image/svg+xml"].lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE"))
    assert isinstance(picture, GraphPicture)
    # the HTML (what JupyterLab shows: it ranks text/html above image/svg+xml) holds the
    # same SVG as an <img> data URL, then the text form in a collapsible <details>
    html = bundle["text/html"]
    data = re.search(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)
    assert data and base64.b64decode(data.group(1)).decode() == bundle["image/svg+xml"]
    assert "<svg" not in html  # inline SVG would be stripped by JupyterLab's sanitizer
    text = re.search(
        r"<details><summary>Graph as text</summary><pre>(.*)</pre></details>", html, re.S
    )
    assert text and unescape(text.group(1)) == picture.text()


def test_no_dot_uses_the_python_renderer_with_an_install_note(monkeypatch):
    _, _, loss = classic()
    with_dot_text = draw_graph(loss).text()
    monkeypatch.setattr(graph_module, "graphviz_dot", lambda: None)
    monkeypatch.setitem(graph_module._notice, "given", False)  # a fresh kernel
    picture = draw_graph(loss)
    svg = picture._repr_mimebundle_()["image/svg+xml"]
    assert "Graphviz" in svg and "install graphviz" in svg
    assert "n4: MulBackward0 (2,)" in svg
    assert svg.count('<g class="node">') == len(picture.nodes)
    assert picture._repr_mimebundle_()["text/plain"] == with_dot_text
    assert "Graphviz" not in picture.text()
    assert picture.svg() == picture.svg()  # deterministic layout, the notice kept when redrawn


def notices(svg: str) -> list[str]:
    return re.findall(r'<text class="notice"[^>]*>([^<]*)</text>', svg)


def test_install_notice_once_per_kernel_and_one_short_line(monkeypatch):
    monkeypatch.setattr(graph_module, "graphviz_dot", lambda: None)
    monkeypatch.setitem(graph_module._notice, "given", False)
    x, y, loss = classic()
    first = draw_graph(loss, {"x": x, "y": y}).svg()
    assert notices(first) == [graph_module.INSTALL_NOTE]
    assert len(graph_module.INSTALL_NOTE) <= 90  # one line, wrapped at 90 characters
    later = [
        draw_graph(loss).svg(),
        torchviz_graph(loss).svg(),
        draw_graph(loss, highlight=x, names={"x": x}).svg(),
    ]
    assert [notices(svg) for svg in later] == [[], [], []]
    graph_module.reset_notice()
    assert notices(draw_graph(loss).svg()) == [graph_module.INSTALL_NOTE]


# ----------------------------------------------------------------------------- legibility

NAMED = {
    "black": "#000000",
    "white": "#ffffff",
    "lightgrey": "#d3d3d3",
    "lightblue": "#add8e6",
    "orange": "#ffa500",
}


def luminance(colour: str) -> float:
    colour = NAMED.get(colour, colour)
    assert re.fullmatch(r"#[0-9a-fA-F]{6}", colour), f"not an opaque colour: {colour}"
    channels = [int(colour[k : k + 2], 16) / 255 for k in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def check_legible(svg: str) -> int:
    """Assert the SVG has an opaque background, edges and arrowheads >= 3:1 against it and
    every text >= 4.5:1 against what it is drawn on. Returns the number of checks."""
    body = svg[svg.index("<svg") :]
    if 'class="graph"' in body:  # Graphviz: the first polygon of the graph is its background
        background = re.search(
            r'class="graph"[^>]*>\s*<title>[^<]*</title>\s*<polygon fill="([^"]+)"', body
        )
    else:
        background = re.search(r'<rect class="background"[^>]*fill="([^"]+)"', body)
    assert background, "no opaque background"
    bg = background.group(1)
    assert luminance(bg) > 0.9  # white: legible in light and dark themes alike
    checks = 0
    for group in re.findall(
        r'<g id="[^"]*" class="edge">(.*?)</g>|<g class="edge">(.*?)</g>', body, re.S
    ):
        part = group[0] or group[1]
        strokes = re.findall(r'<path [^>]*stroke="([^"]+)"', part)
        heads = re.findall(r'<polygon [^>]*fill="([^"]+)"', part)
        assert strokes and heads
        for colour in strokes + heads:
            assert contrast(colour, bg) >= 3.0, colour
            checks += 1
        for attrs in re.findall(r"<text ([^>]*)>", part):  # Graphviz xlabels on edges
            label = re.search(r'fill="([^"]+)"', attrs)
            assert contrast(label.group(1) if label else "black", bg) >= 4.5
            checks += 1
    for group in re.findall(r'class="node">(.*?)</g>', body, re.S):
        fill = re.search(r'<(?:polygon|rect) [^>]*fill="([^"]+)"', group).group(1)
        for colour in re.findall(r"<text ([^>]*)>", group):
            text = re.search(r'fill="([^"]+)"', colour)
            assert contrast(text.group(1) if text else "black", fill) >= 4.5
            checks += 1
    for group in re.findall(r'<g class="edge-label">(.*?)</g>', body, re.S):
        fill = re.search(r'<rect [^>]*fill="([^"]+)"', group).group(1)
        text = re.search(r'<text [^>]*fill="([^"]+)"', group).group(1)
        assert contrast(text, fill) >= 4.5 and contrast(fill, bg) < 1.1
        checks += 1
    for colour in re.findall(r'<text class="notice"[^>]*fill="([^"]+)"', body):
        assert contrast(colour, bg) >= 4.5
        checks += 1
    return checks


@pytest.mark.parametrize("use_dot", [False, True])
def test_every_picture_is_legible_on_its_own_opaque_background(monkeypatch, use_dot):
    if use_dot and shutil.which("dot") is None:
        pytest.skip("Graphviz dot is not installed here")
    if not use_dot:
        monkeypatch.setattr(graph_module, "graphviz_dot", lambda: None)
        monkeypatch.setitem(graph_module._notice, "given", False)
    monkeypatch.delenv("COURSE_GRAPHVIZ", raising=False)
    x, y, loss = classic()
    pictures = [
        draw_graph(loss, {"x": x, "y": y}),
        draw_graph(loss, {"x": x, "y": y}, highlight="y"),
        torchviz_graph(loss, {"x": x, "y": y}),
    ]
    from course_helpers import replay_backward

    step = replay_backward(loss, {"x": x, "y": y}, retain_graph=True).picture(4)
    pictures.append(step)  # running node, finished nodes, gradients written on edges
    svgs = [p.svg() for p in pictures]
    assert svgs[-1].count('class="edge-label"') == 2
    assert ('class="graph"' in svgs[0]) == use_dot
    if not use_dot:
        assert notices(svgs[0])  # the notice is checked too
    for svg in svgs:
        assert check_legible(svg) >= 10


def test_contrast_formula_matches_known_values():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    # the old transparent picture's grey edges on JupyterLab's dark background: too faint
    assert contrast("#444444", "#111111") < 3.0


def arrow_tips(svg: str) -> dict[str, list[tuple[float, float]]]:
    """Target node id -> the tips of the arrowheads entering it (fallback SVG)."""
    tips: dict[str, list[tuple[float, float]]] = {}
    for _, dst, points in re.findall(
        r'<g class="edge"><title>(\w+)-&gt;(\w+)</title><path [^>]*/><polygon points="([^"]+)"', svg
    ):
        x, y = points.split()[0].split(",")
        tips.setdefault(dst, []).append((float(x), float(y)))
    return tips


def boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    found = re.findall(
        r'<g class="node"><title>(\w+)</title>\s*<rect x="([\d.]+)" y="([\d.]+)" '
        r'width="([\d.]+)" height="([\d.]+)"',
        svg,
    )
    return {n: tuple(float(v) for v in rest) for n, *rest in found}


def test_edges_into_one_node_end_at_distinct_points_on_its_top_edge(monkeypatch):
    monkeypatch.setattr(graph_module, "graphviz_dot", lambda: None)
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    c = torch.ones(2, requires_grad=True)
    out = torch.cat([a * 2, b.exp(), c.sin()]).sum()  # CatBackward0 has three inputs
    x, y, loss = classic()  # AddBackward0 and MulBackward0 have two inputs each
    checked = 0
    for picture in (draw_graph(out, {"a": a, "b": b, "c": c}), draw_graph(loss, {"x": x, "y": y})):
        svg = picture.svg()
        geometry = boxes(svg)
        for node in picture.nodes:
            tips = arrow_tips(svg).get(node.id, [])
            assert len(tips) == len(node.inputs)
            if len(tips) < 2:
                continue
            x0, y0, w, _ = geometry[node.id]
            for tx, ty in tips:  # on the box's top edge, inside its width
                assert ty == pytest.approx(y0, abs=0.2) and x0 < tx < x0 + w
            xs = sorted(tx for tx, _ in tips)
            assert min(b - a for a, b in zip(xs, xs[1:], strict=False)) >= 10  # visibly apart
            checked += 1
    assert checked == 3


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed here")
def test_dot_arrowheads_into_one_node_are_distinct(monkeypatch):
    monkeypatch.delenv("COURSE_GRAPHVIZ", raising=False)
    x, y, loss = classic()
    svg = draw_graph(loss, {"x": x, "y": y}).svg()
    tips: dict[str, list[tuple[float, float]]] = {}
    for dst, points in re.findall(
        r"<title>\w+&#45;&gt;(\w+)</title>\s*<path [^>]*/>\s*<polygon [^>]*points=\"([^\"]+)\"", svg
    ):
        pts = [tuple(float(v) for v in p.split(",")) for p in points.split()]
        tips.setdefault(dst, []).append(pts[1])  # Graphviz writes the tip second
    assert len(tips["n3"]) == 2 and len(tips["n4"]) == 2
    for dst in ("n3", "n4"):
        (ax, ay), (bx, by) = tips[dst]
        assert ((ax - bx) ** 2 + (ay - by) ** 2) ** 0.5 >= 10


def test_dot_lookup_honours_env_and_path(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_GRAPHVIZ", "off")
    assert graph_module.graphviz_dot() is None
    monkeypatch.delenv("COURSE_GRAPHVIZ")
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no dot program
    assert graph_module.graphviz_dot() is None
    monkeypatch.setitem(graph_module._notice, "given", False)
    _, _, loss = classic()
    svg = draw_graph(loss).svg()
    assert "install graphviz" in svg and 'class="graph"' not in svg


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
        "import os; os.environ['COURSE_GRAPHVIZ'] = 'off'\n"  # the fallback SVG and the HTML
        "print(p._repr_mimebundle_()['text/html'])\n"
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
    assert "0x" not in outputs[0][0].split('<div class="course-graph">')[0]  # no addresses
    assert outputs[0][0].count("data:image/svg+xml;base64,") == 1


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
    monkeypatch.setitem(graph_module._notice, "given", False)
    bundle = first._repr_mimebundle_()
    assert bundle["text/plain"] == first.source
    assert "install graphviz" in bundle["image/svg+xml"]
    assert bundle["image/svg+xml"].count('<g class="node">') == len(ids)
    assert "<summary>DOT source</summary>" in bundle["text/html"]


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


# ----------------------------------------------------------------------------- custom Function


class Cube(torch.autograd.Function):
    """x**3 with its own backward: saves x (and a None) with ctx.save_for_backward."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x, None)
        ctx.scale = scale
        return x**3 * scale

    @staticmethod
    def backward(ctx, grad):
        x, _ = ctx.saved_tensors
        return 3 * x**2 * ctx.scale * grad, None


def test_custom_function_node_shows_what_it_saved():
    x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    out = Cube.apply(x, 2.0).sum()
    picture = draw_graph(out, {"x": x})
    node = next(n for n in picture.nodes if n.lines[0].startswith("CubeBackward"))
    assert node.lines == ("CubeBackward (1, 3)", "saved tensors: (1, 3), None")
    out.backward()
    assert torch.equal(x.grad, torch.tensor([[6.0, 24.0, 54.0]]))  # 3 x^2 * 2
    after = draw_graph(out, {"x": x})
    assert "saved tensors: freed after backward" in after.text()
    y = x * 1
    changed = Cube.apply(y, 1.0)
    y.add_(1)  # the tensor Cube saved is changed in place: its backward would fail
    assert (
        "saved tensors: modified in place (version 1, saved at 0)"
        in draw_graph(changed.sum()).text()
    )


def test_a_scalar_reads_as_scalar_not_as_a_call():
    """`MulBackward0 ()` and `x ()` read like calls to a beginner (issue 28): 0-dim tensors
    are labelled `scalar`, every other shape keeps its tuple."""
    x = torch.tensor(2.0, requires_grad=True)
    v = torch.ones(3, requires_grad=True)
    picture = draw_graph((x * v).sum() * x, params={"x": x, "v": v})
    lines = [node.lines[0] for node in picture.nodes]
    assert "x scalar" in lines and "v (3,)" in lines and "MulBackward0 (3,)" in lines
    assert "output scalar" in lines
    assert not any(line.endswith(" ()") for node in picture.nodes for line in node.lines)
