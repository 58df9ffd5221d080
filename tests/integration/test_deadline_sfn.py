"""Issue 17 on moto with the real handlers: the park Lambda gets the task's entered time, Baton's
deadline is the declared timeout (the Task's TimeoutSeconds a grace later, issue 28), and at it
Baton (the gate's timer, or the reconciler's sweep) ends the pause itself (the Catch takes
BatonDeadlinePassed as it takes States.Timeout)."""

from __future__ import annotations

import time
from datetime import timedelta

from baton.ids import parse_iso
from baton.models import ParkedWait
from tests.conftest import wait_for
from tests.integration.conftest import MotoStack


def _execution(stack: MotoStack, arn: str) -> dict[str, object]:
    return dict(stack.clients["stepfunctions"].describe_execution(executionArn=arn))


def test_the_deadline_round_trips_in_the_table(moto_stack: MotoStack) -> None:
    store = moto_stack.services.core.store
    wait = ParkedWait(
        run_id="r1", gate="g", task_token="tok", kind="ask", parked_at="t", deadline="2026-12-01T10:00:58.000Z"
    )
    store.put_wait(wait)
    assert store.get_wait("r1", "g") == wait


def test_baton_ends_the_pause_at_its_declared_deadline_before_the_task_timeout(moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    run = runs.start("human_pause", {"prompt": "Still there?", "timeout_seconds": 6}, run_id="dl-1", caller="op")
    wait = wait_for(lambda: moto_stack.services.core.store.get_wait("dl-1", "approve"))
    assert wait.deadline is not None
    # The deadline counts the declared 6 s from the task's entry (before the park ran).
    parked = parse_iso(wait.parked_at)
    assert parked + timedelta(seconds=4) < parse_iso(wait.deadline) <= parked + timedelta(seconds=6)
    while not moto_stack.services.core.is_past(wait.deadline):
        time.sleep(0.1)
    # The gate's timer (statemachines/gate_deadline.asl.json) normally ends it at the deadline; the
    # reconciler's sweep ends it if the timer has not yet: either way Baton ends it, exactly once.
    ended = moto_stack.services.reconciler.reconcile().wire()["ended"]
    assert ended in ([], [{"run_id": "dl-1", "gate": "approve", "kind": "ask"}])
    closed = moto_stack.services.core.store.get_wait("dl-1", "approve")
    assert closed is not None and closed.status != "parked"
    wait_for(lambda: _execution(moto_stack, run.execution_arn or "")["status"] == "FAILED", timeout=15)
    described = _execution(moto_stack, run.execution_arn or "")
    assert described["error"] == "HumanInputTimedOut"  # through the gate's Catch, with the cause
    assert "Still there?" in str(described["cause"])
    summary = runs.get("dl-1")
    assert summary["status"] == "failed" and summary["interactions"] == {"timed_out": 1}
