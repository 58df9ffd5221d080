"""StopExecution on moto (baton.local.moto_fixes.sfn_stop_execution), measured against plain moto: a
stopped run is ABORTED at once and its `run_aborted` is recorded once, whether the stop lands while the
gate waits for its token or while the gate's park Lambda is still running. `fixed=False` is plain moto,
where the same stop leaves the execution RUNNING (the token wait is not woken) or FAILED with
States.Runtime (the stack the in-flight Task left half popped)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from baton.local.moto_fixes import execution_end_events, sfn_stop_execution
from tests.conftest import wait_for
from tests.integration.conftest import MotoStack

END_TYPES = {"run_succeeded", "run_failed", "run_timed_out", "run_aborted"}


@pytest.fixture
def stack(moto_stack: MotoStack, request: pytest.FixtureRequest) -> Iterator[MotoStack]:
    def deliver(event: dict[str, Any]) -> None:
        moto_stack.dispatcher.invoke("run_lifecycle", event)

    with ExitStack() as fixes:
        if getattr(request, "param", True):
            fixes.enter_context(sfn_stop_execution())
        fixes.enter_context(execution_end_events(deliver))
        yield moto_stack


def _ends(stack: MotoStack, run_id: str) -> list[Any]:
    return [e for e in stack.services.core.store.list_events(run_id) if e.type in END_TYPES]


def _paused(stack: MotoStack, run_id: str) -> bool:
    run = stack.services.core.store.get_run(run_id)
    return run is not None and run.status == "paused_waiting_human"


def _start_and_stop(stack: MotoStack, run_id: str, *, settle: float) -> str:
    run = stack.services.runs.start(
        "human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id=run_id, caller="op"
    )
    wait_for(lambda: _paused(stack, run_id))  # set by the park Lambda, which may still be returning
    time.sleep(settle)
    arn = run.execution_arn or ""
    stack.clients["stepfunctions"].stop_execution(executionArn=arn, error="Stopped", cause="by the operator")
    return arn


@pytest.mark.parametrize("settle", [0.0, 1.0], ids=["park-in-flight", "waiting-for-token"])
def test_a_stopped_execution_is_aborted_at_once_and_its_end_recorded_once(stack: MotoStack, settle: float) -> None:
    run_id = f"stop-{int(settle * 10)}"
    arn = _start_and_stop(stack, run_id, settle=settle)
    described = stack.clients["stepfunctions"].describe_execution(executionArn=arn)
    assert described["status"] == "ABORTED"  # when StopExecution returns, as on AWS
    (end,) = wait_for(lambda: _ends(stack, run_id), timeout=5)
    assert end.type == "run_aborted"
    stored = stack.services.core.store.get_run(run_id)
    assert stored is not None and stored.status == "aborted"
    time.sleep(1.5)  # the stopped worker thread winds down: it changes nothing and reports no second end
    assert stack.clients["stepfunctions"].describe_execution(executionArn=arn)["status"] == "ABORTED"
    assert [e.type for e in _ends(stack, run_id)] == ["run_aborted"]


@pytest.mark.parametrize("stack", [False], indirect=True, ids=["plain-moto"])
@pytest.mark.parametrize("settle", [0.0, 1.0], ids=["park-in-flight", "waiting-for-token"])
def test_plain_moto_does_not_abort_a_stopped_execution(stack: MotoStack, settle: float) -> None:
    arn = _start_and_stop(stack, f"plain-{int(settle * 10)}", settle=settle)
    time.sleep(1.5)
    assert stack.clients["stepfunctions"].describe_execution(executionArn=arn)["status"] in {"RUNNING", "FAILED"}


def test_a_stop_right_after_the_start_aborts_it(stack: MotoStack, monkeypatch: pytest.MonkeyPatch) -> None:
    # The execution's thread parses the definition before its environment exists; a stop in that window
    # failed with an AttributeError in moto (seen in CI: a test's teardown stopping a just-started timer).
    from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

    parse = ExecutionWorker._get_evaluation_entrypoint

    def slow_parse(self: Any) -> Any:
        time.sleep(0.5)
        return parse(self)

    monkeypatch.setattr(ExecutionWorker, "_get_evaluation_entrypoint", slow_parse)
    run = stack.services.runs.start(
        "human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id="stop-early", caller="op"
    )
    arn = run.execution_arn or ""
    stack.clients["stepfunctions"].stop_execution(executionArn=arn, error="Stopped", cause="at once")
    assert stack.clients["stepfunctions"].describe_execution(executionArn=arn)["status"] == "ABORTED"
