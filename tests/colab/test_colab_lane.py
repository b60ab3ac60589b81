"""The Colab-like lane (issue 29, `make test-colab`): every lesson and exercise notebook runs
headless, top to bottom, in a kernel with Colab's kernel-side widget stack (ipywidgets 7.7.1,
ipykernel 6.17.1, IPython 7.34.0; requirements/colab.txt), and what the kernel sends is what
an ipywidgets 7 front end accepts.

Run by `make test-colab` in .venv-colab/ (marker ``colab``). `make test` deselects the marker
(pytest reports the count as "deselected"); run here in an ipywidgets 8 venv, every test
fails on its first assertion instead of passing or skipping quietly.

What an ipywidgets 7 front end accepts is read from the front end itself: the JavaScript
bundle of widgetsnbextension 3.6.x (the classic-notebook extension of ipywidgets 7, the
version pair Colab ships) registers @jupyter-widgets/base, /controls and /output under fixed
versions and names the models each module exports.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.colab

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
    (ROOT / "exercises").glob("*.ipynb")
)
IDS = [f"{p.parent.name}/{p.name}" for p in NOTEBOOKS]

# The versions this lane stands for (requirements/colab.txt); a venv that drifted fails here.
COLAB_VERSIONS = {"ipywidgets": "7.7.1", "ipykernel": "6.17.1", "ipython": "7.34.0"}
# What the ipywidgets 7 front end (@jupyter-widgets/base 1.2.0, controls 1.5.0, output 1.0.0)
# registers: a model whose module/version pair is not one of these does not render there.
FRONT_END_MODULES = {
    "@jupyter-widgets/base": "1.2.0",
    "@jupyter-widgets/controls": "1.5.0",
    "@jupyter-widgets/output": "1.0.0",
}
PROTOCOL_MAJOR = "2"  # ipywidgets 7's PROTOCOL_VERSION is 2.0.0; the front end checks the major
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# A call at the start of a line, e.g. `check("01.x", a)`, `hint("00.first_tensor")`.
CALL = re.compile(r"^\s*(?:\w+\s*=\s*)?(check|hint|quiz|replay_backward)\(", re.M)
# The text each call's output must hold (its text/plain or printed form).
TEXT = {
    "check": re.compile(r"^(✓ Passed|✗ Not yet|○ Not attempted|! Error): ", re.M),
    "hint": re.compile(r"^(Hint \d+/\d+|Solution)", re.M),
    "quiz": re.compile(r"^Answer in code: check\(", re.M),
    "replay_backward": re.compile(r"^backward replay of \S+: \d+ steps", re.M),
}

_runs: dict[Path, tuple[nbformat.NotebookNode, list[dict]]] = {}


def _run(path: Path) -> tuple[nbformat.NotebookNode, list[dict]]:
    """The notebook after a headless Run All in this venv's python3 kernel, and every comm
    message the kernel sent (raises on an error outside cells tagged raises-exception)."""
    if path not in _runs:
        from nbclient import NotebookClient

        comms: list[dict] = []

        class Recording(NotebookClient):
            def handle_comm_msg(self, outs, msg, cell_index):
                comms.append(msg)
                return super().handle_comm_msg(outs, msg, cell_index)

        nb = nbformat.read(path, as_version=4)
        Recording(
            nb,
            timeout=300,
            kernel_name="python3",
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
        _runs[path] = (nb, comms)
    return _runs[path]


def _text(output) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    return output.get("data", {}).get("text/plain", "")


def _front_end_bundle() -> str:
    """widgetsnbextension's JavaScript: the ipywidgets 7 front end of the classic notebook."""
    import widgetsnbextension

    static = Path(widgetsnbextension.__file__).parent / "static"
    return "\n".join(p.read_text(errors="replace") for p in sorted(static.glob("*.js")))


@pytest.fixture(autouse=True)
def course_env(monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS", "off")
    monkeypatch.setenv("COURSE_STRICT", "0")


def test_the_venv_has_colabs_kernel_side_versions():
    got = {name: version(name) for name in COLAB_VERSIONS}
    assert got == COLAB_VERSIONS, (
        f"this lane runs with Colab's versions {COLAB_VERSIONS}, found {got}: run it with "
        "`make test-colab` (it builds .venv-colab/ from requirements/colab.txt)"
    )
    assert version("widgetsnbextension").startswith("3.6."), "ipywidgets 7.7.1 pins 3.6.x"


def test_pip_installs_the_course_over_colabs_widget_stack_and_changes_nothing(tmp_path):
    """What `pip install` of the course does on Colab, where ipywidgets 7.7.1 and ipykernel
    6.17.1 are installed: a dry run with no index here, so any package pip would need to
    upgrade (or add) fails it. Only the course itself may be installed."""
    import json
    import subprocess
    import sys

    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--quiet"]
        + ["--no-build-isolation", "--report", str(report), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"pip would change this venv's packages:\n{done.stderr}"
    installs = [item["metadata"]["name"] for item in json.loads(report.read_text())["install"]]
    assert installs == ["course-helpers"], installs


def test_the_front_end_defines_the_versions_this_lane_accepts():
    """The accepted versions are the ones the ipywidgets 7 front end defines: its minified
    bundle has each module's version and the protocol version as string constants (e.g.
    ``const C="1.2.0",M="2.1.0"`` for base and protocol), and names every model the course
    uses. A weak check (it reads constants, it does not run the front end), but one that
    fails when widgetsnbextension moves to other versions."""
    bundle = _front_end_bundle()
    for module, wanted in FRONT_END_MODULES.items():
        assert module in bundle and f'="{wanted}"' in bundle, f"{module} {wanted}"
    protocol = re.search(r'="1\.2\.0",\w+="(\d+)\.\d+\.\d+"', bundle)
    assert protocol and protocol.group(1) == PROTOCOL_MAJOR, "base version, then protocol"
    for model in _COURSE_MODELS:
        assert re.search(r"\b" + model + r"\b", bundle), f"the front end has no {model}"


# Every model the course's widgets create (hint box, quiz menu, backward replay), as
# ipywidgets 7.7.1 names them; test_every_widget_message_is_one_ipywidgets_7_accepts checks
# that no other model reaches the front end.
_COURSE_MODELS = (
    "BoxModel",
    "VBoxModel",
    "HBoxModel",
    "ButtonModel",
    "ButtonStyleModel",
    "HTMLModel",
    "DescriptionStyleModel",
    "DropdownModel",
    "IntSliderModel",
    "SliderStyleModel",
    "OutputModel",
    "LayoutModel",
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_runs_and_every_call_gives_its_text(path):
    nb, _ = _run(path)
    calls = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        names = {m.group(1) for m in CALL.finditer(cell.source)}
        if not names:
            continue
        calls += 1
        shown = "\n".join(_text(o) for o in cell.outputs)
        if "raises-exception" in cell.metadata.get("tags", []) and any(
            o.output_type == "error" for o in cell.outputs
        ):
            continue
        for name in names:
            assert TEXT[name].search(shown), (
                f"{path.name}: {name}() gave no text output:\n{cell.source}\n---\n{shown}"
            )
        for output in cell.outputs:  # a widget output keeps a text form that says what it is
            if WIDGET_VIEW in output.get("data", {}):
                assert output.data.get("text/plain", "").strip(), (
                    f"{path.name}: a widget output without text/plain:\n{cell.source}"
                )
    assert calls, f"{path.name}: no check/hint/quiz call found (the pattern is out of date?)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_widget_message_is_one_ipywidgets_7_accepts(path):
    nb, comms = _run(path)
    opened: dict[str, str] = {}  # comm id -> model name
    for msg in comms:
        content = msg["content"]
        if msg["msg_type"] == "comm_open":
            assert content["target_name"] == "jupyter.widget", content["target_name"]
            assert msg["metadata"]["version"].split(".")[0] == PROTOCOL_MAJOR, msg["metadata"]
            data = content["data"]
            assert set(data) <= {"state", "buffer_paths"}, sorted(data)
            state = data["state"]
            for side in ("model", "view"):
                module, ver = state[f"_{side}_module"], state[f"_{side}_module_version"]
                if side == "view" and state.get("_view_name") is None:
                    continue
                assert FRONT_END_MODULES.get(module) == ver, (
                    f"{path.name}: {state['_model_name']} asks for {module} {ver}; the "
                    f"ipywidgets 7 front end has {FRONT_END_MODULES}"
                )
            opened[content["comm_id"]] = state["_model_name"]
        elif msg["msg_type"] == "comm_msg":
            assert content["comm_id"] in opened, f"{path.name}: a message to an unknown comm"
            method = content["data"].get("method")
            assert method in ("update", "custom"), (
                f"{path.name}: comm method {method!r} is unknown to the ipywidgets 7 front end"
            )
    unknown = set(opened.values()) - set(_COURSE_MODELS)
    assert not unknown, f"{path.name}: models not covered by this lane's check: {unknown}"
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is not None:
                assert view["version_major"] == int(PROTOCOL_MAJOR), view
                assert view["model_id"] in opened, f"{path.name}: a view of an unopened model"
    widget_calls = sum(
        1
        for cell in nb.cells
        if cell.cell_type == "code" and re.search(r"\b(quiz|replay_backward)\(", cell.source)
    )
    if widget_calls:  # a lesson with a quiz or a replay must have sent widgets
        assert opened, f"{path.name}: no widget was opened"


# ---------------------------------------------------- clicks, as the front end sends them


class _Kernel:
    """A python3 kernel of this venv, driven the way an ipywidgets 7 front end drives it:
    comm messages on the shell channel, everything the kernel answers read from iopub."""

    def __init__(self):
        from jupyter_client.manager import start_new_kernel

        self.km, self.kc = start_new_kernel(kernel_name="python3")
        self.models: dict[str, dict] = {}  # comm id -> latest state

    def _collect(self, msg_id: str) -> list[dict]:
        got = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            got.append(msg)
            if msg["msg_type"] in ("comm_open", "comm_msg"):
                state = msg["content"]["data"].get("state")
                if state is not None:
                    self.models.setdefault(msg["content"]["comm_id"], {}).update(state)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return got

    def run(self, code: str) -> list[dict]:
        got = self._collect(self.kc.execute(code))
        errors = [m["content"] for m in got if m["msg_type"] == "error"]
        assert not errors, errors
        return got

    def send(self, comm_id: str, data: dict) -> list[dict]:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)
        return self._collect(msg["header"]["msg_id"])

    def click(self, comm_id: str) -> list[dict]:
        return self.send(comm_id, {"method": "custom", "content": {"event": "click"}})

    def find(self, model: str, **state) -> str:
        found = [
            cid
            for cid, s in self.models.items()
            if s.get("_model_name") == model and all(s.get(k) == v for k, v in state.items())
        ]
        assert len(found) == 1, f"{model} {state}: {len(found)} found"
        return found[0]

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def _captured(got: list[dict], output_id: str, click_id: str) -> str:
    """The text shown inside Output widget ``output_id`` during the click: ipywidgets 7's
    Output sets its msg_id to the click's id, and the front end routes that message's
    outputs into it."""
    msg_ids = [
        m["content"]["data"]["state"]["msg_id"]
        for m in got
        if m["msg_type"] == "comm_msg"
        and m["content"]["comm_id"] == output_id
        and "msg_id" in m["content"]["data"].get("state", {})
    ]
    assert msg_ids[:1] == [click_id] and msg_ids[-1] == "", msg_ids
    return "\n".join(
        m["content"].get("text", "") or m["content"].get("data", {}).get("text/plain", "")
        for m in got
        if m["msg_type"] in ("display_data", "stream")
    )


@pytest.fixture
def kernel():
    k = _Kernel()
    yield k
    k.close()


def test_a_hint_button_click_shows_the_hint_in_its_output_area(kernel):
    kernel.run('from course_helpers import check\ncheck("00.first_tensor", ...)')
    button = kernel.find("ButtonModel", description="Hint")
    area = kernel.find("OutputModel")
    got = kernel.click(button)
    shown = _captured(got, area, got[0]["parent_header"]["msg_id"])
    assert re.search(r"^Hint 1/\d+", shown, re.M), shown


def test_a_quiz_menu_checks_the_picked_option(kernel):
    kernel.run('from course_helpers import quiz\nquiz("04.quiz_linear_layer")')
    menu = kernel.find("DropdownModel", description="Answer")
    button = kernel.find("ButtonModel", description="Check")
    area = kernel.find("OutputModel")
    assert kernel.models[menu]["index"] is None  # nothing picked yet
    got = kernel.click(button)
    assert "Pick an answer in the menu first." in _captured(
        got, area, got[0]["parent_header"]["msg_id"]
    )
    kernel.send(menu, {"method": "update", "state": {"index": 0}, "buffer_paths": []})
    got = kernel.click(button)
    shown = _captured(got, area, got[0]["parent_header"]["msg_id"])
    assert re.search(r"^(✓ Passed|✗ Not yet): 04\.quiz_linear_layer", shown, re.M), shown
    # ... and the question's output is updated with a saved copy of the answer and verdict
    copies = [m["content"]["data"] for m in got if m["msg_type"] == "update_display_data"]
    assert len(copies) == 1 and "\n\nYour answer: a: " in copies[0]["text/plain"], copies
    assert 'class="course-saved-quiz"' in copies[0]["text/html"]


def test_the_replay_slider_redraws_the_step(kernel):
    kernel.run(
        "import torch\nfrom course_helpers import replay_backward\n"
        "x = torch.tensor(2.0, requires_grad=True)\nr = replay_backward((x * x).sin())\nr"
    )
    slider = kernel.find("IntSliderModel", description="step")
    view = next(c for c, s in kernel.models.items() if "step 1 of" in str(s.get("value", "")))
    kernel.send(slider, {"method": "update", "state": {"value": 2}, "buffer_paths": []})
    assert "step 2 of" in kernel.models[view]["value"]
    forward = kernel.find("ButtonModel", description="next")
    kernel.click(forward)
    assert "step 3 of" in kernel.models[view]["value"]
    assert kernel.models[slider]["value"] == 3
