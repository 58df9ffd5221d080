"""Who decides a tool call (issues 30, 31): pure rules, no ports. A policy's enforced allow or deny, else
an active grant, answers a new call at once; an `@ask` rule names its approvers, quorum and deadline; what a
new call's create writes; an approval a repeat of its call may still use; the grants still active."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from baton.contracts.tool_approvals import GrantView
from baton.domain.approval import rule_approval, rule_ladder
from baton.domain.tool_calls import CONSUMED, StoredDecision
from baton.events import EventPayload, HumanInputRequested, InteractionAnswered, PolicyDecided
from baton.models import InteractionStatus, ToolApprovalPause

if TYPE_CHECKING:
    from baton.contracts.policy import PolicyDecision
    from baton.contracts.tool_approvals import ToolApprovalRequest
    from baton.domain.ladder import Ladder
    from baton.domain.tool_calls import ToolApprovalSpec
    from baton.models import Interaction


class CallCreate(NamedTuple):
    """What a new call's create writes (one write, `ToolApprovalService.request`): its request, its state
    (answered at once by a rule or a grant, else pending), the records written with it, and its deadline's
    seconds (the request's, or an `@ask` rule's shorter one)."""

    request: ToolApprovalPause
    state: InteractionStatus
    records: list[EventPayload]
    timeout_seconds: int

    @property
    def asked(self) -> bool:
        """A person is asked: notified and its ladder's timer armed (never for an answer given at once)."""
        return self.state.status == "pending"


def call_create(
    body: ToolApprovalRequest,
    spec: ToolApprovalSpec,
    ladder: Ladder,
    decided: PolicyDecision | None,
    grant: GrantView | None,
    *,
    interaction_id: str,
    caller: str,
    now: str,
) -> CallCreate:
    """The create of `body`'s call as the policy's `decided` (None: no policy) and the active `grant`
    matching `spec` (None: none) rule it: an enforced rule decides (a grant does not override it: the
    policy saw `granted`); else the grant answers; else a person is asked. Each decision is logged."""
    ruling = decided if decided is not None and decided.enforced and decided.rule is not None else None
    node, timeout = body.agent, body.timeout_seconds
    if ruling is not None:  # an `@ask` rule's approvers, quorum and deadline
        spec, timeout, ladder = asked_by_rule(spec, ruling, timeout, ladder, caller=caller)
    prompt = spec.prompt()
    request = ToolApprovalPause(
        node=node,
        prompt=prompt,
        timeout_seconds=timeout,
        ladder=ladder,
        tool=spec,
        notify=body.notify or ["console"],
    )
    asked = HumanInputRequested(
        interaction_id=interaction_id, node=node, kind=request.kind, prompt=prompt, timeout_seconds=timeout, by=caller
    )
    records: list[EventPayload] = [asked]
    state, at_once = InteractionStatus(), answered_at_once(ruling, grant, spec.digest)
    if at_once is not None:  # nobody is asked: the rule, or the grant, is who answered
        by, answer = at_once
        state = InteractionStatus(status="answered", answer=answer, answered_by=by, answered_at=now)
        records.append(InteractionAnswered(interaction_id=interaction_id, node=node, answer=answer, by=by))
    if decided is not None:
        records.append(
            PolicyDecided.of(
                decided,
                action="call_tool",
                target=spec.call.tool,
                interaction_id=interaction_id,
                applied=decided.enforced and (ruling is not None or grant is None),
                digest=spec.digest,
            )
        )
    return CallCreate(request, state, records, timeout)


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
