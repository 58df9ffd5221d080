"""Quorum on a review gate's merge (`approval` in the gate's configuration; rules in services/approvals.py):
`approve_merge`/`force_merge` approve, `request_changes` rejects, a reply votes nothing. The vote that
meets the quorum stores the deciding voter's action and sends the token once; a new round (a reply, a
rejected merge) starts with the votes cleared (`ReviewGate._reopen`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton.contracts.runs import ReviewActionResult
from baton.domain.review_gate import MERGE_ACTIONS
from baton.errors import ConflictError
from baton.services.answer_outcomes import SendFailedError, delivery_of
from baton.services.approvals import ApprovalService

if TYPE_CHECKING:
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.events import InteractionAnswered
    from baton.models import Interaction
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
        vote: Vote = "approve" if action["action"] in MERGE_ACTIONS else "reject"
        text = json.dumps(action, sort_keys=True, separators=(",", ":"))
        requested_by = self.core.require_run(interaction.run_id).started_by
        ballot = self.approvals.cast(interaction, policy, text, voter, requested_by=requested_by, vote=vote)
        try:
            resumed = self.settle(interaction, policy, ballot) if ballot.decision else False
            pending = False
        except SendFailedError:  # the decision is stored: the reconciler sends it
            resumed, pending = False, True
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
        """Store the deciding vote's action and send the token: True if this call resumed the gate."""
        chosen: dict[str, Any] = ballot.deciding_answer() or {"action": "request_changes"}

        def answered(current: Interaction, decided: Decided) -> tuple[dict[str, Any], InteractionAnswered]:
            stored = chosen | {"reply": None, "by": decided.by}
            return stored, self.gate._answered(current, stored, by=decided.by)

        return self.approvals.settle(interaction, policy, ballot, answered=answered, deliver=self.gate._release)

    def settle_standing(self, interaction: Interaction, policy: ApprovalPolicy) -> bool:
        """The reconciler: a pending review whose stored tally is met is decided and delivered."""
        return self.approvals.settle_standing(interaction, policy, lambda b: self.settle(interaction, policy, b))
