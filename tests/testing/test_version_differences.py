"""Outputs that differ between supported torch and Python versions compare equal (issue 26).

The texts below are what torch 2.11 (Python 3.12, CPU and CUDA) printed where the stored
outputs, made with torch 2.13 on Python 3.11, print another form. Each of the four kinds of
difference is handled one way: a sanitizer rule (node names, Python's module repr), a cell
that prints only what teaches (rounded values), or the raw text in a cell tagged
``nbval-ignore-output`` with a compared check beside it (a message reworded between releases).
"""

import json
import re
from pathlib import Path

import pytest

from course_helpers.testing.pytest_plugin import RULES, SANITIZERS

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
    (ROOT / "solutions").glob("*.ipynb")
)


def _sanitize(text: str) -> str:
    for pattern, replacement in SANITIZERS.items():
        text = re.sub(pattern, replacement, text)
    return text


def _cells(path: Path):
    return json.loads(path.read_text())["cells"]


def _compared_texts(path: Path):
    """(cell index, text) for every output text nbval compares in this notebook."""
    for index, cell in enumerate(_cells(path)):
        if cell["cell_type"] != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        if "nbval-ignore-output" in tags or "nbval-skip" in tags:
            continue
        for output in cell.get("outputs", []):
            if output["output_type"] == "stream":
                yield index, "".join(output["text"])
            elif output["output_type"] == "error":
                yield index, output["ename"] + ": " + output["evalue"]
            else:
                for mime in ("text/plain", "text/html"):
                    if mime in output.get("data", {}):
                        yield index, "".join(output["data"][mime])


# ---- the rules themselves


def test_every_rule_says_why_and_makes_its_examples_equal():
    for rule in RULES:
        assert len(rule.reason.split()) >= 12, f"{rule.pattern}: say why the rule exists"
        for variant, canonical in rule.examples:
            assert variant != canonical
            assert re.sub(rule.pattern, rule.replacement, variant) == canonical
            # the stored form is left as it is
            assert re.sub(rule.pattern, rule.replacement, canonical) == canonical
    assert SANITIZERS == {rule.pattern: rule.replacement for rule in RULES}


# ---- 1. autograd node names in error messages

TORCH_2_11_NODE_NAMES = [
    # (torch 2.11, torch 2.13 and 2.14)
    (
        "RuntimeError: one of the variables needed for gradient computation has been modified "
        "by an inplace operation: [torch.FloatTensor [256, 32]], which is output 0 of "
        "TanhBackward0, is at version 1; expected version 0 instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True).",
        "RuntimeError: one of the variables needed for gradient computation has been modified "
        "by an inplace operation: [torch.FloatTensor [256, 32]], which is output 0 of "
        "Tanh, is at version 1; expected version 0 instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True).",
    ),
    (
        "RuntimeError: Output 0 of SplitBackward0 is a view and is being modified inplace. "
        "This view is the output of a function that returns multiple views.",
        "RuntimeError: Output 0 of Split is a view and is being modified inplace. "
        "This view is the output of a function that returns multiple views.",
    ),
    (
        "which is output 0 of MulBackward0, is at version 1",
        "which is output 0 of Mul, is at version 1",
    ),
    (
        "which is output 0 of ExpBackward0, is at version 2",
        "which is output 0 of Exp, is at version 2",
    ),
    (
        "[torch.FloatTensor [3]], which is output 0 of SigmoidBackward0, is at version 1",
        "[torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1",
    ),
    (
        "[torch.FloatTensor [3, 1]], which is output 0 of AsStridedBackward0, is at version 2",
        "[torch.FloatTensor [3, 1]], which is output 0 of AsStrided, is at version 2",
    ),
    # torch 2.11 on a GPU: the legacy type name and the node name both differ
    (
        "[torch.cuda.FloatTensor [2]], which is output 0 of TanhBackward0, is at version 1",
        "[torch.FloatTensor [2]], which is output 0 of Tanh, is at version 1",
    ),
]


@pytest.mark.parametrize(("old", "new"), TORCH_2_11_NODE_NAMES)
def test_torch_2_11_node_names_compare_equal_to_the_stored_form(old, new):
    assert _sanitize(old) == _sanitize(new) == new


def test_a_different_node_still_fails():
    assert _sanitize("which is output 0 of ExpBackward0,") != _sanitize(
        "which is output 0 of Tanh,"
    )
    assert _sanitize("Output 0 of UnbindBackward0 is") != _sanitize("Output 0 of Split is")


def test_node_names_outside_those_messages_are_compared_as_printed():
    for text in (
        "<TanhBackward0 object at 0x0>",
        "grad_fn=<MulBackward0>",
        "tensor([1.], grad_fn=<SplitBackward0>)",
        "The report names TanhBackward0 and the line that created it",
    ):
        assert _sanitize(text) == text


NODE_MESSAGE = re.compile(r"\b([Oo]utput \d+ of )([A-Z]\w*?)(?=[\s,.])")


def _with_torch_2_11_names(text: str) -> str:
    return NODE_MESSAGE.sub(lambda m: m.group(1) + m.group(2) + "Backward0", text)


def test_every_stored_node_name_message_would_pass_under_torch_2_11():
    """Every compared cell with such a message (07, 08, 12, solutions/12): its 2.11 form passes.

    The issue counted 11 failing cells of this kind under torch 2.11; the stored outputs have
    10 cells whose compared text names a node this way, and every one is covered here.
    """
    found = 0
    for path in NOTEBOOKS:
        for index, text in _compared_texts(path):
            if not NODE_MESSAGE.search(text):
                continue
            found += 1
            old = _with_torch_2_11_names(text)
            assert old != text
            assert _sanitize(old) == _sanitize(text), f"{path.name} cell {index}"
    assert found >= 10, found


# ---- 2. a message reworded between releases (and raised differently on CUDA)

# torch 2.13 moved the dtype check into nll_loss_forward's meta function, shared by every
# device (pytorch/pytorch#175151): CUDA should now say what the CPU says (from source, not run)
CROSS_ENTROPY_FLOAT_LABELS = {
    "torch 2.11, CPU": "expected scalar type Long but found Float",
    "torch 2.13 and 2.14, CPU": "expected target dtype to be Long or Byte, but got Float",
    "torch 2.11, CUDA": (
        "\"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Float'"
    ),
}


def test_no_compared_output_carries_a_version_dependent_message():
    for path in NOTEBOOKS:
        for index, text in _compared_texts(path):
            for where, message in CROSS_ENTROPY_FLOAT_LABELS.items():
                assert message not in _sanitize(text), (
                    f"{path.name} cell {index} compares the {where} wording of the float "
                    "labels error; show it in a cell tagged nbval-ignore-output instead"
                )


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_float_labels_refusal_is_still_compared(folder):
    """The raw message is ignored, but a compared cell shows the labels are refused."""
    path = ROOT / folder / "02_dtype_and_device.ipynb"
    refusals = [text for _, text in _compared_texts(path) if "refused" in text]
    assert any(re.search(r"refused:\s+True", text) for text in refusals), refusals


def test_lesson_02_names_every_form_of_the_message():
    prose = "".join(
        "".join(c["source"])
        for c in _cells(ROOT / "notebooks/02_dtype_and_device.ipynb")
        if c["cell_type"] == "markdown"
    )
    prose = " ".join(prose.split())
    for message in CROSS_ENTROPY_FLOAT_LABELS.values():
        assert message in prose
    assert "torch 2.11" in prose and "NotImplementedError" in prose
    # the NotImplementedError is torch 2.11's on CUDA (not every torch's), and what newer torch
    # raises on CUDA is read from the source: the prose says it was not run
    sentences = re.split(r"(?<=[.!?])\s+", prose)
    for sentence in sentences:
        if "NotImplementedError" in sentence:
            assert "2.11" in sentence, f"say which torch raises this on CUDA: {sentence!r}"
    assert "not run" in prose, "mark the CUDA claim read from PyTorch's source as not run"


ERRORS_ELSEWHERE = {
    "torch 2.11, CPU": RuntimeError("expected scalar type Long but found Float"),
    "torch 2.13 and 2.14, CPU": RuntimeError(
        "expected target dtype to be Long or Byte, but got Float"
    ),
    "torch 2.11, CUDA": NotImplementedError(
        "\"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Float'"
    ),
}


@pytest.mark.parametrize("where", ERRORS_ELSEWHERE)
@pytest.mark.parametrize(
    ("folder", "marker"),
    [("notebooks", "def refused("), ("solutions", "raw_labels = torch.tensor(")],
)
def test_compared_float_labels_cell_prints_the_same_whatever_error_is_raised(
    folder, marker, where, capsys
):
    """Run lesson 02's compared cell with each machine's error: the stored output holds."""
    import types

    import torch
    import torch.nn.functional as real_F

    def cross_entropy(logits, target):
        if target.is_floating_point():
            raise ERRORS_ELSEWHERE[where]
        return real_F.cross_entropy(logits, target)

    path = ROOT / folder / "02_dtype_and_device.ipynb"
    (cell,) = [
        c for c in _cells(path) if c["cell_type"] == "code" and marker in "".join(c["source"])
    ]
    namespace = {
        "F": types.SimpleNamespace(cross_entropy=cross_entropy),
        "torch": torch,
        "device": torch.device("cpu"),
        "cpu_generator": lambda seed: torch.Generator().manual_seed(seed),
        "logits": torch.randn(4, 3, generator=torch.Generator().manual_seed(0)),
        "float_labels": torch.tensor([0.0, 2.0, 1.0, 0.0]),
    }
    exec("".join(cell["source"]), namespace)
    stored = "".join("".join(o["text"]) for o in cell["outputs"] if o["output_type"] == "stream")
    assert "refused" in stored
    assert capsys.readouterr().out == stored


# ---- 3. last digits of long trainings' float prints


def _source(path: Path) -> str:
    return "".join("".join(c["source"]) for c in _cells(path) if c["cell_type"] == "code")


LONG_TRAININGS = [
    # (notebook, the value's format spec in its source, torch 2.11's value, torch 2.13's value)
    # lesson 10: scale.grad at step 50; lesson 12: the diverged loss
    ("10_parameters_and_modules.ipynb", r"scale\.grad\.item\(\):([^}]*)\}", -402.8341, -402.8342),
    ("12_capstone_debugging.ipynb", r"loss \{loss\.item\(\):([^}]*)\}", 3.4882154e34, 3.4882134e34),
]


@pytest.mark.parametrize(("notebook", "pattern", "torch_2_11", "torch_2_13"), LONG_TRAININGS)
def test_long_trainings_print_only_digits_that_agree(notebook, pattern, torch_2_11, torch_2_13):
    spec = re.search(pattern, _source(ROOT / "notebooks" / notebook))
    assert spec, f"{notebook}: the print of that value has no format spec any more"
    assert format(torch_2_11, spec.group(1)) == format(torch_2_13, spec.group(1))


# ---- 4. Python's own text

PYTHON_3_12_MAIN = (
    "AttributeError: Can't get attribute 'train' on "
    "<module '__main__' (<class '_frozen_importlib.BuiltinImporter'>)>\n"
)


def test_python_3_12_module_repr_compares_equal_to_the_stored_form():
    stored = [
        text
        for _, text in _compared_texts(ROOT / "notebooks/13_distributed_data_parallel.ipynb")
        if "Can't get attribute" in text
    ]
    assert stored == [
        "AttributeError: Can't get attribute 'train' on <module '__main__' (built-in)>\n"
    ]
    assert _sanitize(PYTHON_3_12_MAIN) == _sanitize(stored[0]) == stored[0]
    assert _sanitize(PYTHON_3_12_MAIN.replace("train", "other")) != stored[0]
