"""Who decides a tool call (issues 30, 31): pure rules, no ports. A policy's enforced allow or deny, else
an active grant, answers a new call at once; an `@ask` rule names its approvers, quorum and deadline; an
approval a repeat of its call may still use; the grants still active."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.tool_approvals import GrantView
from baton.domain.approval import rule_approval, rule_ladder
from baton.domain.tool_calls import CONSUMED, StoredDecision

if TYPE_CHECKING:
    from baton.contracts.policy import PolicyDecision
    from baton.domain.ladder import Ladder
    from baton.domain.tool_calls import ToolApprovalSpec
    from baton.models import Interaction


def answered_at_once(
    ruling: PolicyDecision | None, grant: GrantView | None, digest: str
) -> tuple[str, dict[str, Any]] | None:
    """Who answers a new call at once and the stored answer: an enforced rule's allow or deny, else (when no
    rule decided) an active grant's approve; None when a person is asked."""
    if ruling is not None and ruling.rule is not None and ruling.outcome != "ask":
        answer = StoredDecision.by_policy(
            allows=ruling.outcome == "allow",
            rule=ruling.rule,
            version=ruling.policy_version,
            reason=ruling.reason,
            digest=digest,
        )
        return f"policy:{ruling.rule}", answer
    if grant is not None and ruling is None:
        return f"grant:{grant.grant_id}", StoredDecision.by_grant(grant.grant_id, digest)
    return None


def asked_by_rule(
    spec: ToolApprovalSpec, ruling: PolicyDecision, timeout: int, ladder: Ladder, *, caller: str
) -> tuple[ToolApprovalSpec, int, Ladder]:
    """The approval a rule's `@ask` names: its approvers and quorum (a vote each, the asker refused), the
    shorter of its deadline and the request's (`rule_approval`), and its ladder's steps (`rule_ladder`)."""
    ask = ruling.ask
    if ask is None:
        return spec, timeout, ladder
    if ask.timeout_seconds is not None:
        timeout = min(timeout, ask.timeout_seconds)
    ladder = rule_ladder(ladder, ruling, timeout)
    approval = rule_approval(ruling)
    if approval is None:
        return spec, timeout, ladder
    return spec.model_copy(update={"approval": approval, "requested_by": caller}), timeout, ladder


def usable(i: Interaction) -> bool:
    """Pending, or allowed and not yet used: a repeat of its call finds it."""
    st = i.state
    return st.status == "pending" or (
        st.status == "answered" and st.reason != CONSUMED and StoredDecision.model_validate(st.answer).allows
    )


def active_grants(now: str, approvals: list[Interaction]) -> list[GrantView]:
    """The grants (an approve with `remember`) among `approvals` not yet expired or revoked at `now`."""
    decided = [(i, StoredDecision.model_validate(i.state.answer)) for i in approvals if i.state.status == "answered"]
    until = [(i, d, d.grant_until(i.state.answered_at or now)) for i, d in decided]
    return [GrantView.of(i, d.remember, end) for i, d, end in until if d.remember and end and end > now]
