"""A run's events: a closed set of types, each with its own payload model.

Services build a payload (`RunPaused(gate=..., kind=...)`) and hand it to `Core.record`; the stored and
wire form is unchanged: `Event{event_id, run_id, type, at, data}` where `data` holds exactly the fields
the service set (unset optional fields are left out, as before). `Event.payload()` reads `data` back as
its model. The decisions among them (`baton/domain/audit.py` DECISION_TYPES) are also chained per
run, tamper-evident. Over 400 lines on purpose: the set is closed, so every type, its payload model and
its row in the table below live in this one file, where a reader (and `PAYLOAD_OF_TYPE`) finds them all.

| type                    | payload                 | recorded when                                              |
|-------------------------|-------------------------|------------------------------------------------------------|
| run_started             | RunStarted              | a hosted run starts, or an external run's first request    |
| run_paused              | RunPaused               | a gate parks (ask, interrupt, review, the await tool)      |
| run_resumed             | RunResumed              | a parked gate is released                                  |
| run_succeeded / run_failed / run_timed_out / run_aborted | RunEnded | a hosted run's execution ended    |
| human_input_requested   | HumanInputRequested     | a question, ask, interrupt or review asks an operator      |
| interaction_answered    | InteractionAnswered     | a question, ask or review is answered                      |
| human_input_timed_out   | HumanInputTimedOut      | an ask gate's timeout (its Catch)                          |
| await_started           | AwaitStarted            | an await gate (or the await tool) starts waiting           |
| await_released          | AwaitReleased           | everything an await waits for is answered                  |
| await_timed_out         | AwaitTimedOut           | an await gate (or tool-form await) timed out               |
| interrupt_resumed       | InterruptResumed        | an operator resumed an interrupt                           |
| interrupt_claimed       | InterruptClaimed        | an operator claimed an interrupt (took over: `previous`)   |
| interrupt_claim_renewed | InterruptClaimRenewed   | the claim's holder extended its lease                      |
| interrupt_claim_released | InterruptClaimReleased | the claim's holder let it go                               |
| interrupt_reassigned    | InterruptReassigned     | an operator gave the claim to a named operator             |
| interrupt_cancelled     | InterruptCancelled      | an operator cancelled an interrupt                         |
| interrupt_timed_out     | InterruptTimedOut       | an interrupt's deadline passed                             |
| review_started          | ReviewStarted           | a review gate read its diff                                |
| review_refused          | ReviewRefused           | a review gate refused its configuration                    |
| review_turn             | ReviewTurnRecorded      | the companion or the operator spoke                        |
| review_verdict          | ReviewVerdict           | the companion gave a verdict                               |
| review_auto_merge       | ReviewAutoMerge         | a verdict merges without an operator (agent_verdict_ok)    |
| review_merge_started    | ReviewMergeStarted      | the merge build started                                    |
| review_merged           | ReviewMerged            | the merge landed (or had nothing to do)                    |
| review_merge_rejected   | ReviewMergeRejected     | the merge was refused; the review re-opens                 |
| review_merge_timed_out  | ReviewMergeTimedOut     | the merge build timed out                                  |
| approval_recorded       | ApprovalRecorded        | one operator's vote on a quorum pause was counted          |
| quorum_reached          | QuorumReached           | a quorum pause got its approvals and was released          |
| approval_rejected       | ApprovalRejected        | a quorum pause met its rejection rule and was released so  |
| reminder_sent           | ReminderSent            | a pause's ladder reminded its channels (baton.domain.ladder)|
| escalated               | Escalated               | a pause's ladder announced it to its escalate_to channels  |
| timed_out_default       | TimedOutDefault         | nobody answered: the pause's declared default was taken     |
| tool_grant_revoked      | ToolGrantRevoked        | an operator revoked a remembered "always allow" grant       |
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from baton.contracts.policy import PolicyDecision


class EventType(StrEnum):
    RUN_STARTED = "run_started"
    RUN_PAUSED = "run_paused"
    RUN_RESUMED = "run_resumed"
    RUN_SUCCEEDED = "run_succeeded"
    RUN_FAILED = "run_failed"
    RUN_TIMED_OUT = "run_timed_out"
    RUN_ABORTED = "run_aborted"
    HUMAN_INPUT_REQUESTED = "human_input_requested"
    INTERACTION_ANSWERED = "interaction_answered"
    HUMAN_INPUT_TIMED_OUT = "human_input_timed_out"
    ANSWER_LATE = "answer_late"
    AWAIT_STARTED = "await_started"
    AWAIT_RELEASED = "await_released"
    AWAIT_TIMED_OUT = "await_timed_out"
    INTERRUPT_RESUMED = "interrupt_resumed"
    INTERRUPT_CLAIMED = "interrupt_claimed"
    INTERRUPT_CLAIM_RENEWED = "interrupt_claim_renewed"
    INTERRUPT_CLAIM_RELEASED = "interrupt_claim_released"
    INTERRUPT_REASSIGNED = "interrupt_reassigned"
    INTERRUPT_CANCELLED = "interrupt_cancelled"
    INTERRUPT_TIMED_OUT = "interrupt_timed_out"
    REVIEW_STARTED = "review_started"
    REVIEW_REFUSED = "review_refused"
    REVIEW_TURN = "review_turn"
    REVIEW_VERDICT = "review_verdict"
    REVIEW_AUTO_MERGE = "review_auto_merge"
    REVIEW_MERGE_STARTED = "review_merge_started"
    REVIEW_MERGED = "review_merged"
    REVIEW_MERGE_REJECTED = "review_merge_rejected"
    REVIEW_MERGE_TIMED_OUT = "review_merge_timed_out"
    APPROVAL_RECORDED = "approval_recorded"
    QUORUM_REACHED = "quorum_reached"
    APPROVAL_REJECTED = "approval_rejected"
    REMINDER_SENT = "reminder_sent"
    ESCALATED = "escalated"
    TIMED_OUT_DEFAULT = "timed_out_default"
    TOOL_GRANT_REVOKED = "tool_grant_revoked"
    POLICY_DECIDED = "policy_decided"


class EventPayload(BaseModel):
    """One event type's `data`. `event_type` names the type; `data()` is the stored form."""

    event_type: ClassVar[EventType]

    # Built on first use: a cold start pays only for the events its request records.
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True, defer_build=True)

    def data(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_unset=True)


# ---- runs -----------------------------------------------------------------------------------------
class RunStarted(EventPayload):
    event_type = EventType.RUN_STARTED
    hosted: bool
    workflow: str | None = None
    by: str | None = None


class RunPaused(EventPayload):
    event_type = EventType.RUN_PAUSED
    gate: str
    kind: str
    pending: list[str] | None = None


class RunResumed(EventPayload):
    event_type = EventType.RUN_RESUMED
    gate: str
    kind: str


class RunEnded(EventPayload):
    """A hosted run's execution ended; `of_status` picks the type from the run's final status."""

    event_type = EventType.RUN_FAILED
    reason: str | None = None

    @staticmethod
    def of_status(status: str, reason: str | None) -> RunEnded:
        return _RUN_ENDED[status](reason=reason)


class RunSucceeded(RunEnded):
    event_type = EventType.RUN_SUCCEEDED


class RunFailed(RunEnded):
    event_type = EventType.RUN_FAILED


class RunTimedOut(RunEnded):
    event_type = EventType.RUN_TIMED_OUT


class RunAborted(RunEnded):
    event_type = EventType.RUN_ABORTED


_RUN_ENDED: dict[str, type[RunEnded]] = {
    "succeeded": RunSucceeded,
    "failed": RunFailed,
    "timed_out": RunTimedOut,
    "aborted": RunAborted,
}


# ---- asking and answering -------------------------------------------------------------------------
class HumanInputRequested(EventPayload):
    """Any kind asks an operator; each kind sets the fields it has."""

    event_type = EventType.HUMAN_INPUT_REQUESTED
    interaction_id: str
    node: str
    kind: str
    prompt: str
    options: list[str] | None = None
    allow_free_text: bool | None = None
    is_async: bool | None = Field(default=None, alias="async")
    timeout_seconds: int | None = None
    workflow_id: str | None = None
    timeout_ms: int | None = None
    hosted: bool | None = None
    by: str | None = None
    review_url: str | None = None
    warnings: list[str] | None = None
    turns_used: int | None = None
    max_turns: int | None = None


class InteractionAnswered(EventPayload):
    event_type = EventType.INTERACTION_ANSWERED
    interaction_id: str
    node: str
    kind: str | None = None
    answer: Any = None
    answer_text: str | None = None
    by: str | None = None
    is_async: bool | None = Field(default=None, alias="async")
    via: str | None = None  # the channel, when not the API: "push" (a notification's one-tap answer)
    # set only when the approver confirmed with a passkey ("webauthn"; baton/services/passkeys.py)
    second_factor: str | None = None


class HumanInputTimedOut(EventPayload):
    event_type = EventType.HUMAN_INPUT_TIMED_OUT
    node: str
    unanswered: list[str]
    cause: str


class AnswerLate(EventPayload):
    """An answer that came after its gate's deadline: kept here, never delivered (the caller got a 410)."""

    event_type = EventType.ANSWER_LATE
    interaction_id: str
    node: str
    kind: str
    answer: Any = None
    by: str | None = None
    deadline: str


# ---- awaits ---------------------------------------------------------------------------------------
class UnansweredQuestion(BaseModel):
    interaction_id: str
    node: str
    question: str


class AwaitStarted(EventPayload):
    event_type = EventType.AWAIT_STARTED
    gate: str
    interaction_id: str | None = None  # the tool form's await interaction
    from_node: str | None = Field(default=None, alias="from")
    timeout_seconds: int
    pending: list[str]
    # Why this await will release with no answers (C242: its `from` names a node that asked nothing).
    warning: str | None = None


class AwaitReleased(EventPayload):
    event_type = EventType.AWAIT_RELEASED
    gate: str
    interaction_id: str | None = None
    answers: int
    from_node: str | None = Field(default=None, alias="from")


class AwaitTimedOut(EventPayload):
    event_type = EventType.AWAIT_TIMED_OUT
    gate: str
    interaction_id: str | None = None
    from_node: str | None = Field(default=None, alias="from")
    unanswered: list[UnansweredQuestion]
    cause: str | None = None


# ---- interrupts -----------------------------------------------------------------------------------
class InterruptResumed(EventPayload):
    event_type = EventType.INTERRUPT_RESUMED
    interaction_id: str
    node: str
    input: Any = None
    state_edits: list[str]
    by: str


class InterruptClaimed(EventPayload):
    event_type = EventType.INTERRUPT_CLAIMED
    interaction_id: str
    node: str
    by: str
    previous: str | None = None
    reason: str | None = None  # why a held claim was taken over (force)
    lease_expires_at: str | None = None


class InterruptClaimRenewed(EventPayload):
    event_type = EventType.INTERRUPT_CLAIM_RENEWED
    interaction_id: str
    node: str
    by: str
    lease_expires_at: str


class InterruptClaimReleased(EventPayload):
    event_type = EventType.INTERRUPT_CLAIM_RELEASED
    interaction_id: str
    node: str
    by: str


class InterruptReassigned(EventPayload):
    event_type = EventType.INTERRUPT_REASSIGNED
    interaction_id: str
    node: str
    by: str
    to: str
    previous: str | None = None
    reason: str | None = None
    lease_expires_at: str
    # Given to an operator who is away: `to` is their delegate, `on_behalf_of` them, `note` how it reads
    # ("for alice (away until ...)"; baton.services.away). Unset otherwise.
    on_behalf_of: str | None = None
    note: str | None = None


class InterruptCancelled(EventPayload):
    event_type = EventType.INTERRUPT_CANCELLED
    interaction_id: str
    node: str
    reason: str
    by: str


class InterruptTimedOut(EventPayload):
    event_type = EventType.INTERRUPT_TIMED_OUT
    interaction_id: str
    node: str
    timeout_ms: int | None = None


# ---- review gates ---------------------------------------------------------------------------------
class ReviewStarted(EventPayload):
    event_type = EventType.REVIEW_STARTED
    gate: str
    interaction_id: str
    diff: dict[str, Any] | None = None


class ReviewRefused(EventPayload):
    event_type = EventType.REVIEW_REFUSED
    gate: str
    cause: str


class ReviewTurnRecorded(EventPayload):
    event_type = EventType.REVIEW_TURN
    gate: str
    interaction_id: str
    n: int
    role: str
    text: str
    model: str | None = None
    by: str | None = None
    reviewed_head: str | None = None  # a companion turn: the run-branch commit whose diff it read


class ReviewVerdict(EventPayload):
    """The verdict's own fields ride along: their shape is the gate's `verdict_schema`."""

    event_type = EventType.REVIEW_VERDICT
    gate: str
    interaction_id: str
    n: int
    warnings: list[str]

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True, defer_build=True)


class ReviewAutoMerge(EventPayload):
    event_type = EventType.REVIEW_AUTO_MERGE
    gate: str
    interaction_id: str
    confidence: Any = None
    threshold: float
    reviewed_head: str | None = None
    diff_digest: str | None = None


class ReviewMergeStarted(EventPayload):
    event_type = EventType.REVIEW_MERGE_STARTED
    gate: str
    interaction_id: str
    action: str | None = None
    by: str | None = None
    strategy: str | None = None
    into: str | None = None
    run_branch: str | None = None
    reviewed_head: str | None = None  # the commit the merge takes (the approval pinned it)
    handle: Any = None


class ReviewMerged(EventPayload):
    event_type = EventType.REVIEW_MERGED
    gate: str
    by: str | None = None
    interaction_id: str | None = None
    action: str | None = None
    answered_by: str | None = None
    verdict: dict[str, Any] | None = None
    merge_status: str | None = None
    final_commit: str | None = None
    final_branch: str | None = None
    merged_into: str | None = None
    strategy: str | None = None
    reason: str | None = None
    reviewed_head: str | None = None
    diff_digest: str | None = None


class ReviewMergeRejected(EventPayload):
    event_type = EventType.REVIEW_MERGE_REJECTED
    gate: str
    reject_code: str | None = None
    reason: str
    conflicting_files: list[str]
    dirty_files: list[str]
    action: str | None = None
    reviewed_head: str | None = None


class ReviewMergeTimedOut(EventPayload):
    event_type = EventType.REVIEW_MERGE_TIMED_OUT
    gate: str
    cause: str


class ApprovalRecorded(EventPayload):
    """A vote on a quorum pause (baton.domain.approval), written in the vote's own transaction."""

    event_type = EventType.APPROVAL_RECORDED
    interaction_id: str
    node: str
    by: str
    vote: str
    answer: str
    needed: int
    # A delegate's vote in the seat of a named approver who is away (baton.services.away): whose seat it
    # fills, and how the substitution reads ("for alice (away until ...)"). Unset otherwise.
    on_behalf_of: str | None = None
    note: str | None = None


class QuorumReached(EventPayload):
    event_type = EventType.QUORUM_REACHED
    interaction_id: str
    node: str
    approvers: list[str]
    needed: int


class ApprovalRejected(EventPayload):
    event_type = EventType.APPROVAL_REJECTED
    interaction_id: str
    node: str
    rejected_by: list[str]
    rule: str


# ---- deadline ladders (baton.domain.ladder, baton.services.deadlines) -------------------------------
class ReminderSent(EventPayload):
    event_type = EventType.REMINDER_SENT
    gate: str
    interaction_ids: list[str]
    channels: list[str]


class Escalated(EventPayload):
    event_type = EventType.ESCALATED
    gate: str
    interaction_ids: list[str]
    channels: list[str]
    # The ladder's `escalate_to_operators` as addressed: an away operator's delegate in their place, and
    # each substitution as it reads ("for alice (away until ...)"). Unset without named operators.
    operators: list[str] | None = None
    substitutions: list[str] | None = None


class TimedOutDefault(EventPayload):
    """Nobody answered by the deadline: the declared default was delivered. Never a person's answer."""

    event_type = EventType.TIMED_OUT_DEFAULT
    interaction_id: str
    node: str
    kind: str
    default: Any = None
    deadline: str


class ToolGrantRevoked(EventPayload):
    """A remembered grant (the approve that carried it is its id) no longer answers later calls."""

    event_type = EventType.TOOL_GRANT_REVOKED
    grant_id: str
    tool: str
    by: str


class PolicyDecided(EventPayload):
    """A policy decided a call (issue 31): in `enforce` mode its outcome stands (`applied`); in `shadow`
    mode it is what the policy would have decided, and a person decides as before."""

    event_type = EventType.POLICY_DECIDED
    interaction_id: str | None = None  # the approval it answered or opened (none: denied or allowed at once)
    action: str  # call_tool | pass_gate
    target: str  # the tool, or the gate's action
    digest: str | None = None  # the call's digest (tool approvals)
    outcome: str  # allow | deny | ask
    rule: str | None = None  # the @id of the deciding rule (none: no rule matched)
    reason: str | None = None
    policy_version: str
    mode: str  # shadow | enforce
    applied: bool

    @classmethod
    def of(
        cls,
        decided: PolicyDecision,
        *,
        action: str,
        target: str,
        interaction_id: str,
        applied: bool,
        digest: str | None = None,
    ) -> PolicyDecided:
        """The decision-log record of `decided` on one tool call or gate (a gate's has no digest field at
        all: a record is stored with the fields that were set)."""
        call = {"digest": digest} if digest is not None else {}
        return cls(
            interaction_id=interaction_id,
            action=action,
            target=target,
            **call,
            outcome=decided.outcome,
            rule=decided.rule,
            reason=decided.reason,
            policy_version=decided.policy_version,
            mode=decided.mode,
            applied=applied,
        )


PAYLOAD_OF_TYPE: dict[EventType, type[EventPayload]] = {
    model.event_type: model
    for model in (
        RunStarted,
        RunPaused,
        RunResumed,
        RunSucceeded,
        RunFailed,
        RunTimedOut,
        RunAborted,
        HumanInputRequested,
        InteractionAnswered,
        HumanInputTimedOut,
        AnswerLate,
        AwaitStarted,
        AwaitReleased,
        AwaitTimedOut,
        InterruptResumed,
        InterruptClaimed,
        InterruptClaimRenewed,
        InterruptClaimReleased,
        InterruptReassigned,
        InterruptCancelled,
        InterruptTimedOut,
        ReviewStarted,
        ReviewRefused,
        ReviewTurnRecorded,
        ReviewVerdict,
        ReviewAutoMerge,
        ReviewMergeStarted,
        ReviewMerged,
        ReviewMergeRejected,
        ReviewMergeTimedOut,
        ApprovalRecorded,
        QuorumReached,
        ApprovalRejected,
        ReminderSent,
        Escalated,
        TimedOutDefault,
        ToolGrantRevoked,
        PolicyDecided,
    )
}
