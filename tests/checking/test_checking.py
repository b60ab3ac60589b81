"""check(): collect + judge, CheckResult display, strict mode, grading records."""

import re

import pytest
import torch
from answer_cells import run_in_kernel

import course_helpers
import course_helpers.lessons as exercises
from course_helpers.checking.checker import CheckResult, ExerciseFailed, check
from course_helpers.checking.judges import judge
from course_helpers.checking.submissions import collect
from course_helpers.lessons.model import Exercise

HINTS = ("a nudge", "a stronger hint", "nearly the answer")


def _row_sums(x):
    return x.sum(dim=1)


def _row_sum_cases(g):
    return [
        (torch.randn(3, 4, generator=g),),
        (torch.randn(2, 5, generator=g),),
        (torch.randn(1, 4, generator=g),),  # a size-1 dim
        (torch.randn(0, 4, generator=g),),  # an empty dim
    ]


def _clamp_in_place(x):
    x.clamp_(min=0)


def _square_leaf():
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    (x**2).sum().backward()
    return x


TEST_EXERCISES = {
    e.id: e
    for e in [
        Exercise(
            id="99.row_sums",
            title="Row sums",
            lesson="99_tests",
            kind="function",
            build_reference=lambda: _row_sums,
            cases=_row_sum_cases,
            hints=HINTS,
            solution="def row_sums(x):\n    return x.sum(dim=1)",
        ),
        Exercise(
            id="99.clamp_in_place",
            title="Clamp in place",
            lesson="99_tests",
            kind="function",
            build_reference=lambda: _clamp_in_place,
            cases=lambda g: [(torch.randn(4, generator=g),), (torch.randn(0, generator=g),)],
            mutates_input=True,
            hints=HINTS,
            solution="x.clamp_(min=0)",
        ),
        Exercise(
            id="99.square_grad",
            title="Gradient of a square",
            lesson="99_tests",
            kind="autograd",
            build_reference=_square_leaf,
            attributes=("requires_grad", "is_leaf", "grad_fn", "grad"),
            hints=HINTS,
            solution="x = ...; (x**2).sum().backward()",
        ),
        Exercise(
            id="99.which_error",
            title="Which error",
            lesson="99_tests",
            kind="error",
            build_reference=lambda: IndexError,
            hints=HINTS,
            solution="IndexError",
            explanations={"KeyError": "KeyError is for dict keys."},
        ),
    ]
}


@pytest.fixture(autouse=True)
def _test_exercises(monkeypatch):
    real_get = exercises.get
    monkeypatch.setattr(
        exercises, "get", lambda i: TEST_EXERCISES[i] if i in TEST_EXERCISES else real_get(i)
    )


# --------------------------------------------------------------------------- results and display


def test_passed_result_fields_and_display():
    result = check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))
    assert isinstance(result, CheckResult)
    assert result.passed and result.status == "passed" and bool(result)
    bundle = result._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"].startswith("✓ Passed: 00.first_tensor")
    assert "hint(" not in bundle["text/plain"]  # no hint offered for a passed check


def test_failed_display_is_deterministic_and_offers_a_hint():
    first = check("00.first_tensor", torch.tensor([1, 2, 3]))._repr_mimebundle_()
    second = check("00.first_tensor", torch.tensor([1, 2, 3]))._repr_mimebundle_()
    assert first == second
    assert "Run hint('00.first_tensor') for a hint." in first["text/plain"]
    assert "hint(&#x27;00.first_tensor&#x27;)" in first["text/html"]
    assert not re.search(r"0x[0-9a-f]{6,}", first["text/plain"] + first["text/html"])


def test_not_attempted():
    result = check("00.first_tensor", ...)
    assert result.status == "not_attempted" and not result.passed
    assert str(result).startswith("○ Not attempted")


def test_unknown_id_is_an_error_result_not_an_exception():
    result = check("00.first_tenser", 1)
    assert result.status == "error"
    assert "00.first_tensor" in result.message  # the close match is suggested


def test_a_broken_catalog_is_an_error_result(monkeypatch):
    def broken(exercise_id):
        raise RuntimeError("duplicate exercise ids in the catalog: ['01.x']")

    monkeypatch.setattr(exercises, "get", broken)
    result = check("01.x", 1)
    assert result.status == "error"
    assert "could not be loaded" in result.message


def test_lazy_public_api():
    assert course_helpers.check is check
    assert course_helpers.CheckResult is CheckResult


# --------------------------------------------------------------------------- strict mode


def test_strict_mode_raises_a_short_assertion(monkeypatch):
    monkeypatch.setenv("COURSE_STRICT", "1")
    with pytest.raises(ExerciseFailed) as info:
        check("00.first_tensor", torch.tensor([1, 2, 3]))
    assert isinstance(info.value, AssertionError)
    assert "torch.int64" in str(info.value)
    assert len(info.value._render_traceback_()) == 1
    assert check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0])).passed
    with pytest.raises(ExerciseFailed):
        check("00.first_tensor", ...)
    with pytest.raises(ExerciseFailed):
        check("no.such_id", 1)


def test_learning_mode_never_raises_even_when_the_checker_breaks(monkeypatch):
    import course_helpers.checking.checker as checking

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(checking, "collect", broken)
    result = check("00.first_tensor", torch.zeros(3))
    assert result.status == "error"
    assert "bug in the course" in result.message


# --------------------------------------------------------------------------- function exercises


def test_function_correct_including_edge_cases():
    result = check("99.row_sums", lambda x: x.T.contiguous().T.sum(1))
    assert result.passed
    assert "all 4 test inputs" in result.message


def test_function_returning_none_is_not_attempted():
    def row_sums(x): ...

    assert check("99.row_sums", row_sums).status == "not_attempted"


def test_function_exception_reports_input_shapes_and_never_escapes():
    def row_sums(x):
        return torch.stack([row.sum() for row in x])  # torch.stack([]) raises

    result = check("99.row_sums", row_sums)
    assert result.status == "error"
    assert "input 4 of 4 (x: shape (0, 4) float32)" in result.message
    assert "raised RuntimeError: stack expects a non-empty TensorList" in result.message


def test_function_mutating_its_input_is_reported():
    def row_sums(x):
        x += 1
        return x.sum(dim=1) - x.shape[1]

    result = check("99.row_sums", row_sums)
    assert result.status == "failed"
    assert "changed its input argument 0 in place" in result.message


def test_function_wrong_dim_names_the_input():
    result = check("99.row_sums", lambda x: x.sum(dim=0))
    assert result.status == "failed"
    assert "input 1 of 4 (x: shape (3, 4) float32)" in result.message
    assert "reduced over dim 0, but dim 1" in result.message


def test_function_wrong_only_on_an_edge_case():
    def row_sums(x):
        return x.sum(dim=1).squeeze()  # drops the size-1 dim of the (1, 4) case

    result = check("99.row_sums", row_sums)
    assert "input 3 of 4 (x: shape (1, 4) float32)" in result.message
    assert "0-dim" in result.message


def test_not_a_function():
    result = check("99.row_sums", torch.zeros(3))
    assert result.status == "failed"
    assert "pass the function without calling it" in result.message


def test_in_place_exercise_compares_the_modified_input():
    assert check("99.clamp_in_place", _clamp_in_place).passed

    def clamp_in_place(x): ...

    assert check("99.clamp_in_place", clamp_in_place).status == "not_attempted"
    result = check("99.clamp_in_place", lambda x: x.clamp(min=0))
    assert result.status == "failed"
    assert "argument 0 after your function ran" in result.message


# --------------------------------------------------------------------------- autograd exercises


def test_autograd_correct():
    assert check("99.square_grad", _square_leaf()).passed


def test_autograd_accumulated_twice():
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    (x**2).sum().backward()
    (x**2).sum().backward()
    result = check("99.square_grad", x)
    assert "exactly 2 times the expected gradient" in result.message


def test_autograd_missing_grad_and_non_leaf():
    assert (
        ".grad is None"
        in check("99.square_grad", torch.tensor([1.0, -2.0], requires_grad=True)).message
    )
    x = torch.tensor([1.0, -2.0], requires_grad=True) * 1
    assert "is_leaf=False but is_leaf=True" in check("99.square_grad", x).message
    assert "requires_grad=False" in check("99.square_grad", torch.tensor([1.0, -2.0])).message


def test_autograd_grad_fn_name():
    ex = Exercise(
        id="99.grad_fn",
        title="grad_fn",
        lesson="99_tests",
        kind="autograd",
        build_reference=lambda: torch.ones(2, requires_grad=True) * 2,
        attributes=("requires_grad", "grad_fn"),
        hints=HINTS,
        solution="...",
    )
    w = torch.ones(2, requires_grad=True)
    assert judge(ex, collect(ex, w * 3)).passed  # other values, same last operation
    verdict = judge(ex, collect(ex, w + w))
    assert "grad_fn is AddBackward0 but MulBackward0 is expected" in verdict.message
    assert "no grad_fn" in judge(ex, collect(ex, w.detach().requires_grad_())).message


def test_autograd_version_counter_mismatch():
    ex = Exercise(
        id="99.inplace",
        title="In place",
        lesson="99_tests",
        kind="autograd",
        build_reference=_one_in_place,
        attributes=("version",),
        hints=HINTS,
        solution="...",
    )
    assert judge(ex, collect(ex, _one_in_place())).passed
    twice = torch.zeros(2)
    twice.add_(1)
    twice.add_(1)
    verdict = judge(ex, collect(ex, twice))
    assert "_version is 2 but 1 is expected" in verdict.message


def _one_in_place():
    t = torch.zeros(2)
    t.add_(1)
    return t


# --------------------------------------------------------------------------- choice and error


def test_choice_accepts_key_any_case_or_option_text():
    for answer in ("b", "B", " b ", "Shift+Enter", "shift+enter"):
        assert check("00.how_to_run", answer).passed, answer


def test_choice_wrong_option_explains():
    result = check("00.how_to_run", "a")
    assert result.status == "failed"
    assert "Enter starts a new line" in result.message


def test_choice_with_integer_keys():
    ex = Exercise(
        id="99.numbered",
        title="Numbered options",
        lesson="99_tests",
        kind="choice",
        build_reference=lambda: 2,
        options={1: "one", 2: "two"},
        explanations={1: "One is too few."},
        hints=HINTS,
        solution="2",
    )
    assert judge(ex, collect(ex, 2)).passed
    assert judge(ex, collect(ex, "two")).passed
    assert "One is too few." in judge(ex, collect(ex, 1)).message


def test_choice_not_an_option():
    result = check("00.how_to_run", "z")
    assert "not one of the options" in result.message
    assert "'a', 'b', 'c', 'd'" in result.message


def test_error_kind_accepts_class_name_and_instance():
    for answer in (IndexError, IndexError("x")):
        assert check("99.which_error", answer).passed, answer
    # issue 24: the class's exact name, as a string, is a right answer too
    for answer in ("IndexError", "builtins.IndexError", " IndexError "):
        assert check("99.which_error", answer).passed, answer
    # ... and a wrong name as a string is judged like the wrong class
    assert "dict keys" in check("99.which_error", "KeyError").message


def test_error_kind_wrong_too_general_and_nonsense():
    assert "dict keys" in check("99.which_error", KeyError).message
    assert "too general" in check("99.which_error", LookupError).message
    assert "not the name of an exception" in check("99.which_error", "Banana").message


# --------------------------------------------------------------------------- grading records


def test_grading_mode_sends_every_attempt_to_the_grader_as_it_is_made(monkeypatch, tmp_path):
    # issue 37, item 9: attempts leave the kernel as check() makes them (a later cell cannot
    # rewrite them); nothing is written anywhere else
    import os
    import threading

    from course_helpers.checking import submissions

    channel = tmp_path / "answers"
    os.mkfifo(channel)
    reader = os.open(channel, os.O_RDONLY | os.O_NONBLOCK)
    keep = os.open(channel, os.O_WRONLY)  # as the grading worker keeps it open
    received = bytearray()
    done = threading.Event()

    def pump():
        while True:
            # done is set after the last write: a read begun after it saw done and found
            # nothing left has drained the channel (one begun before may have come too early)
            finished = done.is_set()
            try:
                chunk = os.read(reader, 1 << 16)
            except BlockingIOError:
                if finished:
                    return
                done.wait(0.01)
                continue
            received.extend(chunk)

    thread = threading.Thread(target=pump)
    thread.start()
    monkeypatch.setenv("COURSE_GRADING_DIR", str(channel))
    check("00.first_tensor", torch.tensor([1.0, 2.0, 4.0]))
    check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))
    check("99.row_sums", _row_sums)
    done.set()
    thread.join()
    for handle in (reader, keep):
        os.close(handle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers"]  # nothing else written
    log, _ = submissions.read_grader_log(bytes(received))
    assert [i for i, _ in log] == ["00.first_tensor", "00.first_tensor", "99.row_sums"]
    assert not judge(exercises.get("00.first_tensor"), log[0][1]).passed
    assert judge(exercises.get("00.first_tensor"), log[1][1]).passed
    assert judge(TEST_EXERCISES["99.row_sums"], log[2][1]).passed
    # a channel that is no FIFO (set by hand to a file) is never written to
    plain = tmp_path / "plain.txt"
    plain.write_text("mine")
    monkeypatch.setenv("COURSE_GRADING_DIR", str(plain))
    check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))
    assert plain.read_text() == "mine"


def test_judge_rejects_a_submission_for_another_exercise():
    submission = collect(exercises.get("00.first_tensor"), torch.tensor([1.0, 2.0, 3.0]))
    assert judge(exercises.get("00.how_to_run"), submission).status == "error"


def test_judging_ignores_a_patched_torch_in_the_collecting_process(monkeypatch):
    # the learner's kernel patches torch *before* its answer is collected; the patch stays in
    # place while judging too (in the grader it would not even exist there)
    monkeypatch.setattr(torch, "allclose", lambda *a, **k: True)
    monkeypatch.setattr(torch, "equal", lambda *a, **k: True)
    submission = collect(exercises.get("00.first_tensor"), torch.tensor([9.0, 9.0, 9.0]))
    assert submission["answer"]["data"].tolist() == [9.0, 9.0, 9.0]  # the real values
    assert not judge(exercises.get("00.first_tensor"), submission).passed


# --------------------------------------------------------------------------- feedback widget


def test_hint_widget_has_a_fixed_text_form_and_reveals_hints():
    from course_helpers.checking.feedback import hint_widget
    from course_helpers.checking.hints import _shown, reset_hints
    from course_helpers.widgets import widgets_available

    reset_hints()
    box = hint_widget("00.first_tensor")
    assert repr(box) == "[Hint button for 00.first_tensor]"
    assert box._repr_mimebundle_()["text/plain"] == "[Hint button for 00.first_tensor]"
    button = box.children[0]
    assert button.description == "Hint"
    button.click()
    button.click()
    assert _shown["00.first_tensor"] == 2
    button.click()
    assert button.disabled  # all three hints shown
    assert not widgets_available()  # no kernel in a plain pytest process
    reset_hints()


def test_in_a_kernel_the_verdict_is_shown_before_a_hint_button():
    nb = run_in_kernel(
        [
            "import torch\nfrom course_helpers import check",
            'check("00.first_tensor", torch.tensor([1, 2, 3]))',
            'check("00.first_tensor", torch.tensor([1.0, 2.0, 3.0]))',
        ],
    )
    failed_outputs = nb.cells[1].outputs
    texts = [o["data"]["text/plain"] for o in failed_outputs]
    assert texts[0].startswith("✗ Not yet: 00.first_tensor")
    assert "text/html" in failed_outputs[0]["data"]  # the verdict is not only widget state
    assert texts[1:] == ["[Hint button for 00.first_tensor]"]
    passed_outputs = nb.cells[2].outputs
    assert len(passed_outputs) == 1  # no hint button for a passed check
    assert passed_outputs[0]["data"]["text/plain"].startswith("✓ Passed")


# --------------------------------------------------------------------------- follow-up reports


def _plain(exercise_id, reference, cases, **options):
    return Exercise(
        id=exercise_id,
        title="test exercise",
        lesson="99_tests",
        kind="function",
        build_reference=lambda: reference,
        cases=cases,
        hints=HINTS,
        solution="...",
        **options,
    )


def test_an_error_in_the_learners_function_offers_a_hint():
    def row_sums(x):
        raise ValueError("not done")

    result = check("99.row_sums", row_sums)
    assert result.status == "error"
    assert "Run hint('99.row_sums') for a hint." in str(result)
    assert "hint(&#x27;99.row_sums&#x27;)" in result._repr_mimebundle_()["text/html"]


def test_an_error_of_the_course_offers_no_hint(monkeypatch):
    unknown = check("00.first_tenser", 1)
    assert unknown.status == "error" and "hint(" not in str(unknown)
    import course_helpers.checking.checker as checking

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(checking, "collect", broken)
    internal = check("00.first_tensor", torch.zeros(3))
    assert internal.status == "error" and "hint(" not in str(internal)


def _match_like(values, reference):
    return values.to(reference)


def _match_like_cases(g):
    return [
        (torch.randn(3, generator=g), torch.zeros(2, dtype=torch.float64)),
        (torch.randn(3, generator=g), torch.zeros(2, device="meta")),  # device, CPU-only
    ]


def test_function_output_device_is_compared_with_the_reference_output():
    ex = _plain("99.match_like", _match_like, _match_like_cases)
    assert judge(ex, collect(ex, _match_like)).passed
    verdict = judge(ex, collect(ex, lambda v, r: v.to(r.dtype)))  # ignores the device
    assert verdict.status == "failed"
    assert "input 2 of 2 (values: shape (3,) float32, reference: shape (2,) float32 on meta)" in (
        verdict.message
    )
    assert "on the 'cpu' device, but the expected output is on 'meta'" in verdict.message


def test_meta_inputs_changed_in_place_are_noticed_without_crashing():
    def resize_reference(values, reference):
        reference.resize_(5)  # metadata-only change: meta tensors have no values
        return values.to(reference)

    ex = _plain("99.match_like", _match_like, _match_like_cases)
    verdict = judge(ex, collect(ex, resize_reference))
    assert verdict.status == "failed"
    assert "changed its input argument 1 in place" in verdict.message


def test_function_changing_its_inputs_requires_grad_is_reported():
    def row_sums(x):
        x.requires_grad_()
        return x.detach().sum(dim=1)

    result = check("99.row_sums", row_sums)
    assert result.status == "failed"
    assert "changed its input argument 0's requires_grad" in result.message


def test_function_returning_a_python_float_is_told_to_drop_item():
    ex = _plain("99.total", lambda x: x.sum(), lambda g: [(torch.randn(3, generator=g),)])
    verdict = judge(ex, collect(ex, lambda x: x.sum().item()))
    assert "your function's output is a Python float" in verdict.message
    assert "if you called .item(), return the tensor itself" in verdict.message
    assert "torch.tensor(" not in verdict.message


def test_function_output_with_an_extra_dim_is_not_told_to_squeeze():
    result = check("99.row_sums", lambda x: x.sum(dim=1).unsqueeze(0))
    assert result.status == "failed"
    assert "one dimension too many (an extra size-1 dimension at dim 0)" in result.message
    assert "squeeze(" not in result.message


def test_error_kind_names_the_class_for_a_string_in_any_case():
    for answer in ("indexerror", "INDEXERROR", " indexError ", "builtins.indexerror\n"):
        message = check("99.which_error", answer).message
        assert "the class itself, e.g. IndexError (no quotes)" in message, answer
    # a wrong name as a string gets the format message without naming the expected class
    assert "IndexError" not in check("99.which_error", "keyerror").message


def test_autograd_answer_that_is_the_grad_is_told_to_pass_the_tensor():
    x = _square_leaf()
    result = check("99.square_grad", x.grad)
    assert result.status == "failed"
    assert "not its .grad" in result.message
    plain = check("99.square_grad", torch.tensor([1.0, -2.0]))  # a fresh tensor, no .grad
    assert "requires_grad=False" in plain.message and ".grad" not in plain.message.split(":")[0]


def test_autograd_requires_grad_true_on_a_leaf_suggests_freezing():
    ex = Exercise(
        id="99.frozen",
        title="Frozen",
        lesson="99_tests",
        kind="autograd",
        build_reference=lambda: torch.ones(2),
        attributes=("requires_grad",),
        hints=HINTS,
        solution="...",
    )
    verdict = judge(ex, collect(ex, torch.ones(2, requires_grad=True)))
    assert ".requires_grad_(False)" in verdict.message


def test_a_meta_value_answer_passes_without_claiming_values_match():
    ex = Exercise(
        id="99.meta_value",
        title="Meta",
        lesson="99_tests",
        kind="value",
        build_reference=lambda: torch.empty(2, 3, device="meta"),
        hints=HINTS,
        solution="...",
    )
    verdict = judge(ex, collect(ex, torch.empty(2, 3, device="meta")))
    assert verdict.passed
    assert "values match" not in verdict.message and "'meta' device" in verdict.message
    assert not judge(ex, collect(ex, torch.empty(2, 3))).passed


# --------------------------------------------------------------------------- after the review


def test_a_function_that_forgets_return_fails_instead_of_not_attempted():
    def row_sums(x):
        x.sum(dim=1)  # computed, never returned

    result = check("99.row_sums", row_sums)
    assert result.status == "failed"
    assert "returns None for every input: did you forget `return`?" in result.message


def test_a_stub_with_only_a_docstring_is_still_not_attempted():
    def row_sums(x):
        """Sum each row."""
        ...

    assert check("99.row_sums", row_sums).status == "not_attempted"


def test_a_probe_around_an_untouched_stub_is_not_attempted():
    assert check("11.evaluate", _probe_around_stub).status == "not_attempted"


def _stub_evaluate(model, x, y): ...


def _probe_around_stub(model, x, y):
    loss = _stub_evaluate(model, x, y)
    if loss is None:
        return None
    return {"loss": loss, "mode afterwards": "train" if model.training else "eval"}


def test_an_older_submission_without_the_stub_flag_is_judged_as_before():
    ex = TEST_EXERCISES["99.row_sums"]

    def row_sums(x):
        x.sum(dim=1)

    submission = collect(ex, row_sums)
    del submission["answer"]["stub"]
    assert judge(ex, submission).status == "not_attempted"


def test_a_submission_in_another_format_is_a_clear_error():
    ex = exercises.get("00.first_tensor")
    submission = collect(ex, torch.tensor([1.0, 2.0, 3.0]))
    assert judge(ex, submission).passed
    submission["format"] = 99
    verdict = judge(ex, submission)
    assert verdict.status == "error"
    assert "format 99" in verdict.message and "run the notebook again" in verdict.message


def _dict_total(parts):
    return sum(v.sum() for v in parts.values())


def _dict_cases(g):
    return [({"a": torch.randn(3, generator=g), "b": torch.randn(2, generator=g)},)]


def test_a_dict_of_tensors_zeroed_in_place_is_reported():
    ex = _plain("99.dict_total", _dict_total, _dict_cases)
    assert judge(ex, collect(ex, _dict_total)).passed

    def zeroing(parts):
        total = _dict_total(parts)
        for value in parts.values():
            value.zero_()
        return total

    verdict = judge(ex, collect(ex, zeroing))
    assert verdict.status == "failed"
    assert "changed its input argument 0 in place" in verdict.message


def _no_grad_output(model, x):
    with torch.no_grad():
        return model(x)


def _module_cases(g):
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return [(model, torch.randn(4, 3, generator=g))]


def test_a_module_whose_parameters_are_zeroed_is_reported():
    ex = _plain("99.module_output", _no_grad_output, _module_cases)
    assert judge(ex, collect(ex, _no_grad_output)).passed

    def zeroing(model, x):
        out = _no_grad_output(model, x)
        with torch.no_grad():
            model.weight.zero_()
        return out

    verdict = judge(ex, collect(ex, zeroing))
    assert verdict.status == "failed"
    assert "changed its input argument 0 in place" in verdict.message


def test_a_module_left_in_another_mode_is_reported():
    ex = _plain("99.module_output", _no_grad_output, _module_cases)

    def leaves_eval(model, x):
        model.eval()
        return _no_grad_output(model, x)

    verdict = judge(ex, collect(ex, leaves_eval))
    assert verdict.status == "failed"
    assert "between training and evaluation mode" in verdict.message


def test_an_optimizer_stepped_in_place_is_reported():
    def loss_value(model, optimizer, x):
        with torch.no_grad():
            return model(x).pow(2).mean()

    def cases(g):
        ((model, x),) = _module_cases(g)
        return [(model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), x)]

    def stepping(model, optimizer, x):
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()  # changes the model's parameters and the optimizer's momentum
        return loss.detach()

    ex = _plain("99.loss_value", loss_value, cases)
    assert judge(ex, collect(ex, loss_value)).passed
    verdict = judge(ex, collect(ex, stepping))
    assert verdict.status == "failed"
    assert "changed its input argument 0 in place" in verdict.message


def test_changes_the_reference_makes_too_are_part_of_the_task():
    # 12.zero_grad trains the model it is given: changing it is the point
    ex = exercises.get("12.zero_grad")
    assert judge(ex, collect(ex, ex.reference)).passed

    def trains_then_leaves_eval(model, optimizer, x, y, steps):
        losses = ex.reference(model, optimizer, x, y, steps)
        model.eval()
        return losses

    verdict = judge(ex, collect(ex, trains_then_leaves_eval))
    assert verdict.status == "failed"
    assert "between training and evaluation mode" in verdict.message


def test_a_module_answer_is_not_called_a_function():
    result = check("00.first_tensor", torch.nn.Linear(3, 1))
    assert result.status == "failed"
    assert "a module (Linear)" in result.message
    assert "pass one of its tensors, e.g. model.weight" in result.message
    assert "function" not in result.message


def test_a_function_exercise_still_accepts_a_module():
    class RowSums(torch.nn.Module):
        def forward(self, x):
            return x.sum(dim=1)

    assert check("99.row_sums", RowSums()).passed


def test_exercise_failed_and_course_error_render_the_same_one_line():
    from course_helpers.errors import CourseError

    assert ExerciseFailed("x")._render_traceback_() == ["\x1b[31mExerciseFailed\x1b[0m: x"]
    assert CourseError("y")._render_traceback_() == ["\x1b[31mCourseError\x1b[0m: y"]


def test_checking_never_moves_the_learners_random_generator():
    # 11.evaluate and 12.evaluate_no_graph build nn.Linear cases; 07.freeze_first and
    # 10.stuck_parameters build seeded references: none may change torch's global RNG.
    from course_helpers.checking import function_judge
    from course_helpers.lessons import get, model

    for exercise_id in ("11.evaluate", "12.evaluate_no_graph", "07.freeze_first"):
        model._build.cache_clear()  # build references and cases afresh inside the check
        function_judge._reference_cache.clear()
        torch.manual_seed(0)
        expected = torch.rand(3)
        torch.manual_seed(0)
        result = check(exercise_id, get(exercise_id).reference)
        assert result.passed, result.message
        assert torch.equal(torch.rand(3), expected), exercise_id
