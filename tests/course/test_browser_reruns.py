"""once_more_if_widgets_lost (browser_support): a browser test whose reopened notebook lost
its saved widgets after jupyterlab-manager restored them twice (its race on opening) runs once
more, with a warning; a loss after one restore, any other failure, and a second loss, fail
it. And what the page's watch (_RestoreWatch) counts for that warning."""

import inspect

import pytest
from browser_support import WidgetsLost, once_more_if_widgets_lost


def _scenario(*outcomes):
    """A stand-in browser test that meets ``outcomes`` in turn (an exception, or None)."""
    calls = []

    def test_reopening(browser, lab, front_end):
        calls.append((browser, lab, front_end))
        outcome = outcomes[len(calls) - 1]
        if outcome is not None:
            raise outcome

    return test_reopening, calls


def test_a_test_that_lost_its_widgets_runs_once_more_with_a_warning():
    test, calls = _scenario(WidgetsLost("no widget box: [{'cell': 5}]", restored_twice=True), None)
    with pytest.warns(UserWarning, match=r"no widget box: \[\{'cell': 5\}\]; the test ran once"):
        once_more_if_widgets_lost(test)("chromium", "server", "notebook7")
    assert calls == [("chromium", "server", "notebook7")] * 2


def test_a_second_loss_fails_the_test():
    test, calls = _scenario(
        WidgetsLost("first", restored_twice=True), WidgetsLost("second", restored_twice=True)
    )
    with pytest.warns(UserWarning, match="first"), pytest.raises(WidgetsLost, match="second"):
        once_more_if_widgets_lost(test)("chromium", "server", "jupyterlab")
    assert len(calls) == 2


def test_a_loss_after_one_restore_is_not_run_again():
    test, calls = _scenario(WidgetsLost("no widget box, states asked 1 time(s)"), None)
    with pytest.raises(WidgetsLost, match="states asked 1 time"):
        once_more_if_widgets_lost(test)("chromium", "server", "jupyterlab")
    assert len(calls) == 1


def test_any_other_failure_is_not_run_again():
    test, calls = _scenario(AssertionError("reopened: the hint is gone"), None)
    with pytest.raises(AssertionError, match="the hint is gone"):
        once_more_if_widgets_lost(test)("chromium", "server", "jupyterlab")
    assert len(calls) == 1


def test_the_wrapped_test_asks_pytest_for_the_same_fixtures():
    test, _ = _scenario(None)
    wrapped = once_more_if_widgets_lost(test)
    assert list(inspect.signature(wrapped).parameters) == ["browser", "lab", "front_end"]
    assert wrapped.__name__ == "test_reopening"


def test_the_restore_watch_counts_state_requests_and_models_not_found():
    from types import SimpleNamespace

    from browser_support import _RestoreWatch

    watch = _RestoreWatch()
    watch.frame_sent(b'\x00{"msg_type": "comm_msg"}{"data": {"method": "request_states"}}')
    watch.frame_sent('{"msg_type": "comm_info_request"}')  # a text frame, not a request
    watch.console(SimpleNamespace(text="Error: widget model not found\n    at x.get_model"))
    watch.console(SimpleNamespace(text="Loading widget..."))
    assert len(watch.state_requests) == 1 and watch.models_not_found == 1
    assert "states 1 time(s)" in str(watch) and "'widget model not found' 1 time(s)" in str(watch)
