"""Helpers for the course "Tensors & Autograd, hands-on".

Importing this package is cheap and has no side effects: every public name is
loaded on first use, so ``import course_helpers`` costs almost nothing on top of
``import torch`` and never pulls in matplotlib, ipywidgets or graphviz.

Public API (see each function's docstring):

- ``get_device()``: the course device (CUDA, else MPS, else CPU; ``COURSE_DEVICE`` overrides).
- ``setup_notebook()``: seed everything, set print options; call once atop a lesson.
- ``cpu_generator(seed)``: a seeded CPU ``torch.Generator`` for reproducible random data.
- ``draw_graph(output, params=None, **options)``: a picture of the autograd graph behind ``output``.
- ``replay_backward(output, params=None)``: step through ``backward()`` in engine order.
- ``torchviz_graph(output, params=None)``: the same graph as torchviz's ``make_dot`` draws it.
- ``show_broadcast(column, row)``: lesson 04's picture of ``column + row``, stretched entries pale.
- ``SavedTensorMeter(ignore=())``: count the tensors live graphs saved for backward, and bytes.
- ``check(exercise_id, answer)``: check an exercise answer and show feedback.
- ``hint(exercise_id)``: the next tiered hint for an exercise.
- ``quiz(exercise_id)``: a multiple-choice question with a menu and a Check button.
- ``progress()``: a per-lesson summary of your exercise results.
- ``@repair``, ``unanswered(x)``: an exercise that rewrites a script's function or class keeps
  the script's version until you write yours (lesson 12).
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "get_device": "course_helpers.environment.device",
    "setup_notebook": "course_helpers.environment.notebook",
    "cpu_generator": "course_helpers.environment.notebook",
    "draw_graph": "course_helpers.graphs.picture",
    "GraphPicture": "course_helpers.graphs.picture",
    "torchviz_graph": "course_helpers.graphs.torchviz_bridge",
    "replay_backward": "course_helpers.graphs.replay",
    "SavedTensorMeter": "course_helpers.graphs.saved_memory",
    "show_broadcast": "course_helpers.graphs.broadcast",
    "check": "course_helpers.checking.checker",
    "CheckResult": "course_helpers.checking.checker",
    "hint": "course_helpers.checking.hints",
    "progress": "course_helpers.checking.progress",
    "repair": "course_helpers.checking.repairs",
    "unanswered": "course_helpers.checking.repairs",
    "quiz": "course_helpers.checking.quizzes",
    "ExerciseFailed": "course_helpers.checking.checker",
    "CourseError": "course_helpers.errors",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'course_helpers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
