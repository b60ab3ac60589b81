"""The browser tests' JupyterLab: it forks its kernels, as nbval's are forked, and a port
taken before it could bind it costs a restart, not its tests.

JupyterLab only logs an exception raised by its config file and goes on, so a config that no
longer imports (the module moved) silently gave every browser-test kernel a fresh process,
each importing torch again. This test runs the config the way the server does.
"""

import subprocess
import sys
import urllib.request

from lab_server import _fork_kernels_in, chromium_path

from course_helpers.testing import forked_kernels

SHOW_PROVISIONER = (
    "import runpy, sys\n"
    "runpy.run_path(sys.argv[1])\n"
    "from jupyter_client.provisioning.factory import KernelProvisionerFactory\n"
    "print(KernelProvisionerFactory.instance().default_provisioner_name)\n"
)


def test_the_test_servers_config_makes_forking_the_default_provisioner(tmp_path):
    _fork_kernels_in(tmp_path)
    config = tmp_path / "jupyter_server_config.py"
    if not forked_kernels.enabled():  # a GPU machine: kernels start fresh, no config
        assert not config.exists()
        return
    run = subprocess.run(
        [sys.executable, "-c", SHOW_PROVISIONER, str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, f"the server's config does not run:\n{run.stderr}"
    assert run.stdout.strip() == forked_kernels.NAME


def test_a_server_whose_port_was_taken_starts_again_on_another(tmp_path, monkeypatch):
    """free_port() lets its port go; another process taking it before the server binds it
    must cost a restart, not the tests of that server. And a server, stopped, leaves nothing
    in the temporary folder (each start left two folders there, for IPython's settings)."""
    import socket

    from lab_server import LabServer

    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))  # the server's, not this process's
    server = LabServer(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", server.port))
        taken.listen()
        first = server.port
        try:
            server.start()
            assert server.port != first
            status = urllib.request.urlopen(
                f"{server.base_url}/api/status?token={server.token}", timeout=30
            )
            assert status.status == 200
        finally:
            server.stop()
    assert list(temporary.iterdir()) == []


def test_the_browser_tests_take_the_headless_shell_where_it_runs(tmp_path):
    shell, full = tmp_path / "chromium-headless-shell", tmp_path / "chromium"
    candidates = (str(shell), str(full))
    assert chromium_path({}, candidates) == str(full)  # neither: the skip message names chromium
    for path in (shell, full):
        path.write_text("#!/bin/sh\n")
    full.chmod(0o755)
    assert chromium_path({}, candidates) == str(full)  # the headless shell cannot run
    shell.chmod(0o755)
    assert chromium_path({}, candidates) == str(shell)
    assert chromium_path({"COURSE_CHROMIUM": "/opt/other"}, candidates) == "/opt/other"
