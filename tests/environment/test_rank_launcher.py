"""environment.rank_launcher: ranks forked from a template behave as torchrun's workers."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from course_helpers.environment import rank_launcher

TORCHRUN_KEYS = (
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
    "ROLE_WORLD_SIZE", "GROUP_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "OMP_NUM_THREADS",
    "TORCHELASTIC_USE_AGENT_STORE",
)  # fmt: skip

DUMP_ENVIRONMENT = textwrap.dedent(
    f"""
    import json, os, sys
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    t = torch.ones(1) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    keys = {TORCHRUN_KEYS!r}
    record = {{k: os.environ.get(k) for k in keys}}
    record.update(argv=sys.argv[1:], name=__name__, cwd=os.getcwd(), sum=t.item(),
                  port=os.environ["MASTER_PORT"], pid=os.getpid(), parent=os.getppid())
    with open(os.path.join(sys.argv[1], f"rank{{dist.get_rank()}}.json"), "w") as f:
        json.dump(record, f)
    dist.destroy_process_group()
    """
)


def _records(folder):
    return [json.loads((folder / f"rank{r}.json").read_text()) for r in range(2)]


def _script(tmp_path, text, name="job.py"):
    script = tmp_path / name
    script.write_text(text)
    return script


def test_ranks_get_torchruns_environment_and_meet_in_a_process_group(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = rank_launcher.launch(_script(tmp_path, DUMP_ENVIRONMENT), [tmp_path, "x"])
    assert run.ok, [log.read_text() for log in run.logs]
    records = _records(tmp_path)
    for rank, record in enumerate(records):
        assert record["RANK"] == record["LOCAL_RANK"] == record["ROLE_RANK"] == str(rank)
        assert record["WORLD_SIZE"] == record["LOCAL_WORLD_SIZE"] == "2"
        assert record["OMP_NUM_THREADS"] == "1"
        assert record["argv"] == [str(tmp_path), "x"]
        assert record["name"] == "__main__"
        assert record["cwd"] == str(tmp_path)
        assert record["sum"] == 3.0  # 1 + 2: the all_reduce reached both ranks
    assert records[0]["pid"] != records[1]["pid"]


@pytest.mark.skipif(not rank_launcher.forks(), reason="ranks are forked only on Linux")
def test_the_template_is_reused_and_its_ranks_are_fresh_processes(tmp_path):
    script = _script(tmp_path, DUMP_ENVIRONMENT)
    parents, pids = set(), set()
    for _ in range(2):
        assert rank_launcher.launch(script, [tmp_path]).ok
        for record in _records(tmp_path):
            parents.add(record["parent"])
            pids.add(record["pid"])
    assert len(parents) == 1  # one template forked all four ranks
    assert len(pids) == 4
    assert os.getpid() not in parents


def test_the_same_environment_as_torchrun_gives(tmp_path, monkeypatch):
    script = _script(tmp_path, DUMP_ENVIRONMENT)
    monkeypatch.chdir(tmp_path)
    forked = rank_launcher.launch(script, [tmp_path])
    assert forked.ok
    ours = _records(tmp_path)
    monkeypatch.setenv("COURSE_RANKS_BY", "torchrun")
    by_torchrun = rank_launcher.launch(script, [tmp_path])
    assert by_torchrun.ok, by_torchrun.logs[0].read_text()
    theirs = _records(tmp_path)
    for mine, torchruns in zip(ours, theirs, strict=True):
        assert {k: mine[k] for k in TORCHRUN_KEYS} == {k: torchruns[k] for k in TORCHRUN_KEYS}
        assert (mine["argv"], mine["name"], mine["cwd"]) == (
            torchruns["argv"],
            torchruns["name"],
            torchruns["cwd"],
        )


def test_a_failing_rank_stops_the_other_at_once(tmp_path):
    script = _script(
        tmp_path,
        "import os, time\n"
        "if os.environ['RANK'] == '1':\n"
        "    raise ValueError('rank one broke')\n"
        "time.sleep(60)\n",
    )
    start = time.monotonic()
    run = rank_launcher.launch(script, [], timeout=60)
    assert time.monotonic() - start < 30  # not the 60 s of rank 0's sleep
    assert not run.ok and not run.timed_out
    assert run.codes[1] == 1 and run.codes[0] != 0
    assert "ValueError: rank one broke" in run.logs[1].read_text()


STORE_CHECKS = textwrap.dedent(
    """
    import errno, os, socket, time
    from datetime import timedelta
    import torch.distributed as dist

    port = int(os.environ["MASTER_PORT"])
    try:  # before this rank has called init_process_group
        socket.create_connection(("localhost", port), timeout=5).close()
        print("MASTER_PORT was served", flush=True)
    except OSError as error:
        print("MASTER_PORT was not served:", errno.errorcode.get(error.errno), flush=True)
    dist.init_process_group("gloo")
    pids = [None, None]
    dist.all_gather_object(pids, os.getpid())
    if dist.get_rank() == 1:
        while os.path.exists(f"/proc/{pids[0]}"):  # until rank 0 has exited (and been reaped)
            with open(f"/proc/{pids[0]}/stat") as f:
                if f.read().split(") ")[-1].startswith("Z"):
                    break
            time.sleep(0.05)
        store = dist.TCPStore(
            os.environ["MASTER_ADDR"], port, is_master=False, timeout=timedelta(seconds=20)
        )
        store.set("after rank 0", "reached")
        print("the store served rank 1 after rank 0 ended", flush=True)
    dist.destroy_process_group()
    """
)


@pytest.mark.skipif(not rank_launcher.forks(), reason="reads /proc; torchrun runs the ranks there")
def test_the_store_is_served_before_the_ranks_start_and_after_rank_0_ends(tmp_path):
    # torchrun's agent hosts the store, so its port cannot be taken between its choice and a
    # rank's bind, and rank 0 ending first does not leave the others without it
    run = rank_launcher.launch(_script(tmp_path, STORE_CHECKS), [], timeout=60)
    logs = [log.read_text() for log in run.logs]
    assert run.ok, [log[-1500:] for log in logs]
    assert all("MASTER_PORT was served" in log for log in logs), logs
    assert "the store served rank 1 after rank 0 ended" in logs[1]


def _can_unshare_the_network() -> bool:
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


NO_LOOPBACK = textwrap.dedent(
    """
    from course_helpers.lessons.lesson13.exercises import run_on_two_ranks

    def main(rank, world_size, workdir):
        return rank

    result = run_on_two_ranks(main)  # the default timeout, 120 s
    print("returned", type(result).__name__)
    """
)


@pytest.mark.skipif(
    not (rank_launcher.forks() and _can_unshare_the_network()),
    reason="needs a network namespace of its own (unshare -n: root, as in CI)",
)
def test_a_store_that_cannot_start_is_a_clear_failure_not_a_traceback(tmp_path):
    # in a network namespace of its own the loopback device is down: nothing reaches localhost
    start = time.monotonic()
    done = subprocess.run(
        ["unshare", "-n", sys.executable, _script(tmp_path, NO_LOOPBACK, "learner.py")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env=dict(os.environ, OMP_NUM_THREADS="1", COURSE_PROGRESS="off"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "The ranks could not meet: their store" in done.stdout
    assert "loopback network (localhost)" in done.stdout
    assert "returned RunFailed" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert time.monotonic() - start < 60  # the store gives up after 10 s, not the run's 120


RUNS_UNTIL_KILLED = textwrap.dedent(
    """
    import os, sys, time
    import torch.distributed as dist

    dist.init_process_group("gloo")  # after this, the ranks no longer need the store
    path = os.path.join(sys.argv[1], f"pid{dist.get_rank()}")
    with open(path + ".new", "w") as f:
        f.write(str(os.getpid()))
    os.replace(path + ".new", path)  # the test never reads a file half written
    time.sleep(600)
    """
)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1].startswith("Z")
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not rank_launcher.forks(), reason="ranks are forked only on Linux")
def test_an_interrupted_launch_stops_its_ranks(tmp_path):
    import threading

    script = _script(tmp_path, RUNS_UNTIL_KILLED)
    failures = []

    def launch():
        try:
            rank_launcher.launch(script, [tmp_path], timeout=120)
        except RuntimeError as error:  # the template is gone: its reply never comes
            failures.append(error)

    thread = threading.Thread(target=launch)
    thread.start()
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"pid{r}").exists() for r in range(2)):
        assert time.monotonic() < deadline, [
            log.read_text()[-800:] for log in tmp_path.glob("*.log")
        ]
        time.sleep(0.05)
    pids = [int((tmp_path / f"pid{r}").read_text()) for r in range(2)]
    rank_launcher._stop_template()  # what launch() does when the kernel is interrupted
    thread.join(30)
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in pids), pids
    assert failures and "exited unexpectedly" in str(failures[0])


def test_a_hang_ends_at_the_timeout(tmp_path):
    script = _script(tmp_path, "import time\ntime.sleep(60)\n")
    run = rank_launcher.launch(script, [], timeout=1)
    assert run.timed_out and not run.ok


def test_run_on_two_ranks_returns_values_and_reports_a_crash_without_a_traceback(tmp_path, capsys):
    from course_helpers.lessons.lesson13.exercises import run_on_two_ranks

    def main(rank, world_size, workdir):
        return rank

    assert [r["value"] for r in run_on_two_ranks(main)] == [0, 1]

    def crashes(rank, world_size, workdir):
        import os

        os._exit(3)  # dies without a Python traceback

    failure = run_on_two_ranks(crashes)
    assert type(failure).__name__ == "RunFailed" and "ended with exit code 3" in str(failure)
    assert "ended with exit code" in capsys.readouterr().out
