"""run_then_exit runs a script as `python script.py` would, then ends the process at once:
what a learner's script does (argv, exit status, traceback) is kept, the shutdown is not."""

import subprocess
import sys


def _run(tmp_path, source, *args, python_options=()):
    script = tmp_path / "script.py"
    script.write_text(source)
    return subprocess.run(
        [
            sys.executable,
            *python_options,
            "-m",
            "course_helpers.environment.run_then_exit",
            str(script),
            *args,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_script_runs_as_main_with_its_arguments(tmp_path):
    done = _run(tmp_path, "import sys\nprint(__name__, sys.argv[1:])\n", "a.pt", "b")
    assert (done.returncode, done.stdout) == (0, "__main__ ['a.pt', 'b']\n")


def test_nothing_runs_after_the_script_ends(tmp_path):
    # atexit handlers run during the interpreter's shutdown, which is skipped: like a C++
    # thread that aborts the process there, this one never gets the chance
    source = "import atexit, os\natexit.register(os.abort)\nprint('done', flush=True)\n"
    done = _run(tmp_path, source)
    assert (done.returncode, done.stdout) == (0, "done\n")


def test_output_still_buffered_at_the_end_is_written(tmp_path):
    done = _run(tmp_path, "import sys\nsys.stdout.write('no newline, no flush')\n")
    assert done.stdout == "no newline, no flush"


def test_each_line_is_written_whole_even_under_python_u(tmp_path):
    # torchrun starts its workers with `python -u`, which writes every piece of a print
    # separately: two ranks sharing the launch's stdout then cut into each other's lines
    source = "import sys\nprint(sys.stdout.line_buffering, sys.stdout.write_through)\n"
    done = _run(tmp_path, source, python_options=["-u"])
    assert done.stdout == "True False\n"


def test_exit_status_and_traceback_are_the_scripts(tmp_path):
    assert _run(tmp_path, "import sys\nsys.exit(3)\n").returncode == 3
    assert _run(tmp_path, "import sys\nsys.exit()\n").returncode == 0
    message = _run(tmp_path, "import sys\nsys.exit('bad input')\n")
    assert (message.returncode, message.stderr) == (1, "bad input\n")
    failed = _run(tmp_path, "raise ValueError('broken')\n")
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines()[-1] == "ValueError: broken"


def test_a_missing_script_is_named(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "course_helpers.environment.run_then_exit", "nowhere.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "no script at 'nowhere.py'" in done.stderr
