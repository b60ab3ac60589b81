"""Issue 23, item 12: draw_graph on a chain of 50,000 nodes or more (it crashed the kernel)."""

import os
import subprocess
import sys

_SCRIPT = """
import torch
from course_helpers import draw_graph
x = torch.ones(1, requires_grad=True)
y = x
for _ in range(50_000):
    y = y * 1.0
text = str(draw_graph(y))
print("more than 20,000 nodes" in text)
del y
print("freed")
"""


def test_draw_graph_walks_at_most_its_limit_and_the_kernel_survives():
    env = dict(os.environ, OMP_NUM_THREADS="1", COURSE_PROGRESS="off")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])  # was -11 (SIGSEGV)
    assert done.stdout.split() == ["True", "freed"]


_REPLAY_SCRIPT = """
import torch
from course_helpers import CourseError, replay_backward
x = torch.ones(1, requires_grad=True)
y = x
for _ in range(60_000):
    y = y * 1.0
try:
    replay_backward(y)
except CourseError as err:
    print("refused" if "at most 20,000 nodes" in str(err) else "other: " + str(err))
print(x.grad is None)
del y
print("freed")
"""


def test_replay_backward_refuses_a_huge_graph_and_the_kernel_survives():
    # Plain torch builds, backpropagates and frees this chain without trouble (checked up to
    # 200,000 nodes); replaying it hooked every node and crashed the process when freed.
    env = dict(os.environ, OMP_NUM_THREADS="1", COURSE_PROGRESS="off")
    done = subprocess.run(
        [sys.executable, "-c", _REPLAY_SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])  # was -11 (SIGSEGV)
    assert done.stdout.split() == ["refused", "True", "freed"]
