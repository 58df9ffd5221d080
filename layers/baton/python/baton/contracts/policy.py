"""Policy before people (issue 31): what a policy is asked, and what it answers.

A `PolicyQuery` is one call (a tool call, or a pause that declares an action) as Baton sees it; a
`PolicyDecision` is the policy's answer: allow, deny (with the reason the model sees) or ask a person (with
the approvers, quorum, deadline and ladder the deciding rule names). The same two shapes are used by the service,
the CLI (`baton policy test`, `backtest`) and the decision log."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from baton.contracts.base import Contract
from baton.domain.ladder import Channel

PolicyOutcome = Literal["allow", "deny", "ask"]
# shadow: the decision is logged, the call is decided as before (a person); enforce: the decision stands
PolicyMode = Literal["shadow", "enforce"]
# call_tool: a tool approval; pass_gate: a pause (interrupt, review, ask) that declares an action
PolicyAction = Literal["call_tool", "pass_gate"]


class PolicyQuery(Contract):
    """One call to decide: Cedar's principal (the agent, in its team and workflow), action, resource (the
    tool or the gate, with the call's arguments as the resource's tags) and context."""

    action: PolicyAction = "call_tool"
    target: str = Field(min_length=1, description="The tool's name (call_tool) or the gate's action (pass_gate).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The call's arguments.")
    agent: str = Field(default="agent", min_length=1)
    run_id: str = ""
    workflow: str = ""
    team: str = ""
    session: str = ""
    risk: Literal["low", "medium", "high"] = "medium"
    granted: bool = Field(default=False, description="An active remembered grant covers this call.")
    at: str = Field(default="", description="When the call was made (ISO 8601 UTC; empty: now).")


class AskSpec(Contract):
    """Who a required approval goes to, by when, and its ladder, as the deciding rule's annotations name it."""

    approvers: list[str] = Field(default_factory=list, description="Operators or `group:<name>`; empty: anyone.")
    quorum: int | None = Field(default=None, ge=1, description="Approvals needed (none: one answer decides).")
    timeout_seconds: int | None = Field(default=None, ge=1, description="The deadline the rule sets.")
    tier: str | None = Field(default=None, description="The rule's risk tier, as its `@tier` names it.")
    remind_after: int | None = Field(default=None, ge=1, description="Seconds: one reminder (`@remind_after`).")
    escalate_after: int | None = Field(default=None, ge=1, description="Seconds: escalate (`@escalate_after`).")
    escalate_to: list[Channel] = Field(
        default_factory=list, description="The channels the escalation notifies (`@escalate_to`)."
    )


class PolicyDecision(Contract):
    outcome: PolicyOutcome
    rule: str | None = Field(default=None, description="The `@id` of the rule that decided (none: no rule matched).")
    reason: str | None = Field(default=None, description="Why: a deny's reason is what the model sees.")
    policy_version: str = Field(description="The version of the policy that decided (its content hash).")
    mode: PolicyMode = "enforce"
    ask: AskSpec | None = Field(default=None, description="For `ask`: who is asked, as the rule names it.")

    @property
    def enforced(self) -> bool:
        return self.mode == "enforce"
