"""The kernel a grading worker starts (``grading.worker.run_notebook``) talks to it over socket
files in the notebook's own work folder, not over TCP ports that another process could take
between their choice and the kernel's bind (without the sandbox, every notebook's kernel
shares the machine's ports)."""

import json
from pathlib import Path

import nbformat
import pytest

from course_helpers.grading import worker

SEES_ITS_CONNECTION = (
    "import json\n"
    "from ipykernel.connect import get_connection_file\n"
    "with open(get_connection_file()) as f:\n"
    "    info = json.load(f)\n"
    "with open('seen.json', 'w') as f:\n"
    "    json.dump([info['transport'], info['ip'], get_connection_file()], f)\n"
)


@pytest.fixture(autouse=True)
def kernels_started_as_the_worker_starts_them(monkeypatch):
    """Not forked by the test run's plugin (course_helpers.testing.forked_kernels), whose
    kernels use socket files of their own."""
    from jupyter_client.provisioning.factory import KernelProvisionerFactory

    factory = KernelProvisionerFactory.instance()
    monkeypatch.setattr(factory, "default_provisioner_name", "local-provisioner")


def _run(folder: Path) -> tuple[str, list]:
    folder.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SEES_ITS_CONNECTION)])
    run = worker.run_notebook(notebook, folder, worker.AnswerChannel(folder), 60, "python3")
    return run, json.loads((folder / "seen.json").read_text())


def test_the_kernel_talks_over_socket_files_in_the_work_folder(tmp_path):
    run, (transport, prefix, connection_file) = _run(tmp_path / "work")
    assert run == "completed"
    assert (transport, prefix) == ("ipc", str(tmp_path / "work" / ".kernel"))
    # its connection file too: not a new file in the temporary folder, which a killed worker
    # would leave behind there
    assert connection_file == str(tmp_path / "work" / ".kernel.json")
    assert not list((tmp_path / "work").glob(".kernel*"))  # removed with the kernel


def test_a_work_folder_too_deep_for_a_socket_path_gets_tcp_and_still_runs(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    assert len(str(deep / ".kernel-99").encode()) > 107  # no Unix socket can have it
    run, (transport, _, connection_file) = _run(deep)
    assert (run, transport) == ("completed", "tcp")
    assert connection_file == str(deep / ".kernel.json")


@pytest.mark.parametrize("folder", ["/tmp/work"])  # the sandbox's work folder
def test_the_sandboxs_work_folder_is_short_enough_for_socket_files(folder):
    assert worker._kernel_transport(Path(folder)).KernelManager.transport == "ipc"
