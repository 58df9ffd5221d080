"""The review gate's read model: GET /api/runs/{run_id}/review and the "is it waiting?" question."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.review import MergeFields, ReviewView, ThreadTurn
from baton.domain.review_gate import allowed_actions
from baton.models import ReviewRequest
from baton.services.review.gate import ReviewGate

if TYPE_CHECKING:
    from baton.models import Interaction, ReviewTurn


class ReviewReadModel(ReviewGate):
    def waiting_at_review(self, run_id: str, node: str | None = None) -> bool:
        latest = self._latest(run_id, node)
        return latest is not None and latest.state.status == "pending"

    def view(self, run_id: str, node: str | None = None) -> ReviewView:
        """GET /api/runs/{run_id}/review: thread, verdict, diff stats, review URL, merge status."""
        run = self.core.require_run(run_id)
        interaction = self._require(run_id, node)
        config = self.config_of(interaction)
        turns = self.core.store.list_turns(run_id, interaction.interaction_id)
        used = self._companion_turns(turns)
        url, warnings = self.review_url(interaction)
        pending = interaction.state.status == "pending"
        verdict = self._latest_verdict(turns)
        allowed = allowed_actions(verdict, turns_used=used, max_turns=config.max_turns) if pending else []
        reviewed = self._reviewed(interaction, turns)
        return ReviewView(
            run_id=run_id,
            gate=config.gate,
            interaction_id=interaction.interaction_id,
            status=interaction.state.status,
            reason=interaction.state.reason,
            last_action=interaction.state.answer,
            thread=[
                ThreadTurn.model_validate(t.model_dump(exclude={"run_id", "interaction_id", "diff"})) for t in turns
            ],
            verdict=verdict,
            turns_used=used,
            max_turns=config.max_turns,
            allowed_actions=allowed,
            diff=self._reviewed_diff(interaction, turns),
            review_url=url,
            warnings=warnings,
            posture=config.posture,
            merge_strategy=config.merge_strategy,
            merge_into=config.merge_into,
            run_branch=config.run_branch,
            reviewed_head=reviewed.head,
            diff_digest=reviewed.diff_digest,
            run_branch_head=self._branch_tip(config) if pending else None,
            merge=MergeFields(
                merge_status=run.merge_status,
                final_commit=run.final_commit,
                final_branch=run.final_branch,
                merged_into=run.merged_into,
            ),
            rounds=[i.interaction_id for i in self.core.store.list_run_interactions(run_id, kind="review")],
        )

    @staticmethod
    def _reviewed_diff(interaction: Interaction, turns: list[ReviewTurn]) -> dict[str, Any] | None:
        """The stats of the diff the latest companion turn read (a reply re-reads the run branch), else
        the gate's first diff: the diff shown is the one an approval pins."""
        for turn in reversed(turns):
            if turn.role == "companion" and turn.diff is not None:
                return turn.diff
        return interaction.request_as(ReviewRequest).diff
