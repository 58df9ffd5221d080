"""Quorum and separation of duties: the pure rules of a pause that needs more than one person.

A pause (today: an async question) may declare an `ApprovalPolicy`:

- `approvals: N` (>= 1; 1 is the first-writer-wins pause of before, with the requester refused);
- `approvers`: operator names and/or `group:<name>`; empty = any operator except the requester;
- `rejection`: `any` (one rejection rejects) or `majority` (rejections reach a majority of the named
  operators when `approvers` names only operators, else as many rejections as approvals needed);
- `approve_option`: with options, the option that approves (default the first); every other option
  rejects. Without options the answers are `approve` or `reject` (any case); other text is a 422.

Each vote is its own record keyed by (interaction, operator): a second vote of the same operator is
not counted again. The store counts the votes on a tally item in the same transaction as the vote,
conditioned on the tally being below both thresholds, so no more than N approvals (or R rejections)
are ever recorded; the release is the interaction's own conditional transition, guarded by the
tally having met its threshold (`baton/ports.py QuorumMet`), so it happens exactly once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from baton.domain.ladder import Ladder
from baton.errors import ValidationFailedError

if TYPE_CHECKING:
    from baton.contracts.policy import PolicyDecision

# Who answered when no person did: a policy rule (`policy:<rule>`) or a remembered grant (`grant:<id>`).
RULE_ANSWERER_PREFIXES = ("policy:", "grant:")


def answered_by_rule(answered_by: str | None) -> bool:
    """An answer a rule or a grant gave at once: nobody waited, so it counts in no answer time."""
    return answered_by is not None and answered_by.startswith(RULE_ANSWERER_PREFIXES)


log = logging.getLogger("baton")

GROUP_PREFIX = "group:"
MAX_APPROVALS = 20
MAX_APPROVERS = 50
Vote = Literal["approve", "reject"]
Decision = Literal["approved", "rejected"]
REQUESTER_CANNOT_APPROVE = "requester_cannot_approve"
NOT_AN_APPROVER = "not_an_approver"
REFUSALS = {  # each refusal's 403 message
    REQUESTER_CANNOT_APPROVE: "{who} requested this pause and cannot approve it (separation of duties)",
    NOT_AN_APPROVER: "{who} is not among this pause's approvers {approvers}",
}


class ApprovalPolicy(BaseModel):
    """How many people must approve a pause, who may, and what rejects it."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    approvals: int = Field(default=1, ge=1, le=MAX_APPROVALS, description="Approvals needed to release the pause.")
    approvers: list[str] = Field(
        default_factory=list,
        max_length=MAX_APPROVERS,
        description="Operator names and/or `group:<name>`; empty = any operator but the requester.",
    )
    rejection: Literal["any", "majority"] = Field(
        default="any",
        description="`any`: one rejection rejects; `majority`: rejections reach a majority of the named "
        "operators (only names listed), else as many rejections as approvals needed.",
    )
    approve_option: str | None = Field(
        default=None, description="With options: the option that approves (default the first); others reject."
    )

    @model_validator(mode="after")
    def _reachable(self) -> ApprovalPolicy:
        problem = policy_problem(self)
        if problem:
            raise ValueError(problem)
        return self

    def check_options(self, options: list[str] | None) -> None:
        """422 when `approve_option` names no option of the pause it is declared on."""
        if self.approve_option is not None and self.approve_option not in (options or []):
            raise ValidationFailedError(
                f"approval.approve_option {self.approve_option!r} is not one of the options",
                details={"path": "approval.approve_option", "options": options},
            )

    @property
    def operators(self) -> list[str]:
        return [a for a in self.approvers if not a.startswith(GROUP_PREFIX)]

    @property
    def groups(self) -> list[str]:
        return [a.removeprefix(GROUP_PREFIX) for a in self.approvers if a.startswith(GROUP_PREFIX)]

    @property
    def rejections_needed(self) -> int:
        """How many rejections end the pause as rejected."""
        if self.rejection == "any":
            return 1
        if self.approvers and not self.groups:
            return len(self.operators) // 2 + 1
        return self.approvals


def policy_problem(policy: ApprovalPolicy) -> str | None:
    """Why a policy can never be met (None when it can): shared by the API's model and `baton check`."""
    if any(not a.strip() or a == GROUP_PREFIX for a in policy.approvers):
        return "approvers must be operator names or group:<name>, none empty"
    if len(set(policy.approvers)) != len(policy.approvers):
        return "approvers must be distinct"
    if policy.approvers and not policy.groups and policy.approvals > len(policy.operators):
        return (
            f"approvals: {policy.approvals} can never be met: only {len(policy.operators)} named approver(s) "
            f"{policy.operators}"
        )
    return None


def vote_of(policy: ApprovalPolicy, options: list[str] | None, answer: object) -> tuple[Vote, str] | None:
    """The vote an answer casts and the answer as it is delivered, or None when it casts none."""
    if options:
        if not isinstance(answer, str) or answer not in options:
            return None
        approving = policy.approve_option or options[0]
        return ("approve" if answer == approving else "reject"), answer
    if isinstance(answer, str) and answer.strip().lower() in ("approve", "reject"):
        word = answer.strip().lower()
        return ("approve" if word == "approve" else "reject"), word
    return None


def refusal(policy: ApprovalPolicy, *, operator: str, groups: frozenset[str], requested_by: str | None) -> str | None:
    """Why `operator` may not vote on this pause (a 403's reason), or None when they may."""
    if requested_by is not None and operator == requested_by:
        return REQUESTER_CANNOT_APPROVE
    if not policy.approvers:
        return None
    if operator in policy.operators or groups & set(policy.groups):
        return None
    return NOT_AN_APPROVER


class Approval(BaseModel):
    """One operator's vote on one pause (SK=APV#<interaction>#<operator>): written once, never updated."""

    model_config = ConfigDict(defer_build=True)

    run_id: str
    interaction_id: str
    operator: str
    vote: Vote
    answer: str
    at: str


class ApprovalTally(BaseModel):
    """The counts of a pause's votes (SK=APT#<interaction>), moved only with a vote, in its transaction."""

    model_config = ConfigDict(defer_build=True)

    approvals: int = 0
    rejections: int = 0

    def decision(self, policy: ApprovalPolicy) -> Decision | None:
        if self.approvals >= policy.approvals:
            return "approved"
        if self.rejections >= policy.rejections_needed:
            return "rejected"
        return None


VoteOutcome = Literal["recorded", "already_counted", "closed", "standing"]  # standing: the votes as stored


class MetTally(BaseModel):
    """A tally that met its threshold while its pause is not yet released (the reconciler's work list)."""

    model_config = ConfigDict(defer_build=True)

    run_id: str
    interaction_id: str


def rule_approval(ruling: PolicyDecision) -> ApprovalPolicy | None:
    """The quorum a policy rule's `@ask` names (None: it names none). A quorum larger than the operators it
    names could never be met: all of them must approve (never fewer people, never others), and it is logged."""
    ask = ruling.ask
    if ask is None or (not ask.approvers and ask.quorum is None):
        return None
    approvers = list(dict.fromkeys(ask.approvers))
    approvals = min(ask.quorum or 1, MAX_APPROVALS)
    named = [a for a in approvers if not a.startswith(GROUP_PREFIX)]
    if approvers and len(named) == len(approvers) and approvals > len(named):
        log.warning(
            "policy rule %s asks for %d approvals of %d operators: all must approve", ruling.rule, approvals, len(named)
        )
        approvals = len(named)
    return ApprovalPolicy(approvals=approvals, approvers=approvers)


def rule_ladder(declared: Ladder, ruling: PolicyDecision, timeout_seconds: int | None) -> Ladder:
    """The pause's ladder with the steps a policy rule's `@ask` names in place of the request's (its
    `on_timeout` stays the request's). A request's step the rule's would overtake, and any step at or after
    the deadline (the shorter one: known only now), is dropped, and logged."""
    ask = ruling.ask
    if ask is None or (ask.remind_after is None and ask.escalate_after is None):
        return declared
    remind = declared.remind_after if ask.remind_after is None else ask.remind_after
    escalate, to = declared.escalate_after, declared.escalate_to
    if ask.escalate_after is not None:
        escalate, to = ask.escalate_after, ask.escalate_to
    if remind is not None and escalate is not None and escalate <= remind:  # the rule's own are in order
        log.warning("policy rule %s: the request's ladder step it would overtake is dropped", ruling.rule)
        remind, escalate, to = (ask.remind_after, None, []) if ask.escalate_after is None else (None, escalate, to)
    if timeout_seconds is not None and remind is not None and remind >= timeout_seconds:
        log.warning(
            "policy rule %s: remind_after %ds is not before the %ds deadline: dropped",
            ruling.rule,
            remind,
            timeout_seconds,
        )
        remind = None
    if timeout_seconds is not None and escalate is not None and escalate >= timeout_seconds:
        log.warning(
            "policy rule %s: escalate_after %ds is not before the %ds deadline: dropped",
            ruling.rule,
            escalate,
            timeout_seconds,
        )
        escalate, to = None, []
    return Ladder(remind_after=remind, escalate_after=escalate, escalate_to=to, on_timeout=declared.on_timeout)


def requester_of(caller: str, *, hosted: bool, started_by: str | None) -> str:
    """Who asked for a quorum pause, and so may not vote on it: a hosted run's starter, else its creator."""
    return started_by if hosted and started_by else caller
