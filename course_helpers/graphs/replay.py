"""Step through ``backward()`` in the order PyTorch's engine runs it.

``replay_backward(loss)`` performs the real backward pass once (so every leaf's
``.grad`` ends exactly as after ``loss.backward()``) while hooks on the graph's
nodes record each step: which node ran, the gradient that flowed in, the
gradients it sent to the nodes below, and which leaf ``.grad`` was accumulated.
Every hook is removed in a ``finally`` block, whatever happens.

The result shows a slider with previous/next buttons in JupyterLab and a
numbered text table everywhere else (its ``text/plain`` form, which nbval compares).
Each step's picture keeps one layout for the whole replay (box sizes are fixed from the
largest text any step puts in a box; only colours and texts change), writes the
gradients sent at that step on the edges they travel, keeps every node's "in:" once it
ran, shows what a waiting node has received so far ("in so far:"), and comes with a colour
legend. Without working ipywidgets the output is a static
HTML sequence of the steps with a one-line note naming the fix, never a traceback.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from course_helpers.errors import CourseError
from course_helpers.graphs.dot import NoticeShare
from course_helpers.graphs.picture import build_picture
from course_helpers.graphs.replay_notes import legend_html, static_note
from course_helpers.graphs.svg import picture_html
from course_helpers.graphs.walk import WALK_LIMIT, tensor_summary
from course_helpers.records import fmt_shape
from course_helpers.widgets import (
    saved_copy_style,
    stale_note,
    widget_style,
    widgets_available,
)

EDGE_VALUES = 3  # an edge shows the gradient's values up to this many numbers, else its shape
# a step's picture is scaled down to this height, so that on a 1366x768 screen the buttons,
# the step text, the legend and the whole graph show together once the widget's top is in view
FIT = "calc(100vh - 250px)"
WIDGET_TEXT = "[step-through buttons for the replay above]"  # the widget output's text form
STATIC_STEPS = 40  # the static fallback draws a picture for at most this many steps
WIDGET_FIX = (
    "pip install ipywidgets (it brings the JupyterLab widget extension), then restart "
    "JupyterLab and the kernel"
)


@dataclass
class ReplayStep:
    """One node run by the backward engine."""

    number: int  # 1, 2, ... in engine order
    node: str  # picture id (n3), or "-" when the node is not drawn
    name: str  # MulBackward0, AccumulateGrad, ...
    grad_in: tuple = ()  # gradients flowing into the node (CPU copies; None where absent)
    grad_out: list = field(default_factory=list)  # (target picture id, CPU copy or None)
    slots: list = field(default_factory=list)  # per grad_out entry: the target's input slot
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

    def __init__(
        self, steps: list[ReplayStep], base, output_name: str, limit: int, initial, released=True
    ):
        self.steps = steps
        # a node that ran drops its references to its saved tensors (no retain_graph)
        self._released = released
        self._base = base
        self._output_name = output_name
        self._limit = limit
        self._initial = initial  # picture id of each leaf -> its .grad before the replay
        self._sizes = None  # fixed box sizes shared by every step's picture
        self._html: dict[int, str] = {}  # step number -> its HTML view (drawn once)
        self._notice = NoticeShare()

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
        nodes already run are marked done and keep the gradient that flowed in ("in:"), a
        node still waiting shows the gradients that reached it before this step ("in so
        far:"), each leaf shows its ``.grad`` so far, and the gradients sent at this step
        are written on the edges they travel. Every step has the same layout."""
        if (
            not isinstance(number, int)
            or isinstance(number, bool)
            or not (1 <= number <= len(self.steps))
        ):
            raise CourseError(
                f"step must be an integer from 1 to {len(self.steps)}; got {number!r}."
            )
        step = self.steps[number - 1]
        ran = self.steps[:number]
        done = {s.node for s in ran[:-1]} - {step.node}
        extra = self._extra_lines(number)
        picture = self._base.with_state(
            active=step.node,
            done=done,
            extra_lines=extra,
            edge_labels=self._edge_labels(step),
            box_sizes=self._box_sizes(),
            released=done if self._released else (),
        )
        picture.arrows = "backward"  # arrows go the way the gradients flow
        picture.done_note = (
            " (it released its saved tensors: their memory is freed only if nothing else "
            "holds them)"
            if self._released
            else " (saved tensors kept: retain_graph)"
        )
        picture.notice_share = self._notice  # one notice per replay, on step 1 only;
        picture.show_notice = number == 1  # the other steps keep its space: same layout
        return picture

    def _in_line(self, step: ReplayStep) -> str:
        return "in: " + ("; ".join(self._fmt(g) for g in step.grad_in) or "-")

    def _extra_lines(self, number: int) -> dict[str, list[str]]:
        extra: dict[str, list[str]] = {}
        for leaf_id, grad in self._leaf_grads(number).items():
            extra.setdefault(leaf_id, []).append("grad " + self._fmt(grad))
        last_in: dict[str, str] = {}  # a node keeps the latest gradient that flowed in
        for step in self.steps[:number]:
            if step.node != "-":
                last_in[step.node] = self._in_line(step)
        for node_id, line in last_in.items():
            extra.setdefault(node_id, []).append(line)
        for node_id, line in self._waiting_lines(number).items():
            extra.setdefault(node_id, []).append(line)
        return extra

    def _waiting_lines(self, number: int) -> dict[str, str]:
        """Each node that has not run by step ``number`` but was sent gradients before it:
        what its input buffer holds ("in so far:", per input slot the sum of the gradients
        that arrived). The gradients sent at step ``number`` itself are on the edges."""
        ran = {s.node for s in self.steps[:number]}
        received: dict[str, dict[int, object]] = {}
        for step in self.steps[: number - 1]:
            _arrive(step, received)
        return {
            node: self._waiting_line(slots) for node, slots in received.items() if node not in ran
        }

    def _waiting_line(self, slots: dict) -> str:
        return "in so far: " + "; ".join(self._fmt(slots[k]) for k in sorted(slots))

    def _edge_labels(self, step: ReplayStep) -> dict[tuple[str, str], str]:
        """(input id, user id) -> the gradient sent along that edge at this step."""
        labels: dict[tuple[str, str], str] = {}
        if step.node == "-":
            return labels
        inputs = set(self._base._by_id(step.node).inputs)
        if step.leaf_node is not None and step.leaf_node in inputs and step.grad_in:
            labels[(step.leaf_node, step.node)] = _edge_text(step.grad_in[0])
        for target, grad in step.grad_out:
            if target in inputs and target != step.node and grad is not None:
                key = (target, step.node)
                text = _edge_text(grad)
                labels[key] = labels[key] + " + " + text if key in labels else text
        return labels

    def _box_sizes(self) -> dict[str, tuple[float, float]]:
        """Per node the size of its largest box over all steps (computed once)."""
        if self._sizes is None:
            from course_helpers.graphs.picture import released_line
            from course_helpers.graphs.svg import box_size, node_lines

            variants: dict[str, dict[str, list[str]]] = {}  # node -> slot -> texts
            grads = dict(self._initial)
            for leaf_id, grad in grads.items():
                variants.setdefault(leaf_id, {}).setdefault("grad", []).append(
                    "grad " + self._fmt(grad)
                )
            received: dict[str, dict[int, object]] = {}
            ran: set[str] = set()
            for step in self.steps:
                ran.add(step.node)
                for node_id in _arrive(step, received, ran):
                    line = self._waiting_line(received[node_id])
                    variants.setdefault(node_id, {}).setdefault("in", []).append(line)
                if step.leaf_node is not None:
                    variants.setdefault(step.leaf_node, {}).setdefault("grad", []).append(
                        "grad " + self._fmt(step.leaf_grad)
                    )
                if step.node != "-":
                    variants.setdefault(step.node, {}).setdefault("in", []).append(
                        self._in_line(step)
                    )
            sizes = {}
            for node in self._base.nodes:
                slots = variants.get(node.id, {})
                widest = [max(texts, key=len) for texts in slots.values()]
                released = [released_line(line) for line in node_lines(node)]
                (w1, h1) = box_size(node_lines(node) + widest)
                (w2, h2) = box_size(released + widest)
                sizes[node.id] = (max(w1, w2), max(h1, h2))
            self._sizes = sizes
        return self._sizes

    def _leaf_grads(self, number: int) -> dict[str, object]:
        grads = dict(self._initial)
        for step in self.steps[:number]:
            if step.leaf_node is not None:
                grads[step.leaf_node] = step.leaf_grad
        return grads

    def _step_text(self, number: int) -> str:
        row = self._row(self.steps[number - 1])
        return (
            f"step {row[0]} of {len(self.steps)}: node {row[1]} {row[2]} runs\n"
            f"  gradient in : {row[3]}\n  gradient out: {row[4]}"
        )

    def _step_html(self, number: int) -> str:
        """One step: what ran, the legend, the picture (text form in a <details>)."""
        from html import escape

        if number not in self._html:
            picture = self.picture(number)
            self._html[number] = (
                f"<pre>{escape(self._step_text(number))}</pre>{legend_html(self._released)}"
                + picture_html(picture.svg(), picture.text(), "Step picture as text", FIT)
            )
        return self._html[number]

    def static_html(self, note: str = "") -> str:
        """Every step one after the other (pictures for the first STATIC_STEPS), then the
        table: what shows where the step-through widget cannot."""
        from html import escape

        parts = [f"<p><em>{escape(note)}</em></p>"] if note else []
        parts.append(legend_html(self._released))
        for number in range(1, len(self.steps) + 1):
            text = escape(self._step_text(number))
            if number <= STATIC_STEPS:
                picture = self.picture(number)
                body = picture_html(picture.svg(), picture.text(), "Step picture as text")
                parts.append(
                    f"<details{' open' if number == 1 else ''}><summary>"
                    f"{text.splitlines()[0]}</summary><pre>{text}</pre>{body}</details>"
                )
            else:
                parts.append(f"<pre>{text}</pre>")
        parts.append(
            f"<details><summary>All steps as a table</summary><pre>{escape(self.table())}"
            "</pre></details>"
        )
        return '<div class="course-replay">' + "".join(parts) + "</div>"

    def first_step_html(self, note: str, number: int = 1) -> str:
        """Step 1 (or ``number``) as a static page (the widget's view) plus the table."""
        from html import escape

        return (
            f'<div class="course-replay"><p><em>{escape(note)}</em></p>{self._step_html(number)}'
            f"<details><summary>All steps as a table</summary><pre>{escape(self.table())}"
            "</pre></details></div>"
        )

    def widget(self, on_step=None):
        """An ipywidgets slider + previous/next buttons redrawing the picture per step;
        ``on_step(number)`` is called after each redraw."""
        import ipywidgets as w

        count = len(self.steps)
        slider = w.IntSlider(value=1, min=1, max=count, description="step")
        back = w.Button(description="previous", icon="arrow-left")
        forward = w.Button(description="next", icon="arrow-right")
        view = w.HTML(value=self._step_html(1))

        def show(change):
            number = change["new"]
            view.value = self._step_html(number)
            back.disabled = number == 1
            forward.disabled = number == count
            if on_step is not None:
                on_step(number)

        slider.observe(show, names="value")
        back.on_click(lambda _: setattr(slider, "value", max(1, slider.value - 1)))
        forward.on_click(lambda _: setattr(slider, "value", min(count, slider.value + 1)))
        back.disabled = True
        forward.disabled = count == 1
        box = w.VBox([w.HBox([back, slider, forward]), view, stale_note()])
        box.add_class("course-widget")  # the note shows under the buttons when they are stale
        return box

    def _saved_copy(self, number: int) -> dict:
        """The step the learner is at, as plain HTML: an output of its own that the notebook
        keeps whatever happens to the widget's saved state (hidden while the widget shows)."""
        html = self.first_step_html(static_note(number), number)
        return {
            "text/plain": self.table(),
            "text/html": (
                f'{widget_style()}{saved_copy_style()}<div class="course-replay-saved">{html}</div>'
            ),
        }

    def _ipython_display_(self):
        """In a kernel with widgets: the saved copy of the current step, then the buttons
        (each step shown updates the copy, so a reopened notebook shows the step reached
        even when JupyterLab saved no widget state). Elsewhere: the bundle below."""
        from IPython.display import display

        if _widget_problem() is not None:
            display(self._repr_mimebundle_(), raw=True)
            return
        saved = display(self._saved_copy(1), raw=True, display_id=True)
        key = "application/vnd.jupyter.widget-view+json"
        try:
            box = self.widget(on_step=lambda n: saved.update(self._saved_copy(n), raw=True))
            box.add_class("course-replay-widget")
            view = box._repr_mimebundle_()
            display({"text/plain": WIDGET_TEXT, key: view[key]}, raw=True)
        except Exception as err:  # any widget failure degrades to the static form
            note = f"Showing all steps: the step-through widget failed ({type(err).__name__})."
            saved.update(
                {"text/plain": self.table(), "text/html": self.static_html(note)}, raw=True
            )

    def _repr_mimebundle_(self, include=None, exclude=None):
        """text/plain: the table (what nbval compares). text/html: a static copy, so a
        reopened notebook, a front end without the widget extension or an untrusted
        notebook still shows the replay. Plus the widget view when widgets work."""
        bundle = {"text/plain": self.table()}
        problem = _widget_problem()
        if problem is None:
            try:
                view = self.widget()._repr_mimebundle_()
            except Exception as err:  # any widget failure degrades to the static form
                problem = f"the step-through widget failed ({type(err).__name__})"
            else:
                key = "application/vnd.jupyter.widget-view+json"
                if isinstance(view, dict) and key in view:
                    bundle[key] = view[key]
                    bundle["text/html"] = self.first_step_html(static_note(1))
                    return bundle
                problem = "the step-through widget could not be displayed"
        note = "" if problem == "" else f"Showing all steps: {problem}. Fix: {WIDGET_FIX}."
        bundle["text/html"] = self.static_html(note)
        return bundle


def _widget_problem() -> str | None:
    """None when the step-through widget can be used; "" outside a Jupyter kernel (no
    note needed); else a short reason to show with the fix."""
    if not widgets_available():
        import importlib.util
        import sys

        if "IPython" in sys.modules:
            from IPython import get_ipython

            shell = get_ipython()
            if getattr(shell, "kernel", None) is not None:
                missing = importlib.util.find_spec("ipywidgets") is None
                return "ipywidgets is not installed" if missing else ""
        return ""
    try:
        import ipywidgets  # noqa: F401
    except Exception as err:  # broken install: ImportError or anything else
        return f"ipywidgets could not be imported ({type(err).__name__})"
    return None


def _arrive(step: ReplayStep, received: dict, ran=()) -> list[str]:
    """Add the gradients ``step`` sent into the input buffers ``received`` (node -> input slot
    -> sum of what arrived); returns the nodes whose buffer changed. Gradients a node sends
    within its own box (a collapsed chain) and to nodes in ``ran`` are left out."""
    changed = []
    for (target, grad), slot in zip(step.grad_out, step.slots, strict=False):
        if target in ("-", step.node) or target in ran or grad is None:
            continue
        slots = received.setdefault(target, {})
        slots[slot] = grad if slot not in slots else slots[slot] + grad
        changed.append(target)
    return changed


def _edge_text(t) -> str:
    """A gradient on an edge: its values when small, else its shape."""
    if t.numel() <= EDGE_VALUES:
        return tensor_summary(t, EDGE_VALUES)
    return fmt_shape(t.shape)


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
    A graph of more than 20,000 nodes is refused with a ``CourseError`` before anything
    runs. The step pictures draw arrows the way gradients flow (sender to receiver).
    """
    import torch

    if isinstance(output, (list, tuple)):
        raise CourseError(
            "replay_backward replays one backward pass: pass a single tensor (e.g. the "
            "loss). For several outputs, add them first: replay_backward(a.sum() + b.sum())."
        )
    options = {**options, "show_grad": False}  # each step adds the .grad known so far
    base, walk = build_picture(output, params, options, "replay_backward")
    if not walk.complete:  # hooking every node of a huge graph would crash torch on release
        raise CourseError(
            f"replay_backward replays graphs of at most {WALK_LIMIT:,} nodes, and this one "
            f"has more (it stopped walking at {WALK_LIMIT:,}); nothing was run, no .grad "
            "changed. Replay a smaller version of the computation (fewer steps or layers), "
            "or call output.backward() directly and use draw_graph(output) for the picture."
        )
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
                for (nxt, slot), g in zip(fn.next_functions, grad_inputs, strict=False):
                    if nxt is not None:
                        step.grad_out.append((node_id.get(nxt, "-"), _copy(g)))
                        step.slots.append(slot)

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
    name = walk.names.get("n0", "output")
    return BackwardReplay(steps, base, name, limit, initial, released=not retain_graph)
