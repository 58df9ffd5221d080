"""What a policy would have changed (issue 31): the decided tool approvals compared with a policy's
outcome for each, pure (no port, no HTTP), so `baton policy backtest` and `baton policy report` share it.

- backtest: a policy file replayed over past calls (`Policy.decide` on the call as it was asked);
- report: the shadow decisions the policy in force recorded for them (`policy_decided` events, mode shadow).

Only a person's decisions are compared: a call answered by a remembered grant or by its deadline's
default is counted apart (`not_by_person`). What would change, grouped: allowed that a person denied,
denied that a person approved (an edit is an approval of the edited call), and asked where every call
of that tool and rule was approved (the rule could allow them); everything else is unchanged."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import Field

from baton.contracts.base import Contract
from baton.contracts.policy import PolicyDecision, PolicyOutcome, PolicyQuery
from baton.events import EventType

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from baton.contracts.tool_approvals import DecidedToolApproval
    from baton.policy.engine import Policy

SUMMARY_CHARS = 60  # an argument summary's length on one line
PersonDecision = Literal["approved", "denied"]


class RecordedEvent(Protocol):
    """A run's event as the API lists it (`EventView`; a decision log's `AuditRecordView` too)."""

    @property
    def type(self) -> str: ...
    @property
    def data(self) -> dict[str, Any]: ...


class ChangedCall(Contract):
    """One decided call and the policy's outcome for it."""

    run_id: str
    interaction_id: str
    tool: str
    arguments: str = Field(description="A short summary of the call's arguments.")
    person: PersonDecision = Field(description="What the person decided (an edit is approved).")
    decided_by: str | None = None
    policy: PolicyOutcome
    rule: str | None = Field(default=None, description="The policy rule that decided (none: no rule matched).")
    reason: str | None = None


class AskedGroup(Contract):
    """The calls of one tool a rule would ask about, every one of which a person approved."""

    tool: str
    rule: str | None
    count: int
    calls: list[ChangedCall]


class PolicyComparison(Contract):
    """The decided calls under a policy (backtest) or its shadow records (report), what would change."""

    since: str | None = Field(default=None, description="Only calls made at or after this time.")
    policy_versions: list[str] = Field(description="The policy versions that decided (a report may span several).")
    compared: int = Field(description="Calls a person decided that the policy decided too.")
    allowed_that_a_person_denied: list[ChangedCall]
    denied_that_a_person_approved: list[ChangedCall]
    asked_that_was_always_approved: list[AskedGroup]
    unchanged: int
    not_by_person: int = Field(description="Decided by a remembered grant or the deadline's default: not compared.")
    without_policy_decision: int = Field(default=0, description="Report: decided calls with no shadow record.")


def summarize(arguments: Mapping[str, Any], limit: int = SUMMARY_CHARS) -> str:
    """The arguments on one short line: `key=value` pairs, strings as they are, cut at `limit`."""
    parts = [f"{k}={v if isinstance(v, str) else json.dumps(v, separators=(',', ':'))}" for k, v in arguments.items()]
    text = " ".join(parts).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def query_of(approval: DecidedToolApproval) -> PolicyQuery:
    """The policy's question for a past call, as it was asked (the arguments before any edit, its time)."""
    return PolicyQuery(
        action="call_tool",
        target=approval.tool,
        arguments=approval.arguments,
        agent=approval.agent or "agent",
        run_id=approval.run_id,
        session=approval.session or "",
        risk=approval.risk,
        at=approval.created_at,
    )


def compare(
    approvals: Iterable[DecidedToolApproval],
    decide: Callable[[DecidedToolApproval], PolicyDecision | None],
    *,
    since: str | None = None,
) -> PolicyComparison:
    """Each approval decided by a person since `since` (ISO, Baton's form) against `decide`'s outcome
    (None: the policy has no decision for it), grouped by what would change."""
    allowed_denied: list[ChangedCall] = []
    denied_approved: list[ChangedCall] = []
    asked: dict[tuple[str, str | None], list[ChangedCall]] = {}
    versions: set[str] = set()
    compared = unchanged = not_by_person = undecided = 0
    for approval in approvals:
        if (since is not None and approval.created_at < since) or approval.decision is None:
            continue
        if approval.decision.outcome != "answered":
            not_by_person += 1
            continue
        decision = decide(approval)
        if decision is None:
            undecided += 1
            continue
        compared += 1
        versions.add(decision.policy_version)
        call = _changed(approval, decision)
        if decision.outcome == "allow" and call.person == "denied":
            allowed_denied.append(call)
        elif decision.outcome == "deny" and call.person == "approved":
            denied_approved.append(call)
        elif decision.outcome == "ask":
            asked.setdefault((call.tool, call.rule), []).append(call)
        else:
            unchanged += 1
    always: list[AskedGroup] = []
    for (tool, rule), calls in sorted(asked.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        if all(c.person == "approved" for c in calls):
            always.append(AskedGroup(tool=tool, rule=rule, count=len(calls), calls=calls))
        else:
            unchanged += len(calls)
    return PolicyComparison(
        since=since,
        policy_versions=sorted(versions),
        compared=compared,
        allowed_that_a_person_denied=allowed_denied,
        denied_that_a_person_approved=denied_approved,
        asked_that_was_always_approved=always,
        unchanged=unchanged,
        not_by_person=not_by_person,
        without_policy_decision=undecided,
    )


def backtest(policy: Policy, approvals: Iterable[DecidedToolApproval], *, since: str | None = None) -> PolicyComparison:
    """`baton policy backtest`: every decided call replayed under `policy`."""
    return compare(approvals, lambda a: policy.decide(query_of(a)), since=since)


def shadow_decisions(records: Iterable[RecordedEvent]) -> dict[str, PolicyDecision]:
    """The shadow decision recorded for each tool approval (its latest), from a run's events."""
    found: dict[str, PolicyDecision] = {}
    for record in records:
        data = record.data
        if record.type != EventType.POLICY_DECIDED.value or data.get("mode") != "shadow":
            continue
        if data.get("action") != "call_tool" or not data.get("interaction_id"):
            continue
        found[str(data["interaction_id"])] = PolicyDecision.model_validate(
            {k: data.get(k) for k in ("outcome", "rule", "reason", "policy_version", "mode")}
        )
    return found


def _changed(approval: DecidedToolApproval, decision: PolicyDecision) -> ChangedCall:
    decided = approval.decision
    person: PersonDecision = "denied" if decided is not None and decided.decision == "deny" else "approved"
    return ChangedCall(
        run_id=approval.run_id,
        interaction_id=approval.interaction_id,
        tool=approval.tool,
        arguments=summarize(approval.arguments),
        person=person,
        decided_by=decided.decided_by if decided is not None else None,
        policy=decision.outcome,
        rule=decision.rule,
        reason=decision.reason,
    )
