"""`make lab` serves the repository root, so every course link opens inside JupyterLab.

The server is started with the very command `make lab` runs (read from `make -n lab`), plus
only what a test needs (a free port, a token, no browser, private Jupyter folders).
"""

import json
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from lab_server import prepare_like_make_lab

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "course-test-token"
LINK = re.compile(r"\]\(([^)#\s]+\.ipynb)\)")


def lab_command() -> list[str]:
    dry_run = subprocess.run(
        ["make", "-n", "-s", "lab"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    lines = [line for line in dry_run.splitlines() if re.search(r"jupyter\S* lab\b", line)]
    assert len(lines) == 1, f"`make -n lab` should run JupyterLab once, it prints:\n{dry_run}"
    return shlex.split(lines[0])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, {}


def _start(command: list[str], env: dict) -> tuple[subprocess.Popen | None, str]:
    """The server and its address; (None, "") where its port was taken before it bound it
    (it then exits, as port_retries=0 asks, instead of serving on the next port)."""
    port = _free_port()
    server = subprocess.Popen(
        [*command, f"--port={port}", "--ServerApp.port_retries=0"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        if server.poll() is not None:
            said = server.stderr.read().decode()
            if "is already in use" in said:
                return None, ""
            pytest.fail(f"JupyterLab exited: {said[-2000:]}")
        try:
            if _get(f"{base}/api/status")[0] == 200:
                return server, base
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    server.kill()
    pytest.fail("JupyterLab did not answer within 60 s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folders = tmp_path_factory.mktemp("jupyter")
    command = lab_command() + [
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={TOKEN}",
        "--allow-root",
    ]
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "HOME": str(folders),
        "JUPYTER_RUNTIME_DIR": str(folders / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(folders / "workspaces"),
        "JUPYTER_CONFIG_DIR": str(folders / "config"),
    }
    prepare_like_make_lab()  # make lab fills work/ (ignored by git) before starting JupyterLab
    for _attempt in range(3):  # a port taken meanwhile: ask for another
        server, base = _start(command, env)
        if server is not None:
            break
    else:
        pytest.fail("JupyterLab found its port taken three times")
    try:
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def test_make_lab_serves_the_repository_root_and_opens_lesson_00():
    from course_helpers.environment.work_layout import work_path

    command = lab_command()
    assert work_path("notebooks", "00_start_here") in command  # the learner's copy
    assert f"--ServerApp.root_dir={ROOT}" in command


def test_the_server_root_holds_lessons_exercises_and_solutions(lab):
    status, listing = _get(f"{lab}/api/contents?content=1")
    assert status == 200
    names = {item["name"] for item in listing["content"]}
    assert {"notebooks", "exercises", "solutions", "README.md"} <= names


def _links(markdown_file: Path, text: str) -> list[Path]:
    """Every notebook a Markdown text links to, as a path relative to the repository."""
    targets = []
    for link in LINK.findall(text):
        if "://" in link:
            continue
        targets.append((markdown_file.parent / link).resolve().relative_to(ROOT))
    return targets


def test_every_course_link_opens_in_the_server(lab):
    """Every notebook link of the tracked lessons, exercises, solutions and README, and of
    their copies in work/ (renamed, their links rewritten: work/README.md's course map,
    lesson -> exercises, exercises -> lesson, lesson 00 -> its siblings) opens."""
    import nbformat

    links: dict[Path, set[Path]] = {}
    for path in sorted([*ROOT.glob("*/*.ipynb"), *ROOT.glob("work/*/*.ipynb")]):
        if path.parent.name not in ("notebooks", "exercises", "solutions"):
            continue
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                for target in _links(path, cell.source):
                    links.setdefault(target, set()).add(path.relative_to(ROOT))
    for readme in (ROOT / "README.md", ROOT / "work" / "README.md"):
        for target in _links(readme, readme.read_text()):
            links.setdefault(target, set()).add(readme.relative_to(ROOT))
    assert Path("exercises/01_tensors.ipynb") in links  # the lessons do link to exercises
    assert Path("work/exercises/01_exercises_tensors.ipynb") in links  # and their copies
    assert Path("work/solutions/01_solutions_tensors.ipynb") in links  # the course map
    broken = {
        str(target): sorted(map(str, sources))
        for target, sources in links.items()
        if _get(f"{lab}/api/contents/{target.as_posix()}?content=0")[0] != 200
    }
    assert broken == {}, f"links that JupyterLab cannot open (target: linked from): {broken}"
