"""Helpers for tests that play a learner's cells.

``check_answer_cell`` runs an answer cell's code and checks its ``answer`` as if IPython had
just run that cell (the method checks read the cell from IPython's input history);
``run_in_kernel`` runs cells in a fresh Jupyter kernel and gives back the executed notebook.
"""

from __future__ import annotations

from unittest import mock


def as_answer_cell(source: str):
    """Pretend ``source`` is the answer cell being run (as IPython's input history)."""
    shell = mock.Mock()
    shell.history_manager.input_hist_raw = ["", source]
    return mock.patch("IPython.get_ipython", return_value=shell)


def check_answer_cell(exercise_id: str, code: str, names: dict):
    """Run ``code`` (which sets ``answer``) in ``names``, then ``check`` it from that cell."""
    from course_helpers import check

    exec(code, names)
    with as_answer_cell(code + f'check("{exercise_id}", answer)\n'):
        return check(exercise_id, names["answer"])


def run_in_kernel(sources: list[str], timeout: int = 120, allow_errors: bool = False):
    """The notebook of ``sources``, executed top to bottom in a fresh python3 kernel."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors).execute()
    return nb
