"""``torchviz_graph(output)``: the graph as torchviz's ``make_dot`` draws it, for learners who
meet torchviz elsewhere. Drawn on an opaque background; its text form is the DOT source."""

from __future__ import annotations

import re
import warnings

from course_helpers.errors import CourseError
from course_helpers.graphs.dot import NoticeShare, draw_svg
from course_helpers.graphs.styles import BACKGROUND
from course_helpers.graphs.svg import picture_html
from course_helpers.graphs.walk import as_outputs, tensor_names


class TorchvizPicture:
    """torchviz's ``make_dot`` picture with node names renamed n0, n1, ... in order."""

    def __init__(self, source: str):
        self.source = source
        self.notice_share = NoticeShare()

    def text(self) -> str:
        return self.source

    __str__ = text

    def __repr__(self) -> str:
        return self.source

    def svg(self) -> str:
        from course_helpers.graphs.svg import render_dot_source

        def fallback():
            return render_dot_source(self.source, note=self.notice_share.claim() or None)

        return draw_svg(_with_background(self.source), fallback)

    def _repr_mimebundle_(self, include=None, exclude=None):
        svg = self.svg()
        html = picture_html(svg, self.source, "DOT source")
        return {"image/svg+xml": svg, "text/html": html, "text/plain": self.source}


def _with_background(source: str) -> str:
    """DOT source with an opaque background added (for drawing only; .source is unchanged)."""
    head, brace, rest = source.partition("{")
    return f'{head}{brace}\n\tbgcolor="{BACKGROUND}"{rest}' if brace else source


_TORCHVIZ_STATEMENT = re.compile(r"(?m)^\t(\d+)( -> (\d+))?")


def torchviz_graph(output, params=None, **make_dot_options) -> TorchvizPicture:
    """The graph as torchviz's ``make_dot`` draws it, with stable node names.

    torchviz names nodes by ``id()`` (different on every run); here they become
    ``n0, n1, ...`` in order of appearance. Without Graphviz the picture is drawn by
    the course's pure-Python renderer instead of raising ``ExecutableNotFound``.
    """
    import torch

    outputs = as_outputs(output, "torchviz_graph")
    if params is not None:
        if isinstance(params, torch.nn.Module):
            params = dict(params.named_parameters())
        tensor_names(params, None)  # validates
    try:
        with warnings.catch_warnings():  # torchviz still uses distutils' LooseVersion
            warnings.simplefilter("ignore", DeprecationWarning)
            from torchviz import make_dot
    except ImportError as err:
        raise CourseError(
            "torchviz is not installed. Install it with `pip install torchviz`, or use "
            "draw_graph(...) which needs no extra package."
        ) from err
    import inspect

    known = set(inspect.signature(make_dot).parameters) - {"var", "params"}
    unknown = sorted(set(make_dot_options) - known)
    if unknown:  # make_dot would raise a TypeError from inside torchviz
        raise CourseError(
            f"torchviz_graph got unknown option(s) {', '.join(unknown)}; torchviz's make_dot "
            f"takes {', '.join(sorted(known)) or 'no other options'}."
        )
    target = outputs[0] if len(outputs) == 1 else tuple(outputs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            dot = make_dot(target, params=params, **make_dot_options)
    except RecursionError:
        raise CourseError(
            "torchviz walks the graph recursively and cannot draw a graph this deep "
            "(about 1,000 operations). Use draw_graph(...), which walks iteratively."
        ) from None
    except RuntimeError as err:  # show_saved / show_attrs read saved tensors a backward freed
        if "freed" not in str(err) and "second time" not in str(err):
            raise
        raise CourseError(
            "This graph was already used by a backward() and its saved tensors are freed, "
            "so torchviz cannot show them (show_saved / show_attrs). Run the forward "
            "computation again to build a fresh graph, or draw it without those options."
        ) from None
    source = dot.source
    mapping: dict[str, str] = {}

    def rename(key: str) -> str:
        if key not in mapping:
            mapping[key] = f"n{len(mapping)}"
        return mapping[key]

    # rename only node ids at the start of a statement, never numbers inside labels
    renamed = _TORCHVIZ_STATEMENT.sub(
        lambda m: "\t" + rename(m.group(1)) + (" -> " + rename(m.group(3)) if m.group(2) else ""),
        source,
    )
    return TorchvizPicture(renamed)
