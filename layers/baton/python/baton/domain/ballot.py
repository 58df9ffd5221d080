"""A quorum vote's arithmetic: who votes (`Voter`), the vote an answer records (`recorded_vote`), what a
vote did (`Ballot`), the count shown (`count_view`) and how a met tally releases its pause (`release_of`).
Pure (no ports); the writes are `baton.services.approvals`'. Apart from `baton.domain.approval` because a
ballot's view and a release's guard name the contracts and the ports, which import that module."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baton.contracts.questions import ApprovalView
from baton.domain.approval import Approval, vote_of
from baton.errors import ValidationFailedError
from baton.events import ApprovalRecorded, ApprovalRejected, QuorumReached
from baton.models import status_of
from baton.ports import QuorumMet

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.contracts.away import Away
    from baton.domain.approval import ApprovalPolicy, ApprovalTally, Decision, Vote, VoteOutcome
    from baton.events import EventPayload
    from baton.models import Interaction, InteractionStatus

Groups = frozenset[str]  # the voter's approver groups (baton/api/auth.py Caller.groups)
NO_GROUPS: Groups = frozenset()


def vote_text(answer: Any) -> str:
    """How a structured answer is kept on its vote: compact JSON, read back by `Ballot.deciding_answer`."""
    return json.dumps(answer, sort_keys=True, separators=(",", ":"))


def count_view(policy: ApprovalPolicy, votes: Sequence[Approval], **shown: Any) -> ApprovalView:
    """A pause's count and who voted on each side; `shown`: what the view adds, or counts otherwise."""
    approved = [v.operator for v in votes if v.vote == "approve"]
    rejected = [v.operator for v in votes if v.vote == "reject"]
    counts = {"approvals": len(approved), "rejections": len(rejected)} | shown
    return ApprovalView(needed=policy.approvals, approved_by=approved, rejected_by=rejected, **counts)


@dataclass(frozen=True)
class Voter:
    operator: str
    groups: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Ballot:
    """What one vote did, and the pause's votes after it."""

    outcome: VoteOutcome
    vote: Vote
    votes: list[Approval]
    tally: ApprovalTally
    decision: Decision | None

    def view(self, policy: ApprovalPolicy) -> ApprovalView:
        """The count and who voted, as a vote's answer shows them (the count: the tally's, as written)."""
        return count_view(
            policy,
            self.votes,
            approvals=self.tally.approvals,
            rejections=self.tally.rejections,
            counted=self.outcome == "recorded",
            already_counted=self.outcome == "already_counted",
            decision=self.decision,
        )

    def deciding_answer(self, default: Any = None) -> Any:
        """The structured answer (`vote_text`) of the deciding side's last vote; `default` when it has none."""
        side = "approve" if self.decision == "approved" else "reject"
        deciding = [v for v in self.votes if v.vote == side]
        return json.loads(deciding[-1].answer) if deciding else default


@dataclass(frozen=True)
class Decided:
    """How a met tally releases its pause: the transition's answer, by, reason, guard and event."""

    answer: str
    by: str
    reason: str
    guard: QuorumMet
    event: EventPayload

    def answered(self, state: InteractionStatus, answer: Any, at: str) -> InteractionStatus:
        """The pause's state once this release answers it with `answer` (by the deciders, saying why)."""
        return status_of(state, "answered", answer=answer, by=self.by, at=at, reason=self.reason)


def recorded_vote(
    pause: Interaction, policy: ApprovalPolicy, text: Any, side: Vote | None, *, by: str, seat: Away | None, at: str
) -> tuple[Approval, ApprovalRecorded]:
    """`by`'s vote as stored and its event: `side` when the action says it (its text then kept as the vote's),
    else the one `text` casts (422 when none). In an away approver's `seat`, the vote fills that seat."""
    cast = (side, str(text)) if side is not None else vote_of(policy, pause.request.options, text)
    if cast is None:
        expected = pause.request.options or ["approve", "reject"]
        raise ValidationFailedError(
            f"this pause needs {policy.approvals} approval(s): answer one of {expected}",
            details={"path": "answer", "options": expected},
        )
    vote, delivered = cast
    record = Approval(
        run_id=pause.run_id,
        interaction_id=pause.interaction_id,
        operator=seat.operator if seat is not None else by,  # a delegate fills the seat once
        vote=vote,
        answer=delivered,
        at=at,
    )
    stood_in = {"on_behalf_of": seat.operator, "note": seat.for_whom()} if seat is not None else {}
    return record, ApprovalRecorded(
        interaction_id=pause.interaction_id,
        node=pause.request.node,
        by=by,
        vote=vote,
        answer=delivered,
        needed=policy.approvals if vote == "approve" else policy.rejections_needed,
        **stood_in,
    )


def release_of(pause: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> Decided:
    """The release of a pause whose tally met `ballot.decision`."""
    if ballot.decision == "approved":
        approvers = [v.operator for v in ballot.votes if v.vote == "approve"][: policy.approvals]
        options = pause.request.options
        answer = (policy.approve_option or options[0]) if options else "approve"
        return Decided(
            answer=answer,
            by=", ".join(approvers),
            reason=f"approved by {len(approvers)} of {policy.approvals} needed",
            guard=QuorumMet(pause.run_id, pause.interaction_id, approvals=policy.approvals),
            event=QuorumReached(
                interaction_id=pause.interaction_id,
                node=pause.request.node,
                approvers=approvers,
                needed=policy.approvals,
            ),
        )
    rejections = [v for v in ballot.votes if v.vote == "reject"][: policy.rejections_needed]
    rejecters = [v.operator for v in rejections]
    return Decided(
        answer=rejections[0].answer if rejections else "reject",
        by=", ".join(rejecters),
        reason=f"rejected ({policy.rejection} rule) by {', '.join(rejecters)}",
        guard=QuorumMet(pause.run_id, pause.interaction_id, rejections=policy.rejections_needed),
        event=ApprovalRejected(
            interaction_id=pause.interaction_id,
            node=pause.request.node,
            rejected_by=rejecters,
            rule=policy.rejection,
        ),
    )
