"""Issue 13 item 3 on moto with the real handlers: the park's one timer (statemachines/gate_deadline.asl.json,
run by moto for real) walks the pause's ladder: the reminder, the escalation, then at the deadline the
declared default, which releases the gate (the run succeeds with it), recorded as `timed_out_default`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.domain.deadline import TIMER_STATE_MACHINE
from baton.services.pauses import Resume
from tests.conftest import wait_for

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

LADDER = {"remind_after": 1, "escalate_after": 2, "escalate_to": ["slack"], "on_timeout": {"default": {"ok": "no"}}}


def _timers(stack: MotoStack) -> list[dict[str, Any]]:
    arn = stack.provisioned.state_machine_arns[TIMER_STATE_MACHINE]
    return list(stack.clients["stepfunctions"].list_executions(stateMachineArn=arn)["executions"])


def _states_entered(stack: MotoStack, arn: str) -> list[str]:
    history = stack.clients["stepfunctions"].get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]


def test_the_timer_machine_walks_the_ladder_then_releases_the_gate_with_the_default(moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    run = runs.start(
        "human_pause", {"prompt": "Ship?", "timeout_seconds": 8, "ladder": LADDER}, run_id="ld-1", caller="op"
    )
    sfn = moto_stack.clients["stepfunctions"]
    arn = run.execution_arn or ""
    wait_for(lambda: sfn.describe_execution(executionArn=arn)["status"] == "SUCCEEDED", timeout=40)
    output = sfn.describe_execution(executionArn=arn)["output"]
    assert '"answers": {"ok": "no"}' in output and '"answered_by": null' in output
    # The timer's last Lambda released the gate; the timer itself ends just after (under load, later).
    wait_for(lambda: _timers(moto_stack)[0]["status"] != "RUNNING", timeout=20)
    (timer,) = _timers(moto_stack)  # still one timer per park
    assert timer["status"] == "SUCCEEDED"
    entered = _states_entered(moto_stack, timer["executionArn"])
    assert entered.count("EndPause") == 3  # remind, escalate, the deadline: one Lambda call each
    types = [e.type for e in moto_stack.services.core.store.list_events("ld-1", limit=500)]
    assert types.index("reminder_sent") < types.index("escalated") < types.index("timed_out_default")
    (pause,) = moto_stack.services.core.store.list_run_interactions("ld-1")
    assert pause.state.outcome == "timed_out_default" and pause.state.answered_by is None


def test_the_timer_ends_early_when_the_pause_is_answered_before_its_steps(moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    ladder = {**LADDER, "remind_after": 3, "escalate_after": 4}
    run = runs.start(
        "human_pause", {"prompt": "Ship?", "timeout_seconds": 20, "ladder": ladder}, run_id="ld-2", caller="op"
    )
    wait_for(lambda: moto_stack.services.core.store.get_wait("ld-2", "approve"))
    wait_for(lambda: _timers(moto_stack))  # the park starts its timer just after it stores the wait
    runs.resume(Resume("ld-2", {"ok": "yes"}, caller="alice"))
    sfn = moto_stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=run.execution_arn or "")["status"] == "SUCCEEDED", timeout=20)
    # The release sends the token, then records itself and stops the timer: the run may end first.
    wait_for(lambda: _timers(moto_stack)[0]["status"] != "RUNNING", timeout=20)
    (timer,) = _timers(moto_stack)
    assert timer["status"] == "ABORTED"  # stopped by the answer's release, waiting for its first step
    assert _states_entered(moto_stack, timer["executionArn"]).count("EndPause") == 0  # no step fired at all
    types = [e.type for e in moto_stack.services.core.store.list_events("ld-2", limit=500)]
    assert "reminder_sent" not in types and "escalated" not in types and "timed_out_default" not in types
