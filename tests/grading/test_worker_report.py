"""How the grader reads a worker's report pipe (``grading.running``): a process the worker left
behind may still hold the pipe's write end, and the grader must neither wait for it nor leave
a reader on a descriptor number that the next notebook's pipe may be given."""

import json
import os
import subprocess
import sys
import textwrap
import time

from course_helpers.grading import running

# a stand-in for the worker: it reports, leaves a process holding the report pipe open in a
# session of its own (out of reach of the grader's killpg), and exits
LEAVES_THE_PIPE_OPEN = textwrap.dedent(
    """
    import os, sys, time
    fd = int(sys.argv[1])
    frames = b"frame-1"
    os.write(fd, b"started\\n")
    os.write(fd, b"result " + sys.argv[2].encode() + b"\\n" + frames)
    if os.fork() == 0:
        os.setsid()
        time.sleep(float(sys.argv[3]))
        os._exit(0)
    """
)


def _worker(stays: float) -> tuple[subprocess.Popen, int]:
    readable, writable = os.pipe()
    result = json.dumps({"run": "completed", "answers": len(b"frame-1")})
    process = subprocess.Popen(
        [sys.executable, "-c", LEAVES_THE_PIPE_OPEN, str(writable), result, str(stays)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=(writable,),
    )
    os.close(writable)
    return process, readable


def test_a_pipe_held_open_after_the_worker_ends_neither_holds_the_grader_nor_reads_on(
    monkeypatch,
):
    monkeypatch.setattr(running, "REPORT_GRACE_S", 0.5)
    process, readable = _worker(stays=6)
    started = time.monotonic()
    run = running._wait(process, readable, b"", None, cells=1, timeout=30)
    assert time.monotonic() - started < 4  # not until the leftover process lets go (6 s)
    assert (run.run, run.answers, run.started) == ("completed", b"frame-1", True)
    # the next notebook's report pipe gets the same descriptor number
    next_read, next_write = os.pipe()
    try:
        if next_read != readable:
            os.dup2(next_read, readable)
        os.write(next_write, b"the next notebook's report")
        time.sleep(1.5)  # longer than any wait of the reader's loop
        os.set_blocking(readable, False)
        assert os.read(readable, 100) == b"the next notebook's report"
    finally:
        for fd in {next_read, next_write, readable}:  # os.pipe may have reused the number
            os.close(fd)


def test_a_report_written_before_the_worker_ends_is_read_whole():
    # the pipe holds the whole report when the worker exits: the grader reads all of it
    process, readable = _worker(stays=0)
    run = running._wait(process, readable, b"", None, cells=1, timeout=30)
    assert (run.run, run.answers) == ("completed", b"frame-1")
