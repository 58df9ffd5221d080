"""Interrupts on moto: the id index on DynamoDB, and statemachines/interrupt.asl.json really executing
(resume with edits, cancel → InterruptCancelled, timeout → InterruptTimedOut), plus the sweeper Lambda."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from baton.contracts import CancelInterrupt, InterruptView, ResumeInterrupt
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import ConflictError
from tests.conftest import wait_for
from tests.integration.conftest import MotoStack


def _describe(stack: MotoStack, arn: str | None) -> dict[str, Any]:
    result: dict[str, Any] = stack.clients["stepfunctions"].describe_execution(executionArn=arn)
    return result


def _pending(stack: MotoStack, run_id: str) -> Any:
    found = stack.services.interrupts.list_page(status="pending", session_id=run_id)[0]
    return found[0] if found else None


def test_id_index_on_dynamodb_and_the_sweeper_lambda(moto_stack: MotoStack) -> None:
    svc = moto_stack.services.interrupts
    i, _ = svc.create(InterruptSpec(session_id="idx-1", prompt="Where?", key="k"), caller="agent")
    store = moto_stack.services.core.store
    found = store.find_interaction(i.interaction_id)
    assert found is not None and found.run_id == "idx-1" and found.request.kind == "interrupt"
    assert store.find_interaction("missing") is None
    with pytest.raises(ConflictError):
        store.put_interaction_indexed(i)
    again, created = svc.create(InterruptSpec(session_id="idx-1", prompt="Where?", key="k"), caller="agent")
    assert not created and again.interaction_id == i.interaction_id
    # by_status GSI and the session partition
    assert [x.interaction_id for x in svc.list_page(status="pending", session_id="idx-1")[0]] == [i.interaction_id]
    assert [x.interaction_id for x in svc.list_page(session_id="idx-1")[0]] == [i.interaction_id]

    soon, _ = svc.create(InterruptSpec(session_id="sw-1", prompt="Soon?", timeout_ms=1), caller="agent")
    time.sleep(0.01)
    payload, errored = moto_stack.dispatcher.invoke("interrupt_sweeper", {})
    assert not errored and payload["timed_out"] == [soon.interaction_id]  # the pending index; idx-1 has no deadline
    assert "interrupt_timed_out" in [e.type for e in store.list_events("sw-1")]


def test_hosted_interrupt_resume_cancel_timeout_and_bad_request(moto_stack: MotoStack) -> None:
    """Four hosted runs at once (one moto stack): resumed with edits, cancelled, timed out, refused."""
    runs, svc = moto_stack.services.runs, moto_stack.services.interrupts
    resumed = runs.start(
        "interrupt",
        {
            "prompt": "Choose deployment target",
            "schema": {"type": "enum", "enum": ["staging", "production"]},
            "state": {"build": {"sha": "abc1234"}, "retries": 1},
            "timeout_seconds": 30,
        },
        run_id="hi-1",
        caller="op",
    )
    cancelled = runs.start("interrupt", {"prompt": "Ship?", "timeout_seconds": 30}, run_id="hi-2", caller="op")
    timed_out = runs.start("interrupt", {"prompt": "Anyone?", "timeout_seconds": 1}, run_id="hi-3", caller="op")
    refused = runs.start(
        "interrupt", {"prompt": "x", "schema": {"type": "colour"}, "timeout_seconds": 30}, run_id="hi-4", caller="op"
    )

    # resumed with edits: the execution output carries the value and the edited state
    rec = wait_for(lambda: _pending(moto_stack, "hi-1"))
    # The interrupt is stored before the run's status moves; both happen while the token parks.
    wait_for(lambda: runs.get("hi-1")["status"] == "paused_waiting_human")
    result = svc.resume(
        rec.interaction_id,
        ResumeInterrupt(input="production", stateEdits=["retries=5", "config.flag=true"]),
        caller="alice",
    )
    assert result["resumed"] is True
    wait_for(lambda: _describe(moto_stack, resumed.execution_arn)["status"] == "SUCCEEDED")
    output = json.loads(_describe(moto_stack, resumed.execution_arn)["output"])
    assert output["input"] == "production" and output["interrupt_id"] == rec.interaction_id
    assert output["state"] == {"build": {"sha": "abc1234"}, "retries": 5, "config": {"flag": True}}
    assert output["resolved_by"] == "alice"
    assert runs.get("hi-1")["status"] == "succeeded"

    # cancelled: task failure InterruptCancelled → Fail with the reason (moto drops the task's cause;
    # the Catch's Lambda rebuilds it from the store)
    rec = wait_for(lambda: _pending(moto_stack, "hi-2"))
    assert (
        svc.cancel(rec.interaction_id, CancelInterrupt(reason="release frozen"), caller="alice")["workflowFailed"]
        is True
    )
    described = wait_for(lambda: (d := _describe(moto_stack, cancelled.execution_arn))["status"] == "FAILED" and d)
    assert described["error"] == "InterruptCancelled"
    assert "cancelled by alice: release frozen" in described["cause"]
    assert "release frozen" in runs.get("hi-2")["reason"]

    # timed out: States.Timeout → InterruptTimedOut with a cause naming the interrupt
    described = wait_for(
        lambda: (d := _describe(moto_stack, timed_out.execution_arn))["status"] == "FAILED" and d, timeout=15
    )
    assert described["error"] == "InterruptTimedOut"
    assert "timed out after 1s" in described["cause"] and "Anyone?" in described["cause"]
    rec = InterruptView.of(svc.list_page(session_id="hi-3")[0][0])  # the API's words for a timeout
    assert rec["status"] == "cancelled" and rec["reason"] == "timeout"
    assert runs.get("hi-3")["status"] == "failed"

    # a bad request fails the run at once with the error, and stores nothing
    described = wait_for(lambda: (d := _describe(moto_stack, refused.execution_arn))["status"] == "FAILED" and d)
    assert "BadRequestError" in described.get("error", "") + described.get("cause", "")
    assert svc.list_page(session_id="hi-4")[0] == []
