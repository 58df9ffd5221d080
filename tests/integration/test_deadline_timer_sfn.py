"""Issue 17 item 4 on moto with the real handlers: each park starts its gate's timer (an execution of
statemachines/gate_deadline.asl.json, whose Wait moto runs for real), and at Baton's deadline the timer,
not the reconciler and not Step Functions' TimeoutSeconds, ends the pause with BatonDeadlinePassed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from baton.domain.deadline import TIMER_STATE_MACHINE
from baton.services.pauses import Resume
from tests.conftest import wait_for

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


def _history(stack: MotoStack, arn: str) -> list[dict[str, Any]]:
    sfn = stack.clients["stepfunctions"]
    return list(sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"])


def _timers(stack: MotoStack) -> list[dict[str, Any]]:
    arn = stack.provisioned.state_machine_arns[TIMER_STATE_MACHINE]
    return list(stack.clients["stepfunctions"].list_executions(stateMachineArn=arn)["executions"])


def test_the_gate_timer_ends_an_ask_pause_before_the_task_timeout(moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    run = runs.start("human_pause", {"prompt": "Still there?", "timeout_seconds": 8}, run_id="tm-1", caller="op")
    wait_for(lambda: moto_stack.services.core.store.get_wait("tm-1", "approve"))
    wait_for(lambda: _timers(moto_stack))  # the park starts its timer just after it stores the wait
    assert len(_timers(moto_stack)) == 1  # the park started one timer, named after its wait
    sfn = moto_stack.clients["stepfunctions"]
    arn = run.execution_arn or ""
    wait_for(lambda: sfn.describe_execution(executionArn=arn)["status"] == "FAILED", timeout=30)
    failed = [e for e in _history(moto_stack, arn) if e["type"] == "TaskFailed"]
    assert [e["taskFailedEventDetails"]["error"] for e in failed] == ["BatonDeadlinePassed"]
    assert not [e for e in _history(moto_stack, arn) if e["type"] == "TaskTimedOut"]  # the backstop never fired
    (timer,) = _timers(moto_stack)
    assert timer["status"] == "SUCCEEDED"
    output = sfn.describe_execution(executionArn=timer["executionArn"])["output"]
    assert '"ended": true' in output
    assert moto_stack.services.core.store.get_wait("tm-1", "approve").status == "timed_out"  # type: ignore[union-attr]


DECLARED = 4  # seconds: the pause's declared timeout
# The timer waits whole seconds (up to 1 s late), then its Lambda fails the task: within ~1.5 s of it.
LATE_BY_AT_MOST = 1.5
PAUSES = {  # workflow -> (its input, the gate's Fail error, the task that parks)
    "human_pause": ({"prompt": "Still there?"}, "HumanInputTimedOut", "AskHuman"),
    "await_answers": ({"questions": [{"question": "Ship it?"}]}, "AwaitAnswersTimedOut", "AwaitAnswers"),
    "interrupt": ({"prompt": "Deploy?"}, "InterruptTimedOut", "Interrupt"),
}


@pytest.mark.parametrize("workflow", sorted(PAUSES))
def test_an_unanswered_pause_times_out_at_its_declared_timeout_and_says_so_truly(
    moto_stack: MotoStack, workflow: str
) -> None:
    """Defect 5 of issue 28: a 12 s await gate failed 7.3 s after parking, saying "timed out after 12s".
    Measured on the local stack's clock (the execution history): from the parking task's entry to its
    failure, at least the declared timeout and at most LATE_BY_AT_MOST after it, by Baton's deadline
    (never Step Functions' own timeout, the backstop a grace later)."""
    given, error, task = PAUSES[workflow]
    run_id = f"declared-{workflow.replace('_', '-')}"
    run = moto_stack.services.runs.start(workflow, {**given, "timeout_seconds": DECLARED}, run_id=run_id, caller="op")
    sfn = moto_stack.clients["stepfunctions"]
    arn = run.execution_arn or ""
    wait_for(lambda: sfn.describe_execution(executionArn=arn)["status"] == "FAILED", timeout=DECLARED + 20)
    history = _history(moto_stack, arn)
    entered = next(e for e in history if e.get("stateEnteredEventDetails", {}).get("name") == task)["timestamp"]
    (failed,) = [e for e in history if e["type"] == "TaskFailed"]
    assert failed["taskFailedEventDetails"]["error"] == "BatonDeadlinePassed"
    assert not [e for e in history if e["type"] == "TaskTimedOut"]  # the backstop never fired
    waited = (failed["timestamp"] - entered).total_seconds()
    assert DECLARED <= waited <= DECLARED + LATE_BY_AT_MOST, waited
    described = sfn.describe_execution(executionArn=arn)
    assert described["error"] == error and f"timed out after {DECLARED}s" in str(described["cause"])


def test_an_answer_stops_the_gate_timer_and_its_thread(moto_stack: MotoStack) -> None:
    """A released wait's timer ends at the release (ABORTED), not at its deadline: on AWS its firing would
    cost transitions and an invocation that find nothing to do; here it would hold a thread until then."""
    runs = moto_stack.services.runs
    runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 3600}, run_id="tm-stop", caller="op")
    wait_for(lambda: moto_stack.services.core.store.get_wait("tm-stop", "approve"))
    wait_for(lambda: _timers(moto_stack))
    (running,) = _timers(moto_stack)
    assert running["status"] == "RUNNING"
    runs.resume(Resume("tm-stop", {"approved": True}, caller="op"))
    sfn = moto_stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=running["executionArn"])["status"] == "ABORTED")
    moto_stack.services.core.timers.stop(running["name"])  # type: ignore[union-attr]  # ended: a no-op
