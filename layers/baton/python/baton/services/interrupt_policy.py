"""A policy decides an interrupt that declares the action it gates (issue 31, `pass_gate`).

At creation the policy in force is asked about `Gate::"<action>"` (the arguments as its tags). Enforced,
a rule's allow or deny passes the gate at once with the action's declared `on_allow` or `on_deny` value,
resumed by `policy:<rule>` through the interrupt's own resume path; a rule's ask goes to the rule's
approvers and quorum, by the shorter of its deadline and the interrupt's. No rule matched, or a shadow
policy, changes nothing. Every decision is a `policy_decided` record in the run's decision chain."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.policy import PolicyDecision, PolicyQuery
from baton.domain.approval import rule_approval, rule_ladder
from baton.domain.ladder import Ladder
from baton.policy.source import decide_or_ask

if TYPE_CHECKING:
    from baton.domain.interrupt_spec import GateAction, InterruptSpec
    from baton.models import InterruptRequest, RunSummary
    from baton.services.core import Core

RULE_PREFIX = "policy:"  # who resumed an interrupt a rule decided: policy:<rule>


def decide_gate(core: Core, run: RunSummary, spec: InterruptSpec, *, caller: str) -> PolicyDecision | None:
    """The policy's decision of the interrupt's declared action (None: no action, or no policy). A policy
    that fails never passes the gate: a person is asked, and the failure is logged."""
    action = spec.action
    if action is None:
        return None
    return decide_or_ask(
        core.policy,
        lambda: PolicyQuery(
            action="pass_gate",
            target=action.name,
            arguments=action.arguments,
            agent=caller,
            run_id=spec.session_id,
            workflow=spec.workflow_id or ((run.workflow or "") if run.hosted else ""),
            session=spec.session_id,
            at=core.now(),
        ),
        run_id=spec.session_id,
    )


def ruling_of(decided: PolicyDecision | None) -> PolicyDecision | None:
    """The decision that stands: an enforced one by a rule (no rule matched, or shadow: nothing changes)."""
    return decided if decided is not None and decided.enforced and decided.rule is not None else None


def passed_with(ruling: PolicyDecision | None, action: GateAction | None) -> tuple[str, Any] | None:
    """Who passes the gate at once and with which resume value: an enforced rule's allow (`on_allow`) or
    deny (`on_deny`, never the allow's); None when a person decides."""
    if ruling is None or action is None or ruling.rule is None or ruling.outcome == "ask":
        return None
    return RULE_PREFIX + ruling.rule, action.on_allow if ruling.outcome == "allow" else action.on_deny


def apply_ruling(request: InterruptRequest, ruling: PolicyDecision | None) -> None:
    """What a rule changes in the stored request: an allow or deny is no person's vote (no quorum); an ask
    names its approvers and quorum, the shorter of its deadline and the interrupt's, and its ladder's steps."""
    if ruling is None:
        return
    if ruling.outcome != "ask":
        request.approval = None
        return
    ask = ruling.ask
    if ask is None:
        return
    current = request.timeout_seconds
    if ask.timeout_seconds is not None and (current is None or ask.timeout_seconds < current):
        request.timeout_seconds, request.timeout_ms = ask.timeout_seconds, ask.timeout_seconds * 1000
    if ask.remind_after is not None or ask.escalate_after is not None:
        request.ladder = rule_ladder(request.ladder or Ladder(), ruling, request.timeout_seconds)
    approval = rule_approval(ruling)
    if approval is not None:
        request.approval = approval
