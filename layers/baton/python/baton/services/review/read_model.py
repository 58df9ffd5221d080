"""The review gate's read model: GET /api/runs/{run_id}/review and the "is it waiting?" question."""

from __future__ import annotations

from typing import Any

from baton.domain.review_gate import ACTIONS
from baton.models import ReviewRequest
from baton.services.review.gate import ReviewGate


class ReviewReadModel(ReviewGate):
    def waiting_at_review(self, run_id: str, node: str | None = None) -> bool:
        latest = self._latest(run_id, node)
        return latest is not None and latest.state.status == "pending"

    def view(self, run_id: str, node: str | None = None) -> dict[str, Any]:
        """GET /api/runs/{run_id}/review: thread, verdict, diff stats, review URL, merge status."""
        run = self.core.require_run(run_id)
        interaction = self._require(run_id, node)
        config = self.config_of(interaction)
        turns = self.core.store.list_turns(run_id, interaction.interaction_id)
        used = self._companion_turns(turns)
        url, warnings = self.review_url(interaction)
        pending = interaction.state.status == "pending"
        allowed = [a for a in ACTIONS if a != "reply" or used < config.max_turns] if pending else []
        rounds = [i.interaction_id for i in self.core.store.list_run_interactions(run_id, kind="review")]
        return {
            "run_id": run_id,
            "gate": config.gate,
            "interaction_id": interaction.interaction_id,
            "status": interaction.state.status,
            "reason": interaction.state.reason,
            "last_action": interaction.state.answer,
            "thread": [t.model_dump(exclude={"run_id", "interaction_id"}) for t in turns],
            "verdict": self._latest_verdict(turns),
            "turns_used": used,
            "max_turns": config.max_turns,
            "allowed_actions": allowed,
            "diff": interaction.request_as(ReviewRequest).diff,
            "review_url": url,
            "warnings": warnings,
            "posture": config.posture,
            "merge_strategy": config.merge_strategy,
            "merge_into": config.merge_into,
            "run_branch": config.run_branch,
            "merge": {
                "merge_status": run.merge_status,
                "final_commit": run.final_commit,
                "final_branch": run.final_branch,
                "merged_into": run.merged_into,
            },
            "rounds": rounds,
        }
