"""Draw time end to end (walk + layout + SVG): draw_graph against torchviz.make_dot.

Run: .venv/bin/python benchmarks/bench_graph.py [--repeat N]

For each graph it prints the node count of our picture and the best-of-N seconds for
- ``ours+dot``: ``draw_graph(out, max_nodes=...).svg()`` with Graphviz ``dot``;
- ``ours, no dot``: the same with ``COURSE_GRAPHVIZ=off`` (pure-Python layout + SVG);
- ``torchviz``: ``torchviz.make_dot(out).pipe("svg")`` (walk + ``dot``), same graph;
and, for two small models, ``replay_backward(...).static_html()`` (every step drawn).
Graphs are drawn in full (no collapsing) so both tools draw the same nodes.
Timings are machine-specific: they are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
import warnings

import torch

from course_helpers import draw_graph, replay_backward
from course_helpers.graphs.dot import graphviz_dot


def chain(n):
    x = torch.ones(4, requires_grad=True)
    y = x
    for i in range(n):
        y = y * 1.01 if i % 2 else y.tanh()
    return y.sum()


def mlp(layers, width=16):
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*mods, torch.nn.Linear(width, 1))
    return model(torch.randn(8, width, generator=gen)).pow(2).mean()


def cnn():
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1),
        torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 10),
    )
    images = torch.randn(4, 3, 16, 16, generator=gen)
    return torch.nn.functional.cross_entropy(model(images), torch.tensor([1, 2, 3, 4]))


def transformer(layers):
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0)
    model = torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
    return model(torch.randn(6, 2, 16, generator=gen)).pow(2).mean()


GRAPHS = [
    ("chain 10", lambda: chain(8)),
    ("MLP 2 layers", lambda: mlp(2)),
    ("chain 100", lambda: chain(98)),
    ("small CNN", cnn),
    ("transformer x1", lambda: transformer(1)),
    ("MLP 40 layers", lambda: mlp(40)),
    ("chain 500", lambda: chain(498)),
    ("transformer x4", lambda: transformer(4)),
    ("chain 2000", lambda: chain(1998)),
    ("transformer x16", lambda: transformer(16)),
]


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# torchviz's default picture: op names and leaf shapes, no saved tensors, no gradients
SAME_CONTENT = {"show_saved": False, "show_grad": False}


def ours(out, use_dot: bool, **options):
    previous = os.environ.get("COURSE_GRAPHVIZ")
    if not use_dot:
        os.environ["COURSE_GRAPHVIZ"] = "off"
    try:
        return draw_graph(out, max_nodes=100_000, **options).svg()
    finally:
        if previous is None:
            os.environ.pop("COURSE_GRAPHVIZ", None)
        else:
            os.environ["COURSE_GRAPHVIZ"] = previous


def replay_html(build, use_dot: bool) -> str:
    """Forward, replay (the real backward) and the static HTML of all its steps."""
    previous = os.environ.get("COURSE_GRAPHVIZ")
    if not use_dot:
        os.environ["COURSE_GRAPHVIZ"] = "off"
    try:
        return replay_backward(build()).static_html()
    finally:
        if previous is None:
            os.environ.pop("COURSE_GRAPHVIZ", None)
        else:
            os.environ["COURSE_GRAPHVIZ"] = previous


def theirs(out):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from torchviz import make_dot

        return make_dot(out).pipe(format="svg")


def fmt(seconds) -> str:
    return f"{seconds:8.3f}" if isinstance(seconds, float) else f"{seconds:>8}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    has_dot = graphviz_dot() is not None
    print(
        f"torch {torch.__version__}, python {sys.version.split()[0]}, "
        f"dot: {shutil.which('dot') or 'missing'}, threads {torch.get_num_threads()}"
    )
    print("seconds, best of", args.repeat, "(walk + layout + SVG)")
    header = (
        f"{'graph':<16} {'nodes':>6} {'ours+dot':>8} {'no dot':>8} {'plain':>8} "
        f"{'torchviz':>8} {'ratio':>6} {'plain/tv':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, build in GRAPHS:
        out = build()
        nodes = len(draw_graph(out, max_nodes=100_000).nodes)
        with_dot = best(lambda out=out: ours(out, True), args.repeat) if has_dot else "no dot"
        without = best(lambda out=out: ours(out, False), args.repeat)
        plain = (
            best(lambda out=out: ours(out, True, **SAME_CONTENT), args.repeat)
            if has_dot
            else "no dot"
        )
        try:
            tv = best(lambda out=out: theirs(out), args.repeat) if has_dot else "no dot"
        except RecursionError:
            tv = "RecErr"
        comparable = isinstance(tv, float) and isinstance(with_dot, float)
        ratio = f"{with_dot / tv:6.2f}" if comparable else ""
        plain_ratio = f"{plain / tv:8.2f}" if comparable else ""
        print(
            f"{name:<16} {nodes:>6} {fmt(with_dot)} {fmt(without)} {fmt(plain)} {fmt(tv)} "
            f"{ratio:>6} {plain_ratio:>8}"
        )
    print()
    print("replay_backward: every step's picture as static HTML (the no-widget fallback)")
    for name, build in (("MLP 2 layers", lambda: mlp(2)), ("small CNN", cnn)):
        for use_dot in ([True] if has_dot else []) + [False]:
            seconds = best(lambda build=build, d=use_dot: replay_html(build, d), args.repeat)
            steps = len(replay_backward(build()))
            label = "dot" if use_dot else "no dot"
            print(f"{name:<16} {steps:>4} steps  {label:<6} {seconds:8.3f} s")
    print()
    print("ours+dot: the teaching picture (saved tensors, grads); plain: the same content as")
    print("torchviz's default picture (show_saved=False, show_grad=False), drawn by dot.")
    print("ratio = ours+dot / torchviz, plain/tv = plain / torchviz (below 1: we are faster).")
    print("RecErr: torchviz's recursive walk hit Python's recursion limit. Timings vary by")
    print("machine; nothing is asserted.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
