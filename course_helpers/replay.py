"""Step through ``backward()`` in the order PyTorch's engine runs it.

``replay_backward(loss)`` performs the real backward pass once (so every leaf's
``.grad`` ends exactly as after ``loss.backward()``) while hooks on the graph's
nodes record each step: which node ran, the gradient that flowed in, the
gradients it sent to the nodes below, and which leaf ``.grad`` was accumulated.
Every hook is removed in a ``finally`` block, whatever happens.

The result shows a slider with previous/next buttons in JupyterLab and a
numbered text table everywhere else (its ``text/plain`` form, which nbval compares).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from course_helpers.errors import CourseError
from course_helpers.feedback import widgets_available
from course_helpers.graph import build_picture, tensor_summary


@dataclass
class ReplayStep:
    """One node run by the backward engine."""

    number: int  # 1, 2, ... in engine order
    node: str  # picture id (n3), or "-" when the node is not drawn
    name: str  # MulBackward0, AccumulateGrad, ...
    grad_in: tuple = ()  # gradients flowing into the node (CPU copies; None where absent)
    grad_out: list = field(default_factory=list)  # (target picture id, CPU copy or None)
    leaf: str | None = None  # for AccumulateGrad: the leaf's name
    leaf_grad: object = None  # for AccumulateGrad: a CPU copy of leaf.grad after this step
    leaf_node: str | None = None  # for AccumulateGrad: picture id of the leaf


def _copy(t):
    return None if t is None else t.detach().to("cpu", copy=True)


def _all_nodes(output) -> list:
    """Every autograd node behind ``output`` (iterative, each once)."""
    seen = {output.grad_fn: None}
    queue = deque([output.grad_fn])
    while queue:
        for fn, _ in queue.popleft().next_functions:
            if fn is not None and fn not in seen:
                seen[fn] = None
                queue.append(fn)
    return list(seen)


class BackwardReplay:
    """Recorded steps of one backward pass: ``.steps``, ``.table()``, ``.picture(k)``."""

    def __init__(self, steps: list[ReplayStep], base, output_name: str, limit: int, initial):
        self.steps = steps
        self._base = base
        self._output_name = output_name
        self._limit = limit
        self._initial = initial  # picture id of each leaf -> its .grad before the replay

    def _fmt(self, t) -> str:
        return "None" if t is None else tensor_summary(t, self._limit)

    def _row(self, step: ReplayStep) -> tuple[str, str, str, str, str]:
        grad_in = "; ".join(self._fmt(g) for g in step.grad_in) or "-"
        if step.leaf is not None:
            out = f"{step.leaf}.grad = {self._fmt(step.leaf_grad)}"
        else:
            out = "; ".join(f"-> {target}: {self._fmt(g)}" for target, g in step.grad_out) or "-"
        return (str(step.number), step.node, step.name, grad_in, out)

    def table(self) -> str:
        """Numbered text table of the steps, in the order the engine ran them."""
        header = ("step", "node", "runs", "gradient in", "gradient out / leaf .grad after")
        rows = [header, *(self._row(s) for s in self.steps)]
        widths = [max(len(r[k]) for r in rows) for k in range(4)]
        lines = [
            f"backward replay of {self._output_name}: {len(self.steps)} steps in engine order "
            "(node ids as in draw_graph)"
        ]
        for row in rows:
            cells = [row[0].rjust(widths[0])] + [row[k].ljust(widths[k]) for k in (1, 2, 3)]
            lines.append("  ".join(cells) + "  " + row[4])
        return "\n".join(line.rstrip() for line in lines)

    __str__ = table

    def __repr__(self) -> str:
        return self.table()

    def __len__(self) -> int:
        return len(self.steps)

    def picture(self, number: int):
        """The graph picture at step ``number`` (1-based): the running node is marked,
        nodes already run are marked done, and each leaf shows its ``.grad`` so far."""
        if not isinstance(number, int) or not 1 <= number <= len(self.steps):
            raise CourseError(
                f"step must be an integer from 1 to {len(self.steps)}; got {number!r}."
            )
        step = self.steps[number - 1]
        done = {s.node for s in self.steps[: number - 1]}
        extra: dict[str, list[str]] = {}
        for leaf_id, grad in self._leaf_grads(number).items():
            extra.setdefault(leaf_id, []).append("grad " + self._fmt(grad))
        extra.setdefault(step.node, []).append(
            "in: " + ("; ".join(self._fmt(g) for g in step.grad_in) or "-")
        )
        return self._base.with_state(active=step.node, done=done, extra_lines=extra)

    def _leaf_grads(self, number: int) -> dict[str, object]:
        grads = dict(self._initial)
        for step in self.steps[:number]:
            if step.leaf_node is not None:
                grads[step.leaf_node] = step.leaf_grad
        return grads

    def _step_html(self, number: int) -> str:
        from html import escape

        row = self._row(self.steps[number - 1])
        text = (
            f"step {row[0]} of {len(self.steps)}: node {row[1]} {row[2]} runs\n"
            f"  gradient in : {row[3]}\n  gradient out: {row[4]}"
        )
        return f"<pre>{escape(text)}</pre>{self.picture(number).svg()}"

    def widget(self):
        """An ipywidgets slider + previous/next buttons redrawing the picture per step."""
        import ipywidgets as w

        count = len(self.steps)
        slider = w.IntSlider(value=1, min=1, max=count, description="step")
        back = w.Button(description="previous", icon="arrow-left")
        forward = w.Button(description="next", icon="arrow-right")
        view = w.HTML(value=self._step_html(1))
        cache: dict[int, str] = {1: view.value}

        def show(change):
            number = change["new"]
            if number not in cache:
                cache[number] = self._step_html(number)
            view.value = cache[number]
            back.disabled = number == 1
            forward.disabled = number == count

        slider.observe(show, names="value")
        back.on_click(lambda _: setattr(slider, "value", max(1, slider.value - 1)))
        forward.on_click(lambda _: setattr(slider, "value", min(count, slider.value + 1)))
        back.disabled = True
        forward.disabled = count == 1
        return w.VBox([w.HBox([back, slider, forward]), view])

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.table()}
        if widgets_available():
            view = self.widget()._repr_mimebundle_()
            key = "application/vnd.jupyter.widget-view+json"
            if isinstance(view, dict) and key in view:
                bundle[key] = view[key]
        return bundle


def replay_backward(
    output, params=None, *, gradient=None, retain_graph: bool = False, **options
) -> BackwardReplay:
    """Run ``output.backward()`` once, recording each engine step.

    ``params`` names leaves (dict or ``nn.Module``), as in ``draw_graph``; other
    keyword options are ``draw_graph`` options for the pictures. ``gradient`` is
    needed for a non-scalar ``output``, exactly as for ``backward()``. The leaves'
    ``.grad`` end as after one plain ``backward()`` (accumulating into any existing
    ``.grad``), the graph is freed unless ``retain_graph=True``, and no hook is left
    behind. Returns a :class:`BackwardReplay` (``.steps``, ``.table()``, a widget).
    """
    import torch

    if isinstance(output, (list, tuple)):
        raise CourseError(
            "replay_backward replays one backward pass: pass a single tensor (e.g. the "
            "loss). For several outputs, add them first: replay_backward(a.sum() + b.sum())."
        )
    options = {**options, "show_grad": False}  # each step adds the .grad known so far
    base, walk = build_picture(output, params, options, "replay_backward")
    if gradient is None and output.numel() != 1:
        shape = tuple(output.shape)
        raise CourseError(
            f"The output has shape {shape}, not a single number, so backward() needs to know "
            "the gradient flowing in. Pass gradient=torch.ones_like(output) (the same as "
            "replaying output.sum()), or reduce the output to a scalar first."
        )
    if gradient is not None and (
        not isinstance(gradient, torch.Tensor) or gradient.shape != output.shape
    ):
        got = (
            f"shape {tuple(gradient.shape)}"
            if isinstance(gradient, torch.Tensor)
            else type(gradient).__name__
        )
        raise CourseError(
            f"gradient must be a tensor of the output's shape {tuple(output.shape)}; got {got}. "
            "Use gradient=torch.ones_like(output) to replay output.sum()."
        )

    node_id: dict[object, str] = {}  # autograd node -> picture id
    leaf_node: dict[object, str] = {}  # AccumulateGrad node -> picture id of its leaf
    for node, obj in zip(base.nodes, walk.objects, strict=False):
        if node.kind == "collapsed":  # one box stands for every op of the chain
            for fn in obj:
                node_id[fn] = node.id
        elif node.kind in ("op", "accumulate"):
            node_id[obj] = node.id
    for pid, fn in walk.leaf_fns.items():
        leaf_node[fn] = pid
        node_id.setdefault(fn, pid)  # show_accumulate=False: the leaf box stands for it

    limit = walk.options["grad_limit"]
    steps: list[ReplayStep] = []
    pending: dict[object, ReplayStep] = {}

    def pre_hook(fn):
        def hook(grad_outputs):
            step = ReplayStep(
                number=len(steps) + 1,
                node=node_id.get(fn, "-"),
                name=type(fn).__name__,
                grad_in=tuple(_copy(g) for g in grad_outputs),
            )
            steps.append(step)
            pending[fn] = step

        return hook

    def post_hook(fn):
        def hook(grad_inputs, grad_outputs):
            step = pending.pop(fn)
            if type(fn).__name__ == "AccumulateGrad":
                leaf_pid = leaf_node.get(fn)
                step.leaf_node = leaf_pid
                step.leaf = walk.names.get(leaf_pid, "leaf") if leaf_pid else "leaf"
                step.leaf_grad = _copy(fn.variable.grad)
            else:
                for (nxt, _), g in zip(fn.next_functions, grad_inputs, strict=False):
                    if nxt is not None:
                        step.grad_out.append((node_id.get(nxt, "-"), _copy(g)))

        return hook

    fns = _all_nodes(output)
    initial = {}
    for fn in fns:
        if type(fn).__name__ == "AccumulateGrad" and fn in leaf_node:
            initial[leaf_node[fn]] = _copy(fn.variable.grad)
    handles = []
    try:
        for fn in fns:
            handles.append(fn.register_prehook(pre_hook(fn)))
            handles.append(fn.register_hook(post_hook(fn)))
        torch.autograd.backward(output, gradient, retain_graph=retain_graph)
    except RuntimeError as err:
        message = str(err)
        if "second time" in message or "freed" in message:
            raise CourseError(
                "This graph was already used by a backward() and its saved tensors are freed. "
                "Run the forward computation again to build a fresh graph (or pass "
                "retain_graph=True to the earlier backward) and replay that."
            ) from None
        raise CourseError(f"backward() failed: {message.splitlines()[0]}") from None
    finally:
        for handle in handles:
            handle.remove()
    return BackwardReplay(steps, base, walk.names.get("n0", "output"), limit, initial)
