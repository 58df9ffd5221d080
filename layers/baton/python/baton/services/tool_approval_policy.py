"""A policy's ruling on a new tool call (issue 31): the query, who answers it at once (an enforced rule's
allow or deny, else an active grant) and the approvers an `@ask` rule names.
A policy that fails never allows: a person is asked, and the failure is logged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.policy import PolicyDecision, PolicyQuery
from baton.domain.approval import rule_approval, rule_ladder
from baton.domain.tool_calls import StoredDecision
from baton.policy.source import decide_or_ask

if TYPE_CHECKING:
    from baton.contracts.tool_approvals import GrantView, ToolApprovalRequest
    from baton.domain.ladder import Ladder
    from baton.domain.tool_calls import ToolApprovalSpec
    from baton.models import RunSummary
    from baton.services.core import Core


def policy_decision(core: Core, run: RunSummary, body: ToolApprovalRequest, *, granted: bool) -> PolicyDecision | None:
    """The policy's decision of this call (None: no policy). A policy that fails never allows: a person
    is asked, and the failure is logged."""
    return decide_or_ask(
        core.policy,
        lambda: PolicyQuery(
            action="call_tool",
            target=body.call.tool,
            arguments=body.call.arguments,
            agent=body.agent,
            run_id=run.run_id,
            workflow=(run.workflow or "") if run.hosted else "",
            session=body.session or "",
            risk=body.risk,
            granted=granted,
            at=core.now(),
        ),
        run_id=run.run_id,
    )


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
