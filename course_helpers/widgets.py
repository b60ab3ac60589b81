"""The widget layer every course widget shares: is there a live kernel with ipywidgets,
display a widget or print its text fallback, and the stylesheet and note that say what to do
when a widget no longer reaches a kernel (restarted, shut down, reopened; see
docs/learner-journey.md)."""

from __future__ import annotations

import html
import importlib.util
import json
import sys

# The way back to working buttons, in the menu words of JupyterLab 4 and Notebook 7 (both have
# this item; tests/course/test_browser_kernel.py clicks it, with a fresh kernel and with none).
# Running only the cell itself fails in a fresh kernel (its imports are in the cells above).
RUN_DOWN_TO_HERE = (
    "click this cell, then Kernel \u25b8 Restart Kernel and Run up to Selected Cell (elsewhere: "
    "run every cell above this one, then this one)"
)

# What a learner sees when the buttons below a result no longer reach a kernel.
STALE_NOTE = (
    "These buttons lost their kernel (it was shut down or restarted, or the notebook was "
    f"opened again). To use them, run the notebook down to here: {RUN_DOWN_TO_HERE}."
)


MISSING_NOTE = (
    "The buttons of this cell did not come back with the notebook (they were not saved with it, "
    "or Jupyter failed to restore them). To get them, run the notebook down to here: "
    f"{RUN_DOWN_TO_HERE}. (If this note stays after that, run: "
    "python -m course_helpers doctor)"
)


# The kernel is gone but ipywidgets did not notice: after Kernel > Shut Down Kernel, Shut Down
# All Kernels or Notebook 7's Close and Shut Down (and a dead kernel) jupyterlab-manager marks
# no view disconnected (it does so on a restart only), so the buttons would look alive and do
# nothing. The notebook's own kernel indicator (JupyterLab 4's and Notebook 7's toolbar) then
# says "unknown" or "dead".
_NO_KERNEL = (
    ".jp-NotebookPanel:has(.jp-Notebook-ExecutionIndicator:is([data-status=unknown],"
    "[data-status=dead]))"
)
_STALE = (".course-widget.jupyter-widgets-disconnected", f"{_NO_KERNEL} .course-widget")


# The node JupyterLab writes "Error displaying widget" into. The :not(#...) outranks the same
# rule in the stylesheets that outputs saved by earlier versions carry (a learner's kept copy
# keeps them until its cells run again), whichever comes later in the page.
_MISSING_NODE = ".jp-OutputArea-output.jupyter-widgets:not(:has(*)):not(#course-widget-css)"


def _each(suffix: str) -> str:
    return ",".join(f"{stale}{suffix}" for stale in _STALE)


# One stylesheet for every course widget (why and how: docs/learner-journey.md).
# - ipywidgets adds the class jupyter-widgets-disconnected to the view of a widget whose kernel
#   connection is gone (after a kernel restart, and for widgets restored from a saved notebook);
#   with _NO_KERNEL, the note inside a course widget then appears, right under the buttons
#   (flex order: the buttons, the note, then the hints, verdict or picture), and the controls
#   are greyed out.
# - JupyterLab's widget renderer writes "Error displaying widget: model not found" as bare text
#   into an output node it marks .jupyter-widgets when a saved notebook has a widget output but
#   no saved state for it, or when it registers that state too late (a race in jupyterlab-manager,
#   docs/learner-journey.md); that text is replaced by MISSING_NOTE.
WIDGET_CSS = (
    ".course-widget .course-stale-note{display:none}"
    ".course-widget>*{order:2}.course-widget>:first-child{order:0}"
    ".course-widget>.course-stale-note{order:1}"
    + _each(" .course-stale-note")
    + "{display:block;opacity:.9}"
    + _each(":focus-within .course-stale-note")
    + "{opacity:1;font-weight:bold}"
    + _each(" :is(button,select,.slider-container,.widget-readout)")
    + "{opacity:.45}"
    # ipywidgets marks every disconnected part with a broken-link icon: one (the box's) is enough
    ".course-widget .jupyter-widgets-disconnected::before,"
    ".jp-OutputArea-output>.jupyter-widgets-disconnected .jupyter-widgets-disconnected::before"
    "{display:none}"
    f"{_MISSING_NODE}{{visibility:hidden;font-size:0;line-height:0}}"
    f"{_MISSING_NODE}::before{{visibility:visible;display:block;"
    "font-size:var(--jp-content-font-size1,14px);line-height:1.5;padding:2px 10px;"
    "border-left:4px solid #6d6d6d;content:" + json.dumps(MISSING_NOTE, ensure_ascii=False) + "}"
)


# Plain copies of what a widget shows (revealed hints, the replay's step, a quiz's checked
# option and its verdict), kept in the notebook's outputs so that they survive a save without
# widget state. Hidden wherever this stylesheet applies, except in a JupyterLab output area
# whose widget could not be restored (no widget box in the cell's outputs: the node
# MISSING_NOTE replaces); shown where styles are stripped (an untrusted notebook, GitHub),
# where the widget shows its text form. Each copy carries this rule in its own HTML. (:has()
# cannot be nested, hence :not(:has(...)).)
_MISSING = ".jp-OutputArea:not(:has(.jp-OutputArea-output>.widget-box))"
SAVED_COPY_CSS = (
    ".course-saved-hints,.course-replay-saved,.course-saved-quiz{display:none}"
    f"{_MISSING} .course-saved-hints,{_MISSING} .course-replay-saved,"
    f"{_MISSING} .course-saved-quiz{{display:block}}"
)


def saved_copy_style() -> str:
    """The ``<style>`` element that goes with a plain copy of a widget's content."""
    return f'<style class="course-saved-style">{SAVED_COPY_CSS}</style>'


def widget_style() -> str:
    """The ``<style>`` element that goes with every output that is followed by a widget."""
    return f'<style class="course-widget-style">{WIDGET_CSS}</style>'


def stale_note():
    """An ipywidgets HTML note, hidden while its widget is live (put it in the widget's box,
    after the buttons, and give the box the class ``course-widget``: the note shows right under
    the box's first child); it carries the stylesheet itself, so a widget restored from a saved
    notebook shows the note without any other output."""
    import ipywidgets as widgets

    note = widgets.HTML(
        value=f'{widget_style()}<div style="{NOTE_STYLE}">{html.escape(STALE_NOTE)}</div>'
    )
    note.add_class("course-stale-note")
    return note


NOTE_STYLE = "border-left: 4px solid #e65100; padding: 2px 10px; margin: 2px 0; line-height: 1.4;"


def display_widget(widget, fallback: str = "") -> bool:
    """Display ``widget``; if that fails (a broken ipywidgets install), print ``fallback``.

    Returns whether the widget was displayed. Never raises: a widget is an extra, the text
    form of a result, hint or quiz is always shown before it.
    """
    try:
        from IPython.display import display

        display(widget)
        return True
    except Exception as err:  # the text above already says how to go on without buttons
        if fallback:
            print(f"{fallback} (buttons unavailable here: {type(err).__name__}: {err})")
        return False


def widgets_available() -> bool:
    """True inside a Jupyter kernel (it has a comm manager) with ipywidgets installed."""
    if "IPython" not in sys.modules or importlib.util.find_spec("ipywidgets") is None:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
