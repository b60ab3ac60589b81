"""The course's nbval settings: what is compared, and the sanitizers."""

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_helpers.testing.pytest_plugin import SANITIZERS, course_import_problem


def _sanitize(text: str) -> str:
    for pattern, replacement in SANITIZERS.items():
        text = re.sub(pattern, replacement, text)
    return text


def test_cuda_tensor_type_names_compare_equal_to_cpu_ones():
    cpu = "output 0 of ... [torch.FloatTensor [3]], which is output 0 of Relu"
    gpu = "output 0 of ... [torch.cuda.FloatTensor [3]], which is output 0 of Relu"
    assert _sanitize(gpu) == _sanitize(cpu) == cpu
    assert _sanitize("[torch.cuda.LongTensor [2, 3]]") == "[torch.LongTensor [2, 3]]"


def test_inline_svg_in_html_compares_equal_whatever_drew_it():
    dot = '<div><svg width="90pt">\n<g id="graph0">dot</g>\n</svg><details>n0</details></div>'
    builtin = '<div><svg viewBox="0 0 9 9"><rect/></svg><details>n0</details></div>'
    other_text = '<div><svg viewBox="0 0 9 9"><rect/></svg><details>n1</details></div>'
    assert _sanitize(dot) == _sanitize(builtin) == "<div><svg/><details>n0</details></div>"
    assert _sanitize(other_text) != _sanitize(builtin)
    img = '<img src="data:image/svg+xml;base64,{}"><details>n0</details>'
    dot_img, builtin_img = img.format("PHN2Zz4uLi4="), img.format("PHN2ZyB2aWV3Qm94PSIwIi8+")
    assert _sanitize(dot_img) == _sanitize(builtin_img)
    assert _sanitize(builtin_img.replace("n0", "n1")) != _sanitize(builtin_img)


def test_a_kernel_that_cannot_import_the_course_is_named_with_the_fix():
    assert course_import_problem([sys.executable]) is None
    without_site_packages = [sys.executable, "-S"]  # where the install puts the course
    problem = course_import_problem(without_site_packages)
    assert "No module named 'course_helpers'" in problem
    assert "pip install -e ." in problem and "from GitHub" in problem


def test_sanitizer_leaves_other_text_alone():
    text = "torch.cuda.is_available() is False; shape (3,) vs (3, 1)"
    assert _sanitize(text) == text


# Every probe notebook below goes through one nbval run in a child pytest (the course's
# pytest config, so its plugin is loaded); each test reads its notebook's outcome there.


def _write(path: Path, source: str, outputs) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(source, outputs=outputs, execution_count=1)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def _stream(text: str) -> list:
    return [nbformat.v4.new_output("stream", name="stdout", text=text)]


SVG_SOURCE = (
    "class P:\n"
    "    def _repr_mimebundle_(self, include=None, exclude=None):\n"
    "        return {'image/svg+xml': '<svg>drawn here</svg>',\n"
    "                'text/plain': 'graph: n0 <- n1'}\n"
    "P()"
)


def _svg(svg: str, text: str) -> list:
    data = {"image/svg+xml": svg, "text/plain": text}
    return [nbformat.v4.new_output("execute_result", data=data, execution_count=1)]


ENV_SOURCE = "import os\nprint(os.environ['COURSE_STRICT'], os.environ['COURSE_PROGRESS'])"
PROBES = {
    "wrong_text.ipynb": ("print('hello')", _stream("goodbye\n")),
    "same_text.ipynb": ("print('hello')", _stream("hello\n")),
    "svg_other_layout.ipynb": (SVG_SOURCE, _svg("<svg>another layout</svg>", "graph: n0 <- n1")),
    "svg_other_graph.ipynb": (SVG_SOURCE, _svg("<svg>drawn here</svg>", "graph: n0 <- n2")),
    # a lesson in notebooks/ is not strict, even when the checkout sits under ".../solutions/";
    # and progress stays off even when the learner turned it on in their shell
    "solutions/course/notebooks/env.ipynb": (ENV_SOURCE, _stream("0 off\n")),
    # stored under torch 2.11 / Python 3.12, run under torch 2.13 / Python 3.11 (issue 26)
    "torch_2_11_node_name.ipynb": (
        "print('[torch.FloatTensor [2]], which is output 0 of Tanh, is at version 1')",
        _stream("[torch.FloatTensor [2]], which is output 0 of TanhBackward0, is at version 1\n"),
    ),
    "torch_2_11_other_node.ipynb": (
        "print('[torch.FloatTensor [2]], which is output 0 of Tanh, is at version 1')",
        _stream("[torch.FloatTensor [2]], which is output 0 of ExpBackward0, is at version 1\n"),
    ),
    "python_3_12_main_module.ipynb": (
        "print(\"Can't get attribute 'train' on <module '__main__' (built-in)>\")",
        _stream(
            "Can't get attribute 'train' on "
            "<module '__main__' (<class '_frozen_importlib.BuiltinImporter'>)>\n"
        ),
    ),
}


WHY_FAILED: dict[str, str] = {}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, str]:
    import xml.etree.ElementTree as ET

    folder = tmp_path_factory.mktemp("probes")
    for name, (source, outputs) in PROBES.items():
        _write(folder / name, source, outputs)
    root = Path(__file__).resolve().parents[2]
    report = folder / "report.xml"
    env = dict(os.environ, COURSE_PROGRESS="on")
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", str(folder),
         "--rootdir", str(root), "-c", str(root / "pyproject.toml"), f"--junitxml={report}"],
        capture_output=True, text=True, cwd=root, env=env, check=False,
    )  # fmt: skip
    # junit names a notebook by its path under the run's folder, "/" written as "."
    names = {name.replace("/", "."): name for name in PROBES}
    results = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        name = names[case.get("classname")]
        results[name] = "passed" if problem is None else "failed"
        if problem is not None:  # shown when a probe expected to pass fails
            WHY_FAILED[name] = (problem.get("message") or "") + (problem.text or "")[-2000:]
    assert set(results) == set(PROBES), results
    return results


def test_nbval_still_fails_on_a_real_text_difference(outcomes):
    assert outcomes["wrong_text.ipynb"] == "failed"


def test_nbval_passes_on_the_same_text(outcomes):
    assert outcomes["same_text.ipynb"] == "passed"


def test_svg_is_not_compared_but_its_text_form_is(outcomes):
    assert outcomes["svg_other_layout.ipynb"] == "passed"
    assert outcomes["svg_other_graph.ipynb"] == "failed"


def test_kernel_env_matches_the_build_even_under_a_folder_named_solutions(outcomes):
    assert outcomes["solutions/course/notebooks/env.ipynb"] == "passed"


def test_nbval_applies_the_version_rules(outcomes):
    for name in ("torch_2_11_node_name.ipynb", "python_3_12_main_module.ipynb"):
        assert outcomes[name] == "passed", WHY_FAILED.get(name)
    # the rule drops only the class suffix: another node is still a difference
    assert outcomes["torch_2_11_other_node.ipynb"] == "failed"


def test_a_notebook_cells_environment_ends_with_the_cell(monkeypatch, tmp_path):
    """A solution's COURSE_STRICT=1 (and the rest of the build's kernel environment) is set for
    its cells only: the next test file on the same worker starts kernels without it."""
    from course_helpers.testing import pytest_plugin

    class IPyNbCell:  # what nbval's items are called; only the name and the path are read
        fspath = tmp_path / "solutions" / "01_tensors.ipynb"
        stash = pytest.Stash()

    monkeypatch.delenv("COURSE_STRICT", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    cell = IPyNbCell()
    pytest_plugin.pytest_runtest_setup(cell)
    assert (os.environ["COURSE_STRICT"], os.environ["OMP_NUM_THREADS"]) == ("1", "1")
    pytest_plugin.pytest_runtest_teardown(cell)
    assert "COURSE_STRICT" not in os.environ
    assert os.environ["OMP_NUM_THREADS"] == "7"
