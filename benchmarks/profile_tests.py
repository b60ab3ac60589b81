"""Profile a test command: CPU seconds, tests per lane, kernel starts, where the time goes.

    python benchmarks/profile_tests.py --out /tmp/profile -- make test
    python benchmarks/profile_tests.py --out /tmp/profile-ci -- .ci/run
    python benchmarks/profile_tests.py --report /tmp/profile      # print the summary again

Wall-clock time on a shared machine says little, so this records measures that survive load:
- the CPU seconds (user + sys) of the whole process tree: this script makes itself the
  tree's subreaper, so kernels, sandboxes and servers orphaned by their parents are counted
  too, by kind (their command line);
- every pytest run's tests and outcomes, and each test's wall and in-process CPU time
  (``COURSE_TEST_PROFILE``, course_helpers/testing/profiling.py), grouped into lanes: one
  lane per top-level pytest command (``make test`` is one, each ``make test-compat`` one);
- every Jupyter kernel started (an IPython startup file in a scratch ``IPYTHONDIR`` logs it):
  forked from the template or a fresh process, the test it was started for, its CPU seconds
  (sampled twice a second: a killed kernel loses at most the last half second);
- ``.ci/run``'s phases, from the ``ci: <phase> ...`` lines it prints, and the load average
  at the start and the end (the conditions the figures were taken under);
- the machine's speed through the run (benchmarks/machine_speed.py, sampled about every
  15 s), the tree's CPU in units of that reference workload, and the time the hypervisor
  took from this virtual machine (``steal`` in /proc/stat): machines of one kind differ in
  speed by more than most changes being measured.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path


def _machine_speed():
    """benchmarks/machine_speed.py, beside this file (also when this file is loaded by path)."""
    import importlib.util

    path = Path(__file__).resolve().with_name("machine_speed.py")
    spec = importlib.util.spec_from_file_location("course_machine_speed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STARTUP = r"""
def _course_profile_kernel():
    import atexit, json, os, resource, time
    folder = os.environ.get("COURSE_TEST_PROFILE")
    if not folder:
        return
    with open("/proc/self/cmdline", "rb") as f:
        cmdline = f.read().split(b"\0")
    with open(f"/proc/{os.getppid()}/stat") as f:
        grandparent = int(f.read().rsplit(")", 1)[1].split()[1])
    record = {"event": "kernel", "pid": os.getpid(), "ppid": os.getppid(),
              "pppid": grandparent, "forked": b"ipykernel_launcher" not in cmdline,
              "test": os.environ.get("PYTEST_CURRENT_TEST", ""), "cwd": os.getcwd(),
              "start": time.time()}
    path = os.path.join(folder, f"kernel-{os.getpid()}.json")

    def write():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        record.update(cpu=round(usage.ru_utime + usage.ru_stime, 3), end=time.time())
        with open(path + ".new", "w") as f:
            json.dump(record, f)
        os.replace(path + ".new", path)

    def sample():  # kernels are often killed, so no exit handler runs: write as they go
        while True:
            write()
            time.sleep(0.5)

    import threading
    threading.Thread(target=sample, daemon=True).start()
    atexit.register(write)


_course_profile_kernel()
del _course_profile_kernel
"""


def _stolen_s() -> float | None:
    """Seconds the hypervisor has taken from this machine's processors (/proc/stat's steal),
    or None where the kernel does not say."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# What an orphaned process was, by a word of its command line (or, once it has exited, of
# its name): the first match names it.
KINDS = (
    ("grading sandbox (bubblewrap and what ran in it)", "bwrap"),
    ("grading worker", "course_helpers.grading"),
    ("kernel template or forked kernel", "become_kernel"),  # (its code names ipykernel too)
    ("fresh kernel", "ipykernel_launcher"),
    ("torchrun and its ranks", "torch.distributed"),
    ("JupyterLab", "jupyter"),
    ("Chromium", "chrom"),
    ("pip", "pip"),
    ("pytest", "pytest"),
)


def _short(words: str) -> str:
    """A command line without its program's folder, cut to 160 characters; a process that
    had exited when it was first seen is known by its name alone (from /proc's stat)."""
    if words[:1].isdigit() and ") " in words:  # the stat line: "pid (name) state ..."
        return words.split("(", 1)[1].rsplit(")", 1)[0]
    program, _, rest = words.strip().partition(" ")
    return f"{Path(program).name} {rest}".strip()[:160]


class _Orphans(threading.Thread):
    """Reaps the processes re-parented to this one (it is their subreaper) and adds up their
    CPU (with their own reaped children's) by kind; a kernel's own CPU is in the kernel log."""

    def __init__(self, main_pid: int) -> None:
        super().__init__(daemon=True)
        self.main_pid, self.seen, self.cpu = main_pid, {}, collections.Counter()
        self.other = collections.Counter()  # "other" by command line, to name them later
        self.stopping = threading.Event()

    def _scan(self) -> None:
        me = os.getpid()
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) in (self.main_pid, *self.seen):
                continue
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) != me:
                    continue
                words = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ")
                self.seen[int(entry.name)] = words.decode(errors="replace") or stat
            except (OSError, ValueError):
                continue

    def _reap(self) -> None:
        for pid in list(self.seen):
            try:
                done, _, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                done, usage = pid, None
            if done:
                words = self.seen.pop(pid)
                kind = next((name for name, word in KINDS if word in words), "other")
                cpu = (usage.ru_utime + usage.ru_stime) if usage else 0.0
                self.cpu[kind] += cpu
                if kind == "other":
                    self.other[_short(words)] += cpu

    def run(self) -> None:
        while not self.stopping.wait(0.3):
            self._scan()
            self._reap()

    def finish(self, wait: float = 30) -> dict[str, float]:
        self.stopping.set()
        self.join()
        deadline = time.time() + wait
        while time.time() < deadline:
            self._scan()
            self._reap()
            if not self.seen:
                break
            time.sleep(0.2)
        return {kind: round(cpu, 1) for kind, cpu in self.cpu.most_common()}


def run(command: list[str], out: Path) -> int:
    """Run ``command`` with profiling on; write out/run.json and out/output.log."""
    out.mkdir(parents=True, exist_ok=True)
    tests = out / "tests"
    tests.mkdir(exist_ok=True)
    startup = out / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-course-profile.py").write_text(STARTUP)
    env = dict(os.environ, COURSE_TEST_PROFILE=str(tests), IPYTHONDIR=str(out / "ipython"))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphaned descendants come back here
    record = {"command": command, "start": time.time(), "load_start": _loadavg(),
              "host": f"{platform.machine()}, {os.cpu_count()} cores"}  # fmt: skip
    phases = []
    speed = _machine_speed().Sampler()
    speed.start()
    stolen = _stolen_s()
    with open(out / "output.log", "w") as log:
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        orphans = _Orphans(process.pid)
        orphans.start()
        for line in process.stdout:
            now = time.time()
            sys.stdout.write(line)
            log.write(f"{now - record['start']:8.1f} {line}")
            if line.startswith("ci: "):
                phases.append((round(now - record["start"], 1), line[4:].strip()))
        status = process.wait()
    orphaned = orphans.finish()  # and what the command left behind
    try:
        record["speed"] = speed.stop()
    except ValueError:  # no sample was taken: the profile is still worth keeping
        record["speed"] = None
    stolen_end = _stolen_s()
    if stolen is not None and stolen_end is not None:
        record["stolen_s"] = round(stolen_end - stolen, 1)
    record["orphaned_other"] = {  # the costliest of the "other" kind, by command line
        words: round(cpu, 1) for words, cpu in orphans.other.most_common(10) if cpu >= 0.1
    }
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    record.update(end=time.time(), status=status, load_end=_loadavg(), phases=phases,
                  user=usage.ru_utime, sys=usage.ru_stime, orphaned=orphaned)  # fmt: skip
    (out / "run.json").write_text(json.dumps(record, indent=1))
    return status


def _load(out: Path):
    sessions, tests, kernels = {}, [], []
    for path in sorted((out / "tests").glob("tests-*.jsonl")):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry["event"] == "session":
                sessions[entry["pid"]] = entry
            elif entry["event"] == "test":
                tests.append(entry)
            elif entry["event"] == "end" and entry["pid"] in sessions:
                sessions[entry["pid"]].update(cpu=entry["cpu"], end=entry["end"])
    for path in sorted((out / "tests").glob("kernel-*.json")):
        kernels.append(json.loads(path.read_text()))
    return sessions, tests, kernels


def _lanes(sessions: dict) -> dict[int, int]:
    """pytest process id -> the top-level pytest command it belongs to: an xdist worker
    belongs to its controller; a pytest that a test starts (a child run, its probe tests are
    not the lane's) is a lane of its own, marked nested."""
    top = {}
    for pid, session in sessions.items():
        parent = session.get("parent")
        controller = sessions.get(parent, {})
        if session.get("worker") and controller and not controller.get("worker"):
            top[pid] = parent  # (a child pytest inherits PYTEST_XDIST_WORKER: not this case)
        else:
            top[pid] = pid
            session["nested"] = parent in sessions
    return top


def _file(nodeid: str) -> str:
    return nodeid.split("::")[0].split(" ")[0]


def report(out: Path, top_files: int = 25) -> str:
    run_info = json.loads((out / "run.json").read_text())
    sessions, tests, kernels = _load(out)
    lane_of = _lanes(sessions)
    lines = [
        f"command: `{' '.join(run_info['command'])}` (exit {run_info['status']})",
        f"machine: {run_info['host']}; load average at start {run_info['load_start']}, "
        f"at end {run_info['load_end']}; {time.strftime('%Y-%m-%d %H:%M', time.localtime(run_info['start']))}",  # noqa: E501
        f"wall: {run_info['end'] - run_info['start']:.0f} s; CPU of the whole process tree: "
        f"{run_info['user'] + run_info['sys']:.0f} s (user {run_info['user']:.0f}, "
        f"sys {run_info['sys']:.0f})",
    ]
    if run_info.get("speed"):
        speed, cpu = run_info["speed"], run_info["user"] + run_info["sys"]
        lines.append(
            f"{_machine_speed().describe(speed)}: the tree's CPU is about "
            f"{_three_figures(cpu / speed['reference'])} references "
            f"({_three_figures(cpu / speed['slowest'])} to "
            f"{_three_figures(cpu / speed['fastest'])} at the slowest and fastest samples)"
        )
    if run_info.get("stolen_s") is not None:
        lines.append("time the hypervisor took from the machine's processors (steal, all "
                     f"processors together): "
                     f"{run_info['stolen_s']:.0f} s")  # fmt: skip
    if run_info.get("orphaned"):
        kinds = ", ".join(f"{kind} {cpu:.0f} s" for kind, cpu in run_info["orphaned"].items())
        lines.append(f"of which processes whose parent ended first (re-parented here): {kinds}")
    if run_info.get("orphaned_other"):
        lines.append("the costliest of those of no kind (CPU s, command line):")
        lines += [f"- {cpu:.1f} `{words}`" for words, cpu in run_info["orphaned_other"].items()]
    if run_info["phases"]:
        lines += ["", "| phase (ci: line) | at s |", "|---|---:|"]
        lines += [f"| {name} | {at:.0f} |" for at, name in run_info["phases"]]
    by_lane = collections.defaultdict(list)
    for entry in tests:
        by_lane[lane_of.get(entry["pid"], entry["pid"])].append(entry)
    kernels_by_lane = collections.Counter()
    for kernel in kernels:
        lane = next((lane_of[p] for p in (kernel["ppid"], kernel["pppid"]) if p in lane_of), None)
        kernels_by_lane[lane] += 1
    lines += ["", "| pytest command (lane) | tests | passed | skipped | failed | test wall s "
              "| in-process CPU s | subprocess CPU s | kernels | kernel CPU s |",
              "|---|" + "---:|" * 9]  # fmt: skip
    kernel_cpu_by_lane = collections.Counter()
    for kernel in kernels:
        lane = next((lane_of[p] for p in (kernel["ppid"], kernel["pppid"]) if p in lane_of), None)
        kernel_cpu_by_lane[lane] += kernel.get("cpu", 0)
    for lane, entries in by_lane.items():
        session = sessions.get(lane, {})
        args = " ".join(a for a in session.get("args", []) if len(a) < 40)
        args = ("(a child pytest inside a test) " if session.get("nested") else "") + args
        outcomes = collections.Counter(e["outcome"] for e in entries)
        lines.append(
            f"| `{args[:90]}` | {len(entries)} | {outcomes['passed']} | {outcomes['skipped']} | "
            f"{outcomes['failed']} | {sum(e['wall'] for e in entries):.0f} | "
            f"{sum(e['cpu'] for e in entries):.0f} | "
            f"{sum(e.get('children', 0) for e in entries):.0f} | {kernels_by_lane[lane]} | "
            f"{kernel_cpu_by_lane[lane]:.0f} |"
        )
    forked = sum(k["forked"] for k in kernels)
    lines += ["", f"kernels started: {len(kernels)} ({forked} forked, {len(kernels) - forked} "
              f"fresh processes), {sum(k.get('cpu', 0) for k in kernels):.0f} s of CPU in all "
              "(sampled every 0.5 s)"]  # fmt: skip
    per_file = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0, 0.0])
    for entry in tests:
        row = per_file[_file(entry["nodeid"])]
        row[0] += 1
        row[1] += entry["wall"]
        row[2] += entry["cpu"]
        row[3] += entry.get("children", 0)
    for kernel in kernels:
        row = per_file[_file(kernel["test"]) or "(outside a test)"]
        row[4] += 1
        row[5] += kernel.get("cpu", 0)
    lines += ["", f"The {top_files} test files with the most worker-seconds (all lanes):", "",
              "| file | tests | wall s | in-process CPU s | subprocess CPU s | kernels "
              "| kernel CPU s |", "|---|" + "---:|" * 6]  # fmt: skip
    ranked = sorted(per_file.items(), key=lambda item: -item[1][1])[:top_files]
    for name, (count, wall, cpu, children, started, kernel_cpu) in ranked:
        lines.append(
            f"| {name} | {count} | {wall:.0f} | {cpu:.0f} | {children:.0f} | {started} "
            f"| {kernel_cpu:.0f} |"
        )
    return "\n".join(lines)


def _three_figures(value: float) -> str:
    """``value`` to three significant figures, with thousands separators: 13,700."""
    return f"{float(f'{value:.3g}'):,.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, help="folder for the records (created)")
    parser.add_argument("--report", type=Path, help="print the summary of an earlier run")
    parser.add_argument("--top", type=int, default=25, help="how many test files to list")
    parser.add_argument("command", nargs="*", help="the command to profile, after --")
    args = parser.parse_args(argv)
    if args.report:
        print(report(args.report, args.top))
        return 0
    if not args.out or not args.command:
        parser.error("give --out DIR and a command after --, or --report DIR")
    try:
        status = run(args.command, args.out)
    except (FileNotFoundError, PermissionError) as error:
        if error.filename != args.command[0]:
            raise  # another file was missing: not the command's fault
        parser.error(f"cannot run {args.command[0]!r} ({error.strerror}): give a program on "
                     "PATH or its path after --, e.g. -- make test")  # fmt: skip
    summary = report(args.out, args.top)
    (args.out / "summary.md").write_text(summary + "\n")
    print("\n" + summary)
    return status


if __name__ == "__main__":
    sys.exit(main())
