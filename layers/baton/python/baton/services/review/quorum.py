"""Quorum on a review gate's merge (`approval` in the gate's configuration). `approve_merge` and
`force_merge` vote approve, `request_changes` rejects, `reply` votes nothing (`baton/services/approvals.py`:
the starter and non-approvers get 403, a second vote counts once). The vote that meets the quorum stores
the deciding voter's action in one transition guarded by the tally and sends the token once; a reply or
a rejected merge starts a new round (`ReviewGate._reopen` clears the votes).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton.contracts.runs import ReviewActionResult
from baton.domain.review_gate import MERGE_ACTIONS
from baton.errors import ConflictError
from baton.models import status_of
from baton.services.answer_outcomes import delivery_of
from baton.services.approvals import ApprovalService

if TYPE_CHECKING:
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.events import EventPayload
    from baton.models import Interaction, InteractionStatus
    from baton.services.approvals import Ballot, Decided, Voter
    from baton.services.review.gate import ReviewGate


class ReviewQuorum:
    def __init__(self, gate: ReviewGate) -> None:
        self.gate = gate
        self.core = gate.core
        self.approvals = ApprovalService(gate.core)

    def vote(
        self, interaction: Interaction, policy: ApprovalPolicy, action: dict[str, Any], voter: Voter
    ) -> ReviewActionResult:
        """One operator's `approve_merge`/`force_merge` (approve) or `request_changes` (reject)."""
        vote: Vote = "approve" if action["action"] in MERGE_ACTIONS else "reject"
        text = json.dumps(action, sort_keys=True, separators=(",", ":"))
        requested_by = self.core.require_run(interaction.run_id).started_by
        ballot = self.approvals.cast(interaction, policy, text, voter, requested_by=requested_by, vote=vote)
        resumed, pending = self.approvals.settle_if_met(ballot, lambda: self.settle(interaction, policy, ballot))
        current = self.core.store.get_interaction(interaction.run_id, interaction.interaction_id) or interaction
        if ballot.outcome == "closed":
            raise ConflictError(
                f"the review at gate '{interaction.node}' is already decided: the vote is not counted",
                details={"interaction": current.public()},
            )
        decided = current.state.status != "pending" and ballot.decision is not None
        return ReviewActionResult(
            interaction_id=interaction.interaction_id,
            node=interaction.node,
            action=action["action"],
            reviewed_head=action.get("reviewed_head"),
            queued=decided,
            resumed=resumed,
            delivery=delivery_of(resumed, pending=pending),
            status="answered" if decided else "pending",
            approval=ballot.view(policy),
        )

    def settle(self, interaction: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Store the deciding vote's action (guarded by the met tally) and send the token: True if this
        call resumed the gate."""
        core = self.core
        side = "approve" if ballot.decision == "approved" else "reject"
        deciding = [v for v in ballot.votes if v.vote == side]
        chosen: dict[str, Any] = json.loads(deciding[-1].answer) if deciding else {"action": "request_changes"}

        def answered(current: Interaction, decided: Decided) -> tuple[InteractionStatus, EventPayload]:
            stored = chosen | {"reply": None, "by": decided.by}
            new = status_of(
                current.state, "answered", answer=stored, by=decided.by, at=core.now(), reason=decided.reason
            )
            return new, self.gate._answered(current, stored, by=decided.by)

        def read() -> Interaction | None:
            return core.store.get_interaction(interaction.run_id, interaction.interaction_id)

        return self.approvals.settle(read, policy, ballot, answered, self.gate._release)

    def settle_standing(self, interaction: Interaction, policy: ApprovalPolicy) -> bool:
        """The reconciler: a pending review whose stored tally is met is decided and delivered."""
        ballot = self.approvals.standing(interaction, policy)
        if ballot.decision is None:
            return False
        self.settle(interaction, policy, ballot)
        current = self.core.store.get_interaction(interaction.run_id, interaction.interaction_id)
        return current is not None and current.state.status != "pending"
