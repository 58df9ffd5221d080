"""Ladders on every pause (round 5) on moto with the real handlers: the one timer machine
(statemachines/gate_deadline.asl.json, run by moto for real) walks

- an async question's ladder (posted by the await_answers workflow's demo agent): reminder, escalation,
  then its declared default at its own deadline, which the workflow's await gate counts as an answer (the
  run succeeds with it), while the await gate's own ladder reminds about it first;
- a blocking ask's reminder and escalation (no gate is parked: the ask's own timer, named after it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts import BlockingAskRequest
from baton.domain.deadline import INTERACTION_GATE, TIMER_STATE_MACHINE
from baton.services.asks import AskService
from tests.conftest import wait_for

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

QUESTION = {
    "question": "Use the fast path?",
    "options": ["yes", "no"],
    "timeout_seconds": 5,
    "remind_after": 1,
    "escalate_after": 2,
    "escalate_to": ["slack"],
    "on_timeout": {"default": "no"},
}


def _timers(stack: MotoStack) -> list[dict[str, Any]]:
    arn = stack.provisioned.state_machine_arns[TIMER_STATE_MACHINE]
    return list(stack.clients["stepfunctions"].list_executions(stateMachineArn=arn)["executions"])


def _timer_inputs(stack: MotoStack) -> list[dict[str, Any]]:
    import json

    sfn = stack.clients["stepfunctions"]
    return [json.loads(sfn.describe_execution(executionArn=t["executionArn"])["input"]) for t in _timers(stack)]


def _events(stack: MotoStack, run_id: str) -> list[Any]:
    return list(stack.services.core.store.list_events(run_id, limit=500))


def test_a_questions_default_at_its_deadline_releases_the_await_gate_and_the_run_succeeds(
    moto_stack: MotoStack,
) -> None:
    run = moto_stack.services.runs.start(
        "await_answers",
        {
            "gate": "sync",
            "node": "agent",
            "from": "agent",
            "timeout_seconds": 60,
            "questions": [QUESTION],
            "ladder": {"remind_after": 1, "on_timeout": "use_question_defaults"},
        },
        run_id="lq-1",
        caller="op",
    )
    sfn = moto_stack.clients["stepfunctions"]
    arn = run.execution_arn or ""
    wait_for(lambda: sfn.describe_execution(executionArn=arn)["status"] == "SUCCEEDED", timeout=60)
    output = sfn.describe_execution(executionArn=arn)["output"]
    assert '"answer": "no"' in output  # the gate counted the default as the question's answer
    gates = sorted(t["gate"] for t in _timer_inputs(moto_stack))
    assert gates == [INTERACTION_GATE, "sync"]  # one timer for the question, one for the gate
    events = _events(moto_stack, "lq-1")
    types = [e.type for e in events]
    reminders = [e.data["gate"] for e in events if e.type == "reminder_sent"]
    assert sorted(reminders) == ["agent", "sync"]  # the question's own, and the gate's about it
    assert types.index("escalated") < types.index("timed_out_default") < types.index("await_released")
    assert "interaction_answered" not in types
    (question,) = moto_stack.services.core.store.list_run_interactions("lq-1", kind="question")
    assert (question.state.outcome, question.state.answered_by) == ("timed_out_default", None)


def test_a_blocking_ask_is_reminded_and_escalated_by_its_own_timer(moto_stack: MotoStack) -> None:
    core = moto_stack.services.core
    core.ensure_run("lq-2")

    asked = AskService(core).ask(
        "lq-2",
        BlockingAskRequest(
            node="agent",
            question="Drop the table?",
            timeout_seconds=30,
            remind_after=1,
            escalate_after=2,
            escalate_to=["webhook"],
        ),
        caller="agent",
    )
    wait_for(lambda: "escalated" in [e.type for e in _events(moto_stack, "lq-2")], timeout=30)
    wait_for(lambda: _timers(moto_stack)[0]["status"] == "SUCCEEDED", timeout=30)
    (timer,) = _timer_inputs(moto_stack)
    assert (timer["gate"], timer["interaction_id"]) == (INTERACTION_GATE, asked.interaction_id)
    types = [e.type for e in _events(moto_stack, "lq-2")]
    assert types.index("reminder_sent") < types.index("escalated")
    current = core.store.get_interaction("lq-2", asked.interaction_id)
    assert current is not None and current.state.status == "pending"  # reminded, still the person's to answer
