"""Issue 27, defect 6: one Lambda throttle no longer fails a run. On moto's interpreter (the same ASL the
deployment runs), the first invoke of a Task's Lambda is refused as Lambda refuses a throttled call (HTTP
429 TooManyRequestsException, which Step Functions names Lambda.TooManyRequestsException); the Task's
Retry calls it again, and the run goes on."""

from __future__ import annotations

from typing import Any

import pytest
from moto.core.exceptions import JsonRESTError

from tests.conftest import wait_for
from tests.integration.conftest import MotoStack


class _Throttled(JsonRESTError):
    code = 429

    def __init__(self) -> None:
        super().__init__("TooManyRequestsException", "Rate exceeded")


def _throttle_first_call(stack: MotoStack, monkeypatch: pytest.MonkeyPatch, function: str) -> list[str]:
    """Refuse `function`'s first invoke as a throttle; returns the names of the calls refused."""
    refused: list[str] = []
    invoke = stack.dispatcher.invoke

    def throttled_once(function_name: str, event: Any) -> tuple[Any, bool]:
        if function_name == function and not refused:
            refused.append(function_name)
            raise _Throttled
        return invoke(function_name, event)

    monkeypatch.setattr(stack.dispatcher, "invoke", throttled_once)
    return refused


def _done(stack: MotoStack, arn: str) -> dict[str, Any] | None:
    described: dict[str, Any] = stack.clients["stepfunctions"].describe_execution(executionArn=arn)
    return described if described["status"] != "RUNNING" else None


def test_a_throttled_lambda_task_is_retried_and_the_run_goes_on(
    moto_stack: MotoStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = _throttle_first_call(moto_stack, monkeypatch, "demo_agent")
    services = moto_stack.services
    run = services.runs.start(
        "await_answers",
        {"node": "draft", "timeout_seconds": 30, "questions": [{"question": "DB?"}]},
        run_id="throttled-1",
        caller="op",
    )
    wait_for(lambda: services.core.store.get_wait("throttled-1", "await"), timeout=20)
    assert refused == ["demo_agent"]  # PostQuestions was throttled once, then retried
    (pending,) = services.questions.pending("throttled-1")
    services.questions.answer("throttled-1", pending.interaction_id, "pg", caller="op")
    described = wait_for(lambda: _done(moto_stack, run.execution_arn or ""), timeout=20)
    assert described["status"] == "SUCCEEDED", described
    history = moto_stack.clients["stepfunctions"].get_execution_history(executionArn=run.execution_arn)["events"]
    failed = [e["taskFailedEventDetails"]["error"] for e in history if e["type"] == "TaskFailed"]
    assert failed == ["Lambda.TooManyRequestsException"]
