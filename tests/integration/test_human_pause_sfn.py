"""The human pause state machine really executing on moto, with our handlers dispatched in-process."""

from __future__ import annotations

from baton.services.pauses import Resume
from tests.conftest import wait_for
from tests.integration.conftest import MotoStack


def _execution_status(stack: MotoStack, arn: str) -> str:
    return stack.clients["stepfunctions"].describe_execution(executionArn=arn)["status"]


def test_pause_then_resume_succeeds_with_the_answers(moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    run = runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 30}, run_id="it-1", caller="op")
    wait_for(lambda: runs.get("it-1")["status"] == "paused_waiting_human")
    assert moto_stack.dispatcher.invocations["park"] == 1
    result = runs.resume(Resume("it-1", {"ship": True}, caller="alice"))
    assert result["resumed"] is True
    wait_for(lambda: _execution_status(moto_stack, run.execution_arn or "") == "SUCCEEDED")
    summary = runs.get("it-1")
    assert summary["status"] == "succeeded"
    assert summary["output"]["answers"] == {"ship": True}
    assert summary["output"]["answered_by"] == "alice"


def test_short_timeout_fails_with_a_cause_naming_what_timed_out(moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    run = runs.start("human_pause", {"prompt": "Still there?", "timeout_seconds": 1}, run_id="it-2", caller="op")
    wait_for(lambda: _execution_status(moto_stack, run.execution_arn or "") == "FAILED", timeout=15)
    described = moto_stack.clients["stepfunctions"].describe_execution(executionArn=run.execution_arn)
    assert described["error"] == "HumanInputTimedOut"
    assert "timed out after 1s" in described["cause"] and "Still there?" in described["cause"]
    summary = runs.get("it-2")
    assert summary["status"] == "failed" and "timed out after 1s" in summary["reason"]
    assert summary["interactions"] == {"timed_out": 1}
    assert moto_stack.dispatcher.invocations["gate_timeout"] == 1
