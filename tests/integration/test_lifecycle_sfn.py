"""Item 3 of issue 10 on moto: when an execution ends, the local stand-in of the EventBridge rule
(baton.local.moto_fixes.execution_end_events) feeds run_lifecycle, which records the run's end with the execution's stop
time. Nothing here reads the run through RunService.get (that would be the fallback path)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from baton.ids import iso
from baton.local.moto_fixes import execution_end_events
from baton.services.pauses import Resume
from tests.conftest import wait_for
from tests.integration.conftest import MotoStack

END_TYPES = {"run_succeeded", "run_failed", "run_timed_out", "run_aborted"}


@pytest.fixture
def lifecycle_stack(moto_stack: MotoStack) -> Iterator[MotoStack]:
    def deliver(event: dict[str, Any]) -> None:
        moto_stack.dispatcher.invoke("run_lifecycle", event)

    with execution_end_events(deliver):
        yield moto_stack


def _stored_status(stack: MotoStack, run_id: str) -> str:
    run = stack.services.core.store.get_run(run_id)
    return run.status if run else ""


def _ends(stack: MotoStack, run_id: str) -> list[Any]:
    return [e for e in stack.services.core.store.list_events(run_id) if e.type in END_TYPES]


def _stop_iso(stack: MotoStack, arn: str) -> str:
    stopped = stack.clients["stepfunctions"].describe_execution(executionArn=arn)["stopDate"]
    return iso(stopped.astimezone(UTC))


def test_a_run_that_succeeds_records_its_end_when_the_execution_ends(lifecycle_stack: MotoStack) -> None:
    runs = lifecycle_stack.services.runs
    run = runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 30}, run_id="lc-1", caller="op")
    wait_for(lambda: _stored_status(lifecycle_stack, "lc-1") == "paused_waiting_human")
    runs.resume(Resume("lc-1", {"ship": True}, caller="alice"))
    wait_for(lambda: _ends(lifecycle_stack, "lc-1"))
    (end,) = _ends(lifecycle_stack, "lc-1")
    stored = lifecycle_stack.services.core.store.get_run("lc-1")
    assert stored is not None and stored.status == "succeeded"
    assert stored.output["answers"] == {"ship": True}
    stop = _stop_iso(lifecycle_stack, run.execution_arn or "")
    assert end.type == "run_succeeded" and end.at == stop and stored.ended_at == stop
    assert lifecycle_stack.dispatcher.invocations["run_lifecycle"] >= 1


def test_a_gate_timeout_keeps_its_reason_and_the_run_failed_event_is_recorded(lifecycle_stack: MotoStack) -> None:
    runs = lifecycle_stack.services.runs
    runs.start("human_pause", {"prompt": "Anyone?", "timeout_seconds": 1}, run_id="lc-2", caller="op")
    wait_for(lambda: _ends(lifecycle_stack, "lc-2"), timeout=20)
    (end,) = _ends(lifecycle_stack, "lc-2")
    assert end.type == "run_failed" and "timed out after 1s" in end.data["reason"]


def test_the_handler_parses_the_eventbridge_event_and_refuses_a_malformed_one(moto_stack: MotoStack) -> None:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "functions" / "run_lifecycle" / "handler.py"
    spec = importlib.util.spec_from_file_location("run_lifecycle_handler_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler = inspect.unwrap(module.lambda_handler)  # without Powertools' logger and tracer wrappers
    core = moto_stack.services.core
    core.ensure_run("ext-9")
    event = {
        "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "detail": {
            "executionArn": "arn:aws:states:us-east-1:123456789012:execution:user-flow:x1",
            "stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:user-flow",
            "name": "x1",
            "status": "SUCCEEDED",
            "stopDate": 1_764_500_000_000,
            "input": json.dumps({"run_id": "ext-9"}),
        },
    }
    assert handler(event, None)["recorded"] is True
    assert handler(event, None)["recorded"] is False  # a redelivery
    assert handler({**event, "detail": {**event["detail"], "status": "RUNNING"}}, None)["recorded"] is False
    with pytest.raises(ValidationError, match="detail"):
        handler({"source": "aws.states", "detail-type": "Step Functions Execution Status Change"}, None)
    assert _stored_status(moto_stack, "ext-9") == "succeeded"
