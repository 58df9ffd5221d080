"""Issue 27, defect 6, on moto's interpreter (the same ASL the deployment runs): one Lambda throttle no
longer fails a run (the first invoke is refused as Lambda refuses a throttled call, HTTP 429
TooManyRequestsException, which Step Functions names Lambda.TooManyRequestsException; the Task's Retry
calls again), and a crashed companion turn ends the review gate as CompanionTurnFailed (its Catch)."""

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


def test_a_failed_companion_turn_ends_the_review_gate_saying_so(
    moto_stack: MotoStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review_turn (a model call of up to 120 s) crashing is caught (Catch States.ALL) into
    CompanionTurnFailed with its cause, not left a bare Lambda error. The gate here has nothing to diff
    (no configuration), so Diff releases at once and FirstTurn is the next call."""
    invoke = moto_stack.dispatcher.invoke

    def crashing_turn(function_name: str, event: Any) -> tuple[Any, bool]:
        if function_name == "review_turn":
            return {"errorType": "RuntimeError", "errorMessage": "the model call crashed"}, True
        return invoke(function_name, event)

    monkeypatch.setattr(moto_stack.dispatcher, "invoke", crashing_turn)
    moto_stack.services.core.ensure_run("companion-1")
    sfn = moto_stack.clients["stepfunctions"]
    started = sfn.start_execution(
        stateMachineArn=moto_stack.provisioned.state_machine_arns["review_gate"],
        name="companion-1",
        input='{"run_id": "companion-1", "input": {}}',
    )
    described = wait_for(lambda: _done(moto_stack, started["executionArn"]), timeout=20)
    assert (described["status"], described.get("error")) == ("FAILED", "CompanionTurnFailed"), described
    assert "the model call crashed" in described["cause"]
