"""The review gate's read model: GET /api/runs/{run_id}/review and the "is it waiting?" question."""

from __future__ import annotations

from baton.contracts.review import MergeFields, ReviewView, ThreadTurn
from baton.services.review.gate import Reviewed, ReviewGate


class ReviewReadModel(ReviewGate):
    def waiting_at_review(self, run_id: str, node: str | None = None) -> bool:
        latest = self._latest(run_id, node)
        return latest is not None and latest.state.status == "pending"

    def view(self, run_id: str, node: str | None = None) -> ReviewView:
        """The thread, the latest verdict, the stats of the diff an approval pins, the merge's fields."""
        run = self.core.require_run(run_id)
        interaction = self._require(run_id, node)
        config = self.config_of(interaction)
        turns = self.core.store.list_turns(run_id, interaction.interaction_id)
        url, warnings = self.review_url(interaction)
        pending = interaction.state.status == "pending"
        reviewed = Reviewed.of(interaction, turns)
        allowed = reviewed.allowed(config.max_turns)
        return ReviewView(
            run_id=run_id,
            gate=config.gate,
            interaction_id=interaction.interaction_id,
            status=interaction.state.status,
            reason=interaction.state.reason,
            last_action=interaction.state.answer,
            thread=[ThreadTurn.model_validate(t, from_attributes=True) for t in turns],
            verdict=reviewed.verdict,
            turns_used=reviewed.turns_used,
            max_turns=config.max_turns,
            allowed_actions=allowed if pending else [],
            diff=reviewed.diff,
            review_url=url,
            warnings=warnings,
            posture=config.posture,
            merge_strategy=config.merge_strategy,
            merge_into=config.merge_into,
            run_branch=config.run_branch,
            reviewed_head=reviewed.head,
            diff_digest=reviewed.diff_digest,
            run_branch_head=self._branch_tip(config) if pending else None,
            merge=MergeFields.model_validate(run, from_attributes=True),
            rounds=[i.interaction_id for i in self.core.store.list_run_interactions(run_id, kind="review")],
        )
