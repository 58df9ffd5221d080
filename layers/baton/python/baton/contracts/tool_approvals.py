"""Tool-call approvals on the wire (issue 30): the request an agent's adapter posts, the view it waits
on, the consume that binds the approval to the call that runs, and the remembered grants. One typed
model for the API, the SDK client (baton/client/tool_approvals.py) and the CLI's hook."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from baton.contracts.base import Contract
from baton.contracts.policy import PolicyQuery
from baton.domain import fields
from baton.domain.approval import ApprovalPolicy
from baton.domain.interrupt_fields import NotifyChannels
from baton.domain.ladder import LadderFields, TimeoutDefault
from baton.domain.tool_calls import (
    CONSUMED,
    DIGEST_PATTERN,
    Decision,
    GrantScope,
    Remember,
    Risk,
    StoredDecision,
    ToolApprovalSpec,
    ToolCall,
    satisfies,
)

if TYPE_CHECKING:
    from baton.models import Interaction, RunSummary

ApprovalStatus = Literal["pending", "answered", "timed_out", "cancelled"]
# who decided: a person (answered), the deadline's default, a remembered grant, or a policy rule (at once)
DecisionOutcome = Literal["answered", "timed_out_default", "grant", "policy"]


def tool_spec(i: Interaction) -> ToolApprovalSpec:
    """The tool approval's own fields (TypeError for another kind: a caller checks the kind first)."""
    from baton.models import ToolApprovalPause

    if not isinstance(i.request, ToolApprovalPause):
        raise TypeError(f"interaction {i.interaction_id} is a {i.request.kind}, not a tool approval")
    return i.request.tool


class ToolTimeoutDecision(BaseModel):
    """What the deadline decides: an approve (bound to this call) or a deny, never an edit or a grant."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "deny"]
    reason: str | None = Field(default=None, max_length=2000, description="Shown to the model.")


class ToolTimeoutDefault(TimeoutDefault):
    default: ToolTimeoutDecision  # narrowed: the schema says what the service accepts (Schemathesis holds it)


class ToolApprovalRequest(LadderFields):
    """`POST /api/runs/{run}/tool-approvals`. At the deadline the declared default is taken: deny unless
    `on_timeout` declares `{"default": {"decision": "approve" | "deny", "reason": ...}}`."""

    call: ToolCall
    risk: Risk = Field(default="medium", description="How much the call can break: low, medium or high.")
    reason: str = Field(min_length=1, max_length=2000, description="Why the agent wants to run it.")
    agent: fields.NodeName = Field(default="agent", description="The asking agent (the item's node).")
    session: str | None = Field(
        default=None, min_length=1, max_length=200, description="The agent's session (a session grant's scope)."
    )
    timeout_seconds: fields.TimeoutSeconds = Field(description="Mandatory bound: then the default is taken.")
    notify: NotifyChannels = Field(default=None, description="Notification channels (default console).")
    on_timeout: Literal["fail"] | ToolTimeoutDefault = Field(  # narrowed: a subset of OnTimeout
        default="fail",
        description='At the deadline: "fail" (deny) or {"default": {"decision": "approve" | "deny", "reason"?}}',
    )
    approval: ApprovalPolicy | None = Field(
        default=None,
        description="A quorum: each answer is a vote (approve and edit approve, deny rejects); decided by the "
        "deciding votes' last answer. The asking agent may not vote.",
    )

    model_config = ConfigDict(extra="forbid")

    def spec(self, *, requested_by: str) -> ToolApprovalSpec:
        """What the approval stores of this request (`requested_by`: the asker, kept with a quorum)."""
        call, quorum = self.call, self.approval is not None
        return ToolApprovalSpec(
            call=call,
            digest=call.digest,
            risk=self.risk,
            reason=self.reason,
            session=self.session,
            approval=self.approval,
            requested_by=requested_by if quorum else None,
        )

    def policy_query(self, run: RunSummary, *, granted: bool, at: str) -> PolicyQuery:
        """What the policy is asked of this call (`granted`: an active grant would answer it)."""
        return PolicyQuery(
            action="call_tool",
            target=self.call.tool,
            arguments=self.call.arguments,
            agent=self.agent,
            run_id=run.run_id,
            workflow=(run.workflow or "") if run.hosted else "",
            session=self.session or "",
            risk=self.risk,
            granted=granted,
            at=at,
        )


class ToolDecisionView(Contract):
    """How the approval was decided and the call it lets run (`digest`, `arguments`)."""

    decision: Decision
    reason: str | None = None
    arguments: dict[str, Any] = Field(description="The arguments to run: the edited ones for an edit.")
    digest: str | None = Field(default=None, description="The digest of the call it allows (none for a deny).")
    remember: Remember | None = None
    decided_by: str | None = Field(default=None, description="Who answered (null: the deadline's default).")
    decided_at: str | None = None
    outcome: DecisionOutcome
    grant_id: str | None = Field(default=None, description="The remembered grant that answered it at once.")
    rule: str | None = Field(default=None, description="The policy rule that answered it at once (issue 31).")
    policy_version: str | None = Field(default=None, description="The version of the policy that rule is in.")


class ToolApprovalView(Contract):
    interaction_id: str
    run_id: str
    status: ApprovalStatus
    tool: str
    arguments: dict[str, Any]
    digest: str = Field(description="sha256 of the canonical JSON of {tool, arguments, schema}.")
    risk: Risk
    reason: str
    session: str | None = None
    created_at: str
    expires_at: str | None = None
    decision: ToolDecisionView | None = None
    consumed: bool = Field(description="The adapter has used the approval (it is single use).")
    # an advisory claim (who is working on it, until when), as on an interrupt; None when free or lapsed
    claimed_by: str | None = None
    claimed_at: str | None = None
    lease_expires_at: str | None = None

    @classmethod
    def of(cls, i: Interaction) -> ToolApprovalView:
        spec = tool_spec(i)
        st = i.state
        decision = None
        if st.status == "answered":
            stored = StoredDecision.model_validate(st.answer)
            outcome: DecisionOutcome = (
                "grant"
                if stored.grant_id
                else "policy"
                if stored.policy_rule
                else "timed_out_default"
                if st.outcome
                else "answered"
            )
            decision = ToolDecisionView(
                decision=stored.decision,
                reason=stored.reason,
                arguments=stored.arguments if stored.arguments is not None else spec.call.arguments,
                digest=stored.digest,
                remember=stored.remember,
                decided_by=st.answered_by,
                decided_at=st.answered_at,
                outcome=outcome,
                grant_id=stored.grant_id,
                rule=stored.policy_rule,
                policy_version=stored.policy_version,
            )
        return cls(
            interaction_id=i.interaction_id,
            run_id=i.run_id,
            status=st.status,
            tool=spec.call.tool,
            arguments=spec.call.arguments,
            digest=spec.digest,
            risk=spec.risk,
            reason=spec.reason,
            session=spec.session,
            created_at=i.created_at,
            expires_at=i.expires_at,
            decision=decision,
            consumed=st.reason == CONSUMED,
            claimed_by=st.claimed_by,
            claimed_at=st.claimed_at,
            lease_expires_at=st.lease_expires_at,
        )


class ToolApprovalClaimed(Contract):
    """A claim change on a tool approval (`POST .../tool-approvals/{id}/claim`, renew, release, reassign)."""

    approval: ToolApprovalView
    claimed: bool
    changed: bool = Field(description="False when nothing changed (a re-claim, a release of a free one).")


class ConsumeRequest(Contract):
    """`POST .../tool-approvals/{id}/consume`, right before the tool runs."""

    digest: str = Field(pattern=DIGEST_PATTERN, description="The digest of the call about to run.")

    model_config = ConfigDict(extra="forbid")


class ConsumeResult(Contract):
    interaction_id: str
    digest: str
    arguments: dict[str, Any] = Field(description="The arguments the approval allows (run exactly these).")
    consumed: Literal[True] = True


class GrantView(Contract):
    """A remembered "always allow": the approve that carried it is its id."""

    grant_id: str
    run_id: str
    tool: str
    scope: GrantScope
    session: str | None = None
    constraint: dict[str, Any] | None = None
    granted_by: str | None = None
    granted_at: str
    expires_at: str

    @classmethod
    def of(cls, i: Interaction, remember: Remember, expires_at: str) -> GrantView:
        spec = tool_spec(i)
        return cls(
            grant_id=i.interaction_id,
            run_id=i.run_id,
            tool=spec.call.tool,
            scope=remember.scope,
            session=spec.session if remember.scope == "session" else None,
            constraint=remember.constraint,
            granted_by=i.state.answered_by,
            granted_at=i.state.answered_at or "",
            expires_at=expires_at,
        )

    def applies_to(self, spec: ToolApprovalSpec) -> bool:
        """A call this grant answers: its tool, in its scope, within its constraint."""
        if self.tool != spec.call.tool or (self.scope == "session" and self.session != spec.session):
            return False
        return satisfies(self.constraint, spec.call.arguments)


class GrantList(Contract):
    run_id: str
    grants: list[GrantView]


class GrantRevoked(Contract):
    grant_id: str
    run_id: str
    revoked: Literal[True] = True
    revoked_by: str


class DecidedToolApproval(ToolApprovalView):
    """A listed approval: its view and the agent that asked (a policy's principal), which only the
    listing carries (the view an adapter waits on stays as it was)."""

    agent: str = Field(description="The asking agent (the approval's node).")

    @classmethod
    def of(cls, i: Interaction) -> DecidedToolApproval:
        return cls(**ToolApprovalView.of(i).model_dump(), agent=i.node)


class ToolApprovalPage(Contract):
    """`GET /api/tool-approvals?status=answered&since=`: one page of decided tool approvals across runs (a
    policy backtest's and report's input). A page holds at most `limit`; fewer, even none, when `since`
    left some out: follow `next` until it is null."""

    approvals: list[DecidedToolApproval]
    count: int
    next: str | None = Field(default=None, description="Pass it as ?next= for the next page; null on the last.")
