"""Quorum pauses, decided in one place (rules: `baton.domain.approval`, a ballot's arithmetic:
`baton.domain.ballot`; store: `ApprovalStore`; every kind's vote walks `baton.services.decide.vote`).
`cast` refuses the requester and non-approvers (403, nothing written) and records the vote in one
conditional transaction; `settle` writes a met tally's release, guarded by the tally, with the pause's own
new state and event, and delivers it exactly once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from baton.domain.approval import NOT_AN_APPROVER, REFUSALS, refusal
from baton.domain.ballot import Ballot, Voter, count_view, recorded_vote, release_of
from baton.errors import ConflictError, ForbiddenError
from baton.events import InteractionAnswered
from baton.ports import GuardFailedError

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts.away import Away
    from baton.contracts.questions import ApprovalView
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.domain.ballot import Decided
    from baton.events import EventPayload
    from baton.models import Interaction, InteractionStatus
    from baton.services.core import Core

    # A met tally's write, as the pause's kind decides it: its new state and the event of that decision.
    Settled = Callable[[Interaction, Decided], tuple[InteractionStatus, EventPayload]]
    Deliver = Callable[[Interaction], bool]  # sends a settled pause's decision: True if this call delivered it


class Entry(NamedTuple):
    """An answer as cast: the text kept, its side (None: the policy's options decide) and who may not vote."""

    text: Any
    vote: Vote | None
    requested_by: str | None


def approval_view(core: Core, pause: Interaction, policy: ApprovalPolicy) -> ApprovalView:
    """A pause's count and voters as the read views show them (one Query of its votes)."""
    votes = core.store.list_votes(pause.run_id, pause.interaction_id)
    return count_view(policy, votes, approvers=policy.approvers, rejection=policy.rejection)


class ApprovalService:
    def __init__(self, core: Core) -> None:
        self.core = core

    def cast(self, pause: Interaction, policy: ApprovalPolicy, entry: Entry, voter: Voter) -> Ballot:
        """Record `voter`'s vote (`recorded_vote`: an interrupt's resume approves, its cancel rejects), in the
        seat of an away approver who named them their delegate."""
        core = self.core
        text, side, requested_by = entry
        why = refusal(policy, operator=voter.operator, groups=voter.groups, requested_by=requested_by)
        seat = self._delegated_seat(pause, policy, voter.operator, requested_by) if why == NOT_AN_APPROVER else None
        if why is not None and seat is None:
            raise ForbiddenError(
                REFUSALS[why].format(who=voter.operator, approvers=policy.approvers),
                details={"reason": why, "interaction_id": pause.interaction_id, "requested_by": requested_by},
            )
        record, recorded = recorded_vote(pause, policy, text, side, by=voter.operator, seat=seat, at=core.now())
        outcome = core.store.record_vote(
            record,
            event=core.new_event(pause.run_id, recorded),
            approvals_needed=policy.approvals,
            rejections_needed=policy.rejections_needed,
        )
        tally = core.store.get_tally(pause.run_id, pause.interaction_id)
        votes = core.store.list_votes(pause.run_id, pause.interaction_id)
        return Ballot(outcome=outcome, vote=record.vote, votes=votes, tally=tally, decision=tally.decision(policy))

    def _delegated_seat(
        self, pause: Interaction, policy: ApprovalPolicy, voter: str, requested_by: str | None
    ) -> Away | None:
        """The seat of a named approver who is away and named `voter` their delegate: one with no vote yet
        first, else one already filled (a repeat, counted once as any repeat is). Never the requester's seat
        (separation of duties holds through a delegate)."""
        seats = [s for s in policy.operators if s != requested_by]
        if not seats:
            return None
        voted = {v.operator for v in self.core.store.list_votes(pause.run_id, pause.interaction_id)}
        now = self.core.now()
        standing_in = {a.operator: a for a in self.core.store.list_aways() if a.delegate == voter and a.active(now)}
        mine = [standing_in[s] for s in seats if s in standing_in]
        return next((a for a in mine if a.operator not in voted), mine[0] if mine else None)

    def settle(
        self,
        pause: Interaction,
        policy: ApprovalPolicy,
        ballot: Ballot,
        settled: Settled,
        deliver: Deliver,
        *,
        read: Callable[[], Interaction | None] | None = None,
    ) -> bool:
        """Write a met tally's decision on the pending pause, guarded by the tally, then `deliver` it (True
        if this call did). The first attempt writes over `pause` as the caller read it (its version's
        conditional write decides, so no read here); another voter's release or a claim under it: read
        again (`read`, else the stored item)."""
        core = self.core
        current: Interaction | None = pause
        for attempt in range(3):
            if attempt:  # the last write lost: decide on what is stored now
                current = read() if read is not None else core.store.get_interaction(pause.run_id, pause.interaction_id)
            if current is None or current.state.status != "pending":
                return False
            decided = release_of(current, policy, ballot)
            new, first = settled(current, decided)
            records = [core.new_event(current.run_id, first), core.new_event(current.run_id, decided.event)]
            try:
                written = core.store.transition_interaction(current, new, with_records=records, guards=[decided.guard])
            except (ConflictError, GuardFailedError):
                continue
            return deliver(written)
        return False

    def settle_answered(
        self, pause: Interaction, policy: ApprovalPolicy, ballot: Ballot, answer: Any, deliver: Deliver
    ) -> bool:
        def answered(i: Interaction, decided: Decided) -> tuple[InteractionStatus, EventPayload]:
            event = InteractionAnswered(interaction_id=i.interaction_id, node=i.node, answer=answer, by=decided.by)
            return decided.answered(i.state, answer, self.core.now()), event

        return self.settle(pause, policy, ballot, answered, deliver)

    def settle_standing(
        self, pause: Interaction, policy: ApprovalPolicy | None, settle: Callable[[ApprovalPolicy, Ballot], object]
    ) -> bool:
        """The reconciler: a pending quorum pause whose stored tally is met is settled by its kind's `settle`
        as its deciding vote would have. True once the pause is no longer pending."""
        if policy is None:
            return False
        tally = self.core.store.get_tally(pause.run_id, pause.interaction_id)
        if (decision := tally.decision(policy)) is None:
            return False
        votes = self.core.store.list_votes(pause.run_id, pause.interaction_id)
        settle(policy, Ballot(outcome="standing", vote="approve", votes=votes, tally=tally, decision=decision))
        current = self.core.store.get_interaction(pause.run_id, pause.interaction_id)
        return current is not None and current.state.status != "pending"
