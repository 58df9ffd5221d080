"""Quorum on an interrupt (`approval` on its spec), as `baton/services/pause_answers.py` is for a pause.

Each resume is one operator's approval, each cancel a rejection (`baton/services/approvals.py`: 403 for
the requester or a non-approver, one vote per operator). The vote that meets the quorum settles the
interrupt with that approval's value (the rejection rule: cancels it) in one write guarded by the tally,
then releases (or fails) its waiter: exactly once under any concurrency. A vote after the decision is a
409 (`InterruptService` raises it, naming the winner). If the deciding voter dies in between, the
reconciler settles it (`settle`, from `baton/services/approvals.py` `settle_met_quorums`). The events of a resume and a
cancel are built here once, for one person's and for a quorum's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from baton.errors import ConflictError
from baton.events import InterruptCancelled, InterruptResumed
from baton.models import InterruptRequest, status_of
from baton.ports import GuardFailedError
from baton.services.answer_outcomes import SendFailedError
from baton.services.approvals import ApprovalService

if TYPE_CHECKING:
    from baton.contracts import ApprovalView
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.events import EventPayload
    from baton.models import Interaction
    from baton.services.approvals import Ballot, Voter
    from baton.services.core import Core


def resumed_event(i: Interaction, value: Any, edits: list[str], by: str | None) -> InterruptResumed:
    return InterruptResumed(interaction_id=i.interaction_id, node=i.request.node, input=value, state_edits=edits, by=by)


def cancelled_event(i: Interaction, reason: str | None, by: str | None) -> InterruptCancelled:
    return InterruptCancelled(interaction_id=i.interaction_id, node=i.request.node, reason=reason, by=by)


class Settles(Protocol):
    """What a quorum's decision needs of the interrupt service."""

    core: Core

    def load(self, interrupt_id: str) -> Interaction: ...

    def deliver(self, settled: Interaction) -> bool:
        """Release (answered) or fail (cancelled) the waiter, and the session's status: True if sent."""
        ...


@dataclass(frozen=True)
class Counted:
    """A vote counted: the interrupt after it, the count, whether this vote's decision released (or
    failed) the waiter, whether that send is pending (stored: the reconciler sends it), and whether the
    vote came after the decision (not counted)."""

    current: Interaction
    approval: ApprovalView
    released: bool
    pending: bool
    closed: bool


class InterruptQuorum:
    def __init__(self, interrupts: Settles) -> None:
        self.interrupts = interrupts
        self.core = interrupts.core
        self.approvals = ApprovalService(interrupts.core)

    def vote(self, i: Interaction, policy: ApprovalPolicy, text: str, voter: Voter, vote: Vote) -> Counted:
        requested_by = i.request_as(InterruptRequest).requested_by
        ballot = self.approvals.cast(i, policy, text, voter, requested_by=requested_by, vote=vote)
        try:
            released, pending = (self._decide(i.interaction_id, policy, ballot) if ballot.decision else False), False
        except SendFailedError:  # the decision is stored: the reconciler sends it
            released, pending = False, True
        approval = ballot.view(policy)
        current = self.interrupts.load(i.interaction_id)
        return Counted(current, approval, released, pending, closed=ballot.outcome == "closed")

    def settle(self, i: Interaction) -> bool:
        """A pending quorum interrupt whose stored tally is met (its decider died before the release):
        settled as that vote would have."""
        policy = i.request_as(InterruptRequest).approval
        ballot = self.approvals.standing(i, policy) if policy is not None else None
        if policy is None or ballot is None or ballot.decision is None:
            return False
        self._decide(i.interaction_id, policy, ballot)
        return self.interrupts.load(i.interaction_id).state.status != "pending"

    def _decide(self, interrupt_id: str, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Settle a quorum interrupt whose tally is met (guarded by it; a claim in between: read again).
        True if this call released (or failed) the waiter."""
        core = self.core
        for _attempt in range(3):
            i = self.interrupts.load(interrupt_id)
            if i.state.status != "pending":
                return False
            decided = self.approvals.decided(i, policy, ballot)
            first: EventPayload
            if ballot.decision == "approved":
                approving = [v for v in ballot.votes if v.vote == "approve"]
                answer = json.loads(approving[policy.approvals - 1].answer)
                new = status_of(i.state, "answered", answer=answer, by=decided.by, at=core.now(), reason=decided.reason)
                first = resumed_event(i, answer["input"], answer["state_edits"], decided.by)
            else:
                new = status_of(i.state, "cancelled", by=decided.by, at=core.now(), reason=decided.reason)
                first = cancelled_event(i, decided.reason, decided.by)
            records = [core.new_event(i.run_id, first), core.new_event(i.run_id, decided.event)]
            try:
                settled = core.store.transition_interaction(i, new, with_records=records, guards=[decided.guard])
            except (ConflictError, GuardFailedError):
                continue
            return self.interrupts.deliver(settled)
        return False
