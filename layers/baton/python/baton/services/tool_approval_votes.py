"""The quorum side of a tool approval (baton/services/tool_approvals.py): each answer is a vote through the
shared approvals (baton/services/approvals.py); approve and edit approve, deny rejects."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from baton.contracts.questions import AnswerResult
from baton.contracts.tool_approvals import tool_spec
from baton.services.approvals import ApprovalService, reread, vote_text
from baton.services.deadlines import stop_interaction_timer
from baton.services.pause_answers import conflict

if TYPE_CHECKING:
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.models import Interaction
    from baton.services.approvals import Ballot, Voter
    from baton.services.core import Core


def vote(core: Core, pending: Interaction, policy: ApprovalPolicy, value: dict[str, Any], voter: Voter) -> AnswerResult:
    """One vote on a quorum approval (baton/services/approvals.py); the vote meeting the quorum decides it
    with the deciding side's last answer. The asking agent and non-approvers get a 403."""
    text = vote_text(value)
    side: Vote = "reject" if value["decision"] == "deny" else "approve"
    requested_by = tool_spec(pending).requested_by
    ballot = ApprovalService(core).cast(pending, policy, text, voter, requested_by=requested_by, vote=side)
    if ballot.outcome == "closed":
        raise conflict(pending, f"tool approval {pending.interaction_id} was already decided: the vote is not counted")
    done = _settle(core, pending, policy, ballot)
    return AnswerResult(
        interaction_id=pending.interaction_id,
        node=pending.node,
        status="answered" if done else "pending",
        queued=done,
        resumed=done,
        approval=ballot.view(policy),
    )


def settle_standing(core: Core, pause: Interaction) -> bool:
    """The reconciler: a pending quorum approval whose stored tally is met is decided as its vote would have."""
    return ApprovalService(core).settle_standing(pause, tool_spec(pause).approval, partial(_settle, core, pause))


def _settle(core: Core, pending: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
    """Decide a met tally (guarded by it) with its side's last answer. True once the approval is answered."""
    if ballot.decision is not None:
        ApprovalService(core).settle_answered(pending, policy, ballot, ballot.deciding_answer(), partial(_stop, core))
    return (reread(core, pending)() or pending).state.status == "answered"


def _stop(core: Core, answered: Interaction) -> bool:
    """The settling write's winner: the approval's ladder timer is moot now."""
    stop_interaction_timer(core, answered)
    return True
