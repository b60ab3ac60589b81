"""The course's nbval settings: what is compared, and the one sanitizer."""

import re
import subprocess
import sys
from pathlib import Path

import nbformat

from course_helpers.pytest_plugin import SANITIZERS


def _sanitize(text: str) -> str:
    for pattern, replacement in SANITIZERS.items():
        text = re.sub(pattern, replacement, text)
    return text


def test_cuda_tensor_type_names_compare_equal_to_cpu_ones():
    cpu = "output 0 of ... [torch.FloatTensor [3]], which is output 0 of ReluBackward0"
    gpu = "output 0 of ... [torch.cuda.FloatTensor [3]], which is output 0 of ReluBackward0"
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


def test_sanitizer_leaves_other_text_alone():
    text = "torch.cuda.is_available() is False; shape (3,) vs (3, 1)"
    assert _sanitize(text) == text


def _notebook(tmp_path: Path, outputs) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell("print('hello')", outputs=outputs, execution_count=1)]
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    return path


def _nbval(path: Path) -> subprocess.CompletedProcess:
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", str(path),
         "--rootdir", str(root), "-c", str(root / "pyproject.toml")],
        capture_output=True, text=True, cwd=root,
    )  # fmt: skip


def test_nbval_still_fails_on_a_real_text_difference(tmp_path):
    wrong = [nbformat.v4.new_output("stream", name="stdout", text="goodbye\n")]
    result = _nbval(_notebook(tmp_path, wrong))
    assert result.returncode == 1, result.stdout


def test_nbval_passes_on_the_same_text(tmp_path):
    right = [nbformat.v4.new_output("stream", name="stdout", text="hello\n")]
    result = _nbval(_notebook(tmp_path, right))
    assert result.returncode == 0, result.stdout


def _svg_notebook(tmp_path: Path, svg: str, text: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    source = (
        "class P:\n"
        "    def _repr_mimebundle_(self, include=None, exclude=None):\n"
        "        return {'image/svg+xml': '<svg>drawn here</svg>',\n"
        "                'text/plain': 'graph: n0 <- n1'}\n"
        "P()"
    )
    output = nbformat.v4.new_output(
        "execute_result", data={"image/svg+xml": svg, "text/plain": text}, execution_count=1
    )
    nb.cells = [nbformat.v4.new_code_cell(source, outputs=[output], execution_count=1)]
    path = tmp_path / "svg.ipynb"
    nbformat.write(nb, path)
    return path


def test_svg_is_not_compared_but_its_text_form_is(tmp_path):
    other_layout = _svg_notebook(tmp_path, "<svg>another layout</svg>", "graph: n0 <- n1")
    assert _nbval(other_layout).returncode == 0
    other_graph = _svg_notebook(tmp_path, "<svg>drawn here</svg>", "graph: n0 <- n2")
    assert _nbval(other_graph).returncode == 1


def test_kernel_env_matches_the_build_even_under_a_folder_named_solutions(tmp_path, monkeypatch):
    # a lesson in notebooks/ is not strict, even when the checkout sits under ".../solutions/";
    # and progress stays off even when the learner turned it on in their shell
    folder = tmp_path / "solutions" / "course" / "notebooks"
    folder.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    source = "import os\nprint(os.environ['COURSE_STRICT'], os.environ['COURSE_PROGRESS'])"
    stored = [nbformat.v4.new_output("stream", name="stdout", text="0 off\n")]
    nb.cells = [nbformat.v4.new_code_cell(source, outputs=stored, execution_count=1)]
    nbformat.write(nb, folder / "probe.ipynb")
    monkeypatch.setenv("COURSE_PROGRESS", "on")
    result = _nbval(folder / "probe.ipynb")
    assert result.returncode == 0, result.stdout
