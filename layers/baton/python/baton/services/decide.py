"""The one decision engine (issue 34): an answer to a pause of any kind is checked (the kind's rules),
answered as the first when it repeats the stored answer, refused when late, counted as a vote on a quorum
pause, else decided by one guarded transaction and released; a failed send is a 202 `delivery: pending`
the reconciler delivers. A kind's own steps are its `AnswerPolicy` (baton.services.at_deadline)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.domain.answer_replies import closed_error
from baton.errors import ConflictError
from baton.models import status_of
from baton.services.answer_outcomes import SendFailedError
from baton.services.approvals import ApprovalService

if TYPE_CHECKING:
    from baton.domain.approval import ApprovalPolicy
    from baton.domain.ballot import Decided, Voter
    from baton.models import Interaction
    from baton.services.at_deadline import Answer, AnswerPolicy, Outcome, View
    from baton.services.core import Core


def decide(
    core: Core,
    policy: AnswerPolicy[Answer, View, Outcome],
    target: Interaction,
    answer: Answer,
    voter: Voter,
    *,
    decided: Decided | None = None,
) -> View:
    """Take `voter`'s answer on `target` as read. `decided`: the quorum that met answers it (no vote).
    GuardFailedError when the run changed under the write: the caller reads again (or falls back)."""
    caller = voter.operator
    policy.check(target, answer)
    settled = target.state.status != "pending"
    if settled:  # a repeat of the accepted answer, a run's stop (410), its deadline's end (410, kept late)
        if (again := policy.repeat(target, answer, caller)) is not None:
            return again
        if target.state.status == "cancelled":
            raise closed_error(target)
        policy.refuse_if_ended(target, answer, caller)
    else:
        policy.refuse_if_late(target, answer, caller)
    quorum = policy.quorum(target)
    if quorum is not None and decided is None:  # a vote (after the decision: a counted voter's repeat is a 200)
        return vote(policy, target, quorum, answer, voter)
    if settled:
        raise policy.already(target, racing=False)
    write = policy.write(target, answer, caller, decided)
    records = list(write.records)
    guards = list(write.guards)
    if decided is not None:  # released by a quorum: only while the tally is met, with its event
        guards.append(decided.guard)
        records.append(core.new_event(target.run_id, decided.event))
    reason = decided.reason if decided else write.reason
    stored = None if write.status == "cancelled" else write.stored or answer
    try:
        answered = core.store.transition_interaction(
            target,
            status_of(target.state, write.status, answer=stored, by=caller, at=write.at, reason=reason),
            with_records=records,
            guards=guards,
            audit_head=write.audit_head,
        )
    except ConflictError:
        current = core.store.get_interaction(target.run_id, target.interaction_id) or target
        if policy.is_repeat(current, answer, caller) and (again := policy.repeat(current, answer, caller)) is not None:
            return again
        raise policy.already(current, racing=True) from None
    try:
        return write.release(answered)
    except SendFailedError:  # stored: the reconciler sends it
        return policy.view(answered, False, pending=True)


def vote(
    policy: AnswerPolicy[Answer, View, Outcome],
    pause: Interaction,
    quorum: ApprovalPolicy,
    answer: Answer,
    voter: Voter,
) -> View:
    """Every kind's one vote: cast (403 for the requester and non-approvers; a repeat is counted once), a met
    tally settled by the kind, then a 409 if the ballot closed before this vote, else the kind's count."""
    ballot = ApprovalService(policy.core).cast(pause, quorum, policy.entry(pause, quorum, answer), voter)
    outcome: Outcome | None = None
    pending = False
    if ballot.decision is not None:
        try:
            outcome = policy.settle(pause, quorum, ballot)
        except SendFailedError:  # the decision is stored: the reconciler sends it
            pending = True
    if ballot.outcome == "closed":
        raise policy.not_counted(pause)
    return policy.counted(pause, ballot.view(quorum), outcome, pending=pending)
