"""Lesson 13's hang demonstration shows the timeout however late a rank starts, or however long
a busy machine holds a rank up on its way to the short-timeout group, and a second wait that a
peer's exit ends long before the group's 30-minute timeout."""

import json
import textwrap
from pathlib import Path

import pytest

from course_helpers.environment import rank_launcher

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "13_distributed_data_parallel.ipynb"


def _cells():
    return [
        "".join(cell["source"])
        for cell in json.loads(LESSON.read_text())["cells"]
        if cell["cell_type"] == "code"
    ]


def _hang_script() -> str:
    (cell,) = [c for c in _cells() if c.startswith("%%writefile hang.py\n")]
    return cell.split("\n", 1)[1]


def _stored_messages() -> list[str]:
    nb = json.loads(LESSON.read_text())
    (cell,) = [
        c
        for c in nb["cells"]
        if c["cell_type"] == "code"
        and "hang.txt" in "".join(c["source"])
        and "read_text" in "".join(c["source"])
    ]
    return "".join(cell["outputs"][0]["text"]).strip().splitlines()


# rank 1 starts its script 2 s after rank 0 (a slow machine, a busy disk): the lesson's
# script must still meet, and rank 0 must still see the collective time out
LATE_START = textwrap.dedent(
    """
    import os, runpy, sys, time
    if os.environ["RANK"] == "1":
        time.sleep(2)
    sys.argv = [sys.argv[1], *sys.argv[2:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
    """
)

# rank 1 is held up for 2 s between leaving the barrier and making the short-timeout group (as
# a busy machine may hold it up): making the group is itself a meeting, bounded by the group's
# timeout, so a 1-second group failed here with DistStoreError
LATE_TO_THE_GROUP = textwrap.dedent(
    """
    import os, runpy, sys, time
    import torch.distributed as dist
    if os.environ["RANK"] == "1":
        make_group = dist.new_group

        def held_up(*args, **kwargs):
            time.sleep(2)
            return make_group(*args, **kwargs)

        dist.new_group = held_up
    sys.argv = [sys.argv[1], *sys.argv[2:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
    """
)


@pytest.mark.parametrize(
    "wrapper",
    [None, LATE_START, LATE_TO_THE_GROUP],
    ids=["together", "rank 1 starts 2 s late", "rank 1 makes the group 2 s late"],
)
def test_the_hang_demonstration_shows_the_timeout(wrapper, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hang = tmp_path / "hang.py"
    hang.write_text(_hang_script())
    outputs = [tmp_path / "hang.txt", tmp_path / "peer_left.txt"]
    if wrapper:
        (tmp_path / "wrapper.py").write_text(wrapper)
        run = rank_launcher.launch(tmp_path / "wrapper.py", [hang, *outputs], timeout=120)
    else:
        run = rank_launcher.launch(hang, outputs, timeout=120)
    logs = [log.read_text() for log in run.logs]
    assert not run.timed_out, logs
    assert all(path.exists() for path in outputs), logs
    messages = [line for path in outputs for line in path.read_text().strip().splitlines()]
    assert (
        messages
        == _stored_messages()
        == [
            "RuntimeError: Timed out waiting 5000ms for recv operation to complete",
            "RuntimeError: Connection closed by peer",
            "ended within 10 s: True",
        ]
    )
