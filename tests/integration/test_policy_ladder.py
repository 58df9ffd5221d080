"""A policy rule's ladder (issue 31): `@remind_after`, `@escalate_after` and `@escalate_to` replace the
steps of the request they name, for a tool approval and an interrupt that declares its action, and the
escalation goes to the rule's channels, walked by the one timer machine (`baton.services.deadlines`) on
in-memory ports with an injected clock, as tests/unit/test_ladder_pauses.py walks a pause's own ladder."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts.policy import AskSpec, PolicyDecision
from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.approval import rule_ladder
from baton.domain.gate_payloads import GateDeadlinePayload
from baton.domain.interrupt_spec import GateAction, InterruptSpec
from baton.domain.ladder import Ladder
from baton.domain.tool_calls import ToolCall
from baton.policy.engine import Policy
from baton.policy.source import FixedPolicy
from baton.services.deadline_timers import Deadlines
from baton.services.interrupts import InterruptService
from baton.services.reconciler import Reconciler
from baton.services.tool_approvals import ToolApprovalService
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.services.core import Core
    from tests.conftest import FixedClock
    from tests.fakes import RecordingNotifier
    from tests.fakes.timers import StartedTimer

POLICY = """
@id("deploys")
@ask
@approvers("alice")
@remind_after("10")
@escalate_after("20")
@escalate_to("slack")
permit(principal, action == Action::"call_tool", resource in Tool::"Bash");

@id("prod")
@ask
@approvers("alice")
@escalate_after("20")
@escalate_to("email")
permit(principal, action == Action::"pass_gate", resource == Gate::"deploy");
"""


@pytest.fixture
def timers(core: Core) -> RecordingDeadlineTimers:
    core.timers = RecordingDeadlineTimers()
    core.policy = FixedPolicy(Policy.load(POLICY))
    core.ensure_run("r1")
    return core.timers


def _walk(core: Core, clock: FixedClock, started: StartedTimer) -> list[dict[str, Any]]:
    """Do what the timer machine does until it ends: wait, fire, take the returned next step."""
    reconciler = Reconciler(core)
    deadlines = Deadlines(
        reconciler,
        sleep=clock.advance,
    )
    fired: list[dict[str, Any]] = []
    payload, wait_seconds = started.payload, started.wait_seconds
    while True:
        clock.advance(wait_seconds)
        result = deadlines.fire(payload).model_dump(mode="json", exclude_unset=True)
        fired.append(result)
        nxt = result.get("next")
        if not nxt or nxt.get("step") == "deadline":
            return fired
        payload, wait_seconds = GateDeadlinePayload.model_validate(nxt), nxt["wait_seconds"]


def _escalations(core: Core) -> list[list[str]]:
    notifier: RecordingNotifier = core.notifier  # type: ignore[assignment]
    return [list(n.channels) for n in notifier.notifications if n.event == "escalated"]


def test_a_tool_approval_escalates_to_the_rules_channels_not_the_requests(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    body = ToolApprovalRequest(
        call=ToolCall(tool="Bash", arguments={"command": "make deploy"}),
        reason="ship it",
        timeout_seconds=60,
        escalate_after=30,
        escalate_to=["webhook"],  # the rule names an escalation: it replaces this one
    )
    approval, created = ToolApprovalService(core).request("r1", body, caller="agent")
    assert created and approval.state.status == "pending"
    ladder = approval.request.ladder
    assert ladder is not None and (ladder.remind_after, ladder.escalate_after, ladder.escalate_to) == (
        10,
        20,
        ["slack"],
    )
    (timer,) = timers.started
    fired = _walk(core, clock, timer)
    assert [(f["step"], f["reason"]) for f in fired] == [("remind", "sent"), ("escalate", "sent")]
    assert _escalations(core) == [["slack"]]


def test_an_interrupt_escalates_to_the_rules_channels_and_keeps_its_own_reminder(
    core: Core, clock: FixedClock, timers: RecordingDeadlineTimers
) -> None:
    spec = InterruptSpec(
        session_id="r1",
        prompt="Deploy?",
        timeout_ms=60_000,
        ladder=Ladder(remind_after=5),
        action=GateAction(name="deploy", arguments={"env": "prod"}, on_allow="go", on_deny="stop"),
    )
    interrupt, created = InterruptService(core).create(spec, caller="agent")
    assert created and interrupt.state.status == "pending"
    ladder = interrupt.request.ladder
    assert ladder is not None and (ladder.remind_after, ladder.escalate_after, ladder.escalate_to) == (5, 20, ["email"])
    (timer,) = timers.started
    fired = _walk(core, clock, timer)
    assert [(f["step"], f["reason"]) for f in fired] == [("remind", "sent"), ("escalate", "sent")]
    assert _escalations(core) == [["email"]]


def test_a_rules_step_past_the_shorter_deadline_is_dropped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    ask = AskSpec(remind_after=10, escalate_after=50, escalate_to=["slack"])
    ruling = PolicyDecision(outcome="ask", rule="late", policy_version="v", ask=ask)
    with caplog.at_level(logging.WARNING, logger="baton"):
        ladder = rule_ladder(Ladder(remind_after=5), ruling, timeout_seconds=30)
    assert (ladder.remind_after, ladder.escalate_after, ladder.escalate_to) == (10, None, [])
    assert "policy rule late: escalate_after 50s is not before the 30s deadline: dropped" in caplog.text


def test_a_requests_step_the_rules_would_overtake_is_dropped() -> None:
    ruling = PolicyDecision(outcome="ask", rule="r", policy_version="v", ask=AskSpec(remind_after=40))
    declared = Ladder(remind_after=5, escalate_after=30, escalate_to=["webhook"])
    ladder = rule_ladder(declared, ruling, timeout_seconds=60)
    assert (ladder.remind_after, ladder.escalate_after, ladder.escalate_to) == (40, None, [])
