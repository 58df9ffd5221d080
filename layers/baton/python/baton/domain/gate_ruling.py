"""What a policy's decision of an interrupt's declared action (issue 31, `pass_gate`) changes: an enforced
rule's allow or deny passes the gate at once with the action's `on_allow` or `on_deny` value, resumed by
`policy:<rule>`; a rule's ask goes to the rule's approvers and quorum, by the shorter of its deadline and
the interrupt's. No rule matched, or a shadow policy, changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.domain.approval import rule_approval, rule_ladder
from baton.domain.ladder import Ladder

if TYPE_CHECKING:
    from baton.contracts.policy import PolicyDecision
    from baton.domain.interrupt_spec import GateAction
    from baton.models import InterruptRequest

RULE_PREFIX = "policy:"  # who resumed an interrupt a rule decided: policy:<rule>


def ruling_of(decided: PolicyDecision | None) -> PolicyDecision | None:
    """The decision that stands: an enforced one by a rule."""
    return decided if decided is not None and decided.enforced and decided.rule is not None else None


def passed_with(ruling: PolicyDecision | None, action: GateAction | None) -> tuple[str, Any] | None:
    """Who passes the gate at once and with which resume value (a deny's `on_deny`, never the allow's);
    None when a person decides."""
    if ruling is None or action is None or ruling.rule is None or ruling.outcome == "ask":
        return None
    return RULE_PREFIX + ruling.rule, action.on_allow if ruling.outcome == "allow" else action.on_deny


def apply_ruling(request: InterruptRequest, ruling: PolicyDecision | None) -> None:
    """An allow or deny is no person's vote (no quorum); an ask names its approvers, quorum, deadline and
    ladder's steps."""
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
