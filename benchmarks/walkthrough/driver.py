"""A learner's walkthrough of one exercise notebook, in a real kernel, recorded as it goes.

Usage from a lesson script (see ``lesson01.py``)::

    from driver import Walk
    with Walk("01") as w:
        w.setup()                                   # the notebook's cells before exercise 1
        w.try_("01.arange_grid", "answer = torch.arange(12).view(4, 3)\\ncheck(...)", "why")
        w.hint("01.arange_grid")                    # hint("01.arange_grid") in a new cell
        w.cell_of("01.linspace_points")             # run the notebook's own cells up to it

Every attempt runs as its own cell in one kernel (``COURSE_PROGRESS=off``, cwd
``exercises/``), so ``check`` reads the cell history as it does in JupyterLab. The text a
learner sees (stdout, stderr, text/plain of displays and results, errors with their
traceback) is printed and appended to ``walk-NN.jsonl`` in ``--out`` (default
``/tmp/walk``).

``Walk.run_all(NN)`` runs the exercise notebook top to bottom untouched and returns each
check cell's verdict line and any error.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CHECK_ID = re.compile(r'check\(\s*"(\d\d\.\w+)"')
OUT = Path(os.environ.get("WALK_OUT", "/tmp/walk"))


def notebook_path(lesson: str) -> Path:
    (path,) = sorted((ROOT / "exercises").glob(f"{lesson}_*.ipynb"))
    return path


class Walk:
    def __init__(self, lesson: str, timeout: float = 300, echo: bool = True):
        self.lesson = lesson
        self.nb = nbformat.read(notebook_path(lesson), 4)
        self.timeout = timeout
        self.echo = echo
        self.pos = 0  # the next notebook cell not yet run
        self.count = 0
        OUT.mkdir(parents=True, exist_ok=True)
        self.log = open(OUT / f"walk-{lesson}.jsonl", "a")

    # ------------------------------------------------------------------ kernel
    def __enter__(self):
        env = dict(os.environ, COURSE_PROGRESS="off", OMP_NUM_THREADS="1")
        env.pop("COURSE_STRICT", None)
        self.km = KernelManager(kernel_name="python3")
        self.km.kernel_cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        self.km.start_kernel(env=env, cwd=str(ROOT / "exercises"))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        return self

    def __exit__(self, *exc):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        self.log.close()

    def run(self, code: str) -> str:
        """Run ``code`` as one cell; return what the learner sees, as text."""
        msg_id = self.kc.execute(code, store_history=True)
        parts = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=self.timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                parts.append(content["text"])
            elif kind in ("display_data", "execute_result"):
                data = content["data"]
                if "text/plain" in data:
                    parts.append(data["text/plain"] + "\n")
            elif kind == "error":
                tb = ANSI.sub("", "\n".join(content["traceback"]))
                parts.append(f"!! RAISED {content['ename']}: {content['evalue']}\n{tb}\n")
            elif kind == "status" and content["execution_state"] == "idle":
                break
        self.kc.get_shell_msg(timeout=self.timeout)
        return "".join(parts)

    # ------------------------------------------------------------------ notebook cells
    def setup(self):
        """Run the notebook's cells before its first check cell."""
        for index, cell in enumerate(self.nb.cells):
            self.pos = index
            if cell.cell_type == "code" and CHECK_ID.search(cell.source):
                break
            if cell.cell_type == "code" and "course-setup" not in cell.metadata.get("tags", []):
                self._quiet(cell.source)

    def cell_of(self, exercise_id: str):
        """Run the notebook's non-check cells up to (not including) the check cell of
        ``exercise_id``; check cells passed on the way are skipped (the learner's attempts
        replace them)."""
        for i in range(self.pos, len(self.nb.cells)):
            cell = self.nb.cells[i]
            if cell.cell_type != "code":
                continue
            found = CHECK_ID.search(cell.source)
            if found and found.group(1) == exercise_id:
                self.pos = i + 1
                return cell.source
            if not found:
                self._quiet(cell.source)
        raise KeyError(exercise_id)

    def _quiet(self, code):
        out = self.run(code)
        if "!! RAISED" in out and self.echo:
            print(f"[setup cell raised]\n{out}")

    def task(self, exercise_id: str) -> str:
        """The markdown just before the check cell of ``exercise_id``."""
        for i, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code" and exercise_id in cell.source:
                j = i - 1
                while self.nb.cells[j].cell_type != "markdown":
                    j -= 1
                return self.nb.cells[j].source
        return ""

    # ------------------------------------------------------------------ attempts
    def try_(self, exercise_id: str, code: str, note: str = "", expect: str = "") -> str:
        """One attempt: ``code`` is the cell the learner runs. ``expect``: "pass" or "fail"
        (what a right judge says), recorded for the findings."""
        self.count += 1
        out = self.run(code)
        self._record("attempt", exercise_id, code, out, note, expect)
        return out

    def pre(self, exercise_id: str, code: str, note: str = "") -> str:
        """A cell the learner runs before the check cell (part of a split answer)."""
        out = self.run(code)
        self._record("pre", exercise_id, code, out, note, "")
        return out

    def hint(self, exercise_id: str, solution: bool = False) -> str:
        code = f'hint("{exercise_id}"' + (", solution=True)" if solution else ")")
        out = self.run(code)
        self._record("hint", exercise_id, code, out, "", "")
        return out

    def _record(self, kind, exercise_id, code, out, note, expect):
        row = dict(kind=kind, id=exercise_id, code=code, out=out, note=note, expect=expect)
        self.log.write(json.dumps(row) + "\n")
        self.log.flush()
        if self.echo:
            tag = {"attempt": f"#{self.count} TRY", "pre": "PRE-CELL", "hint": "HINT"}[kind]
            extra = f"  [{note}] expect={expect}" if note or expect else ""
            print(f"\n=== {tag} {exercise_id}{extra}\n--- code:\n{code}\n--- out:\n{out}", end="")


def run_all(lesson: str, timeout: float = 600) -> list[tuple[str, str]]:
    """Run the exercise notebook untouched, cell by cell; return (cell start, first line)
    for every check cell and every cell that raised."""
    rows = []
    with Walk(lesson, timeout=timeout, echo=False) as w:
        for cell in w.nb.cells:
            if cell.cell_type != "code":
                continue
            out = w.run(cell.source)
            found = CHECK_ID.search(cell.source)
            if found or "!! RAISED" in out:
                first = out.strip().splitlines()[0] if out.strip() else "(no output)"
                if "!! RAISED" in out:
                    first = out[out.index("!! RAISED") :].splitlines()[0]
                rows.append((found.group(1) if found else cell.source[:40], first))
    return rows


if __name__ == "__main__":  # python driver.py run-all 01 02 ...
    if sys.argv[1] == "run-all":
        for lesson in sys.argv[2:]:
            for ident, first in run_all(lesson):
                ok = first.startswith("○ Not attempted")
                print(f"{lesson} {'OK ' if ok else 'BAD'} {ident}: {first}")
