"""What every part of the review gate's service reads and writes the same way: the gate's latest
`review` interaction, its configuration, its dialogue turns, the output sent with the task token.

One `review` interaction per entry into a gate (node = the gate name) carries the gate's configuration
(`ReviewRequest.config`) and cycles pending -> answered (an action) -> pending (after a reply turn or
a rejected merge) until a merge lands or changes are requested. The dialogue is stored as separate turn
items (`DLG#<iid>#<n>`, outside what a run's answers read: baton/adapters/dynamo_review_turns.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton.contracts.review import ReviewGateOutput
from baton.domain.review_gate import ACTIONS, GateConfig, resolve_review_url
from baton.errors import BatonError, NotFoundError
from baton.models import Interaction, ReviewRequest, status_of

if TYPE_CHECKING:
    from baton.models import ReviewTurn
    from baton.services.core import Core

EVENT_TEXT_LIMIT = 2000


@dataclass(frozen=True)
class Reviewed:
    """What a review read: the run-branch commit and the sha256 of its diff (None before any diff)."""

    head: str | None
    diff_digest: str | None


ACTIVE_RUN = {"created", "running", "paused_waiting_human"}


def clip(text: str, limit: int = EVENT_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class ReviewGate:
    """The shared reads and writes; the dialogue, actions, merge and read model build on them."""

    def __init__(self, core: Core) -> None:
        self.core = core

    def _latest(self, run_id: str, gate: str | None = None) -> Interaction | None:
        found = [i for i in self.core.store.list_run_interactions(run_id, kind="review") if gate in (None, i.node)]
        return found[-1] if found else None

    def _require(self, run_id: str, gate: str | None = None) -> Interaction:
        found = self._latest(run_id, gate)
        if found is None:
            where = f" at gate '{gate}'" if gate else ""
            raise NotFoundError(f"run {run_id} has no review{where}", details={"run_id": run_id})
        return found

    @staticmethod
    def config_of(interaction: Interaction) -> GateConfig:
        return GateConfig.model_validate(interaction.request_as(ReviewRequest).config)

    @staticmethod
    def _latest_verdict(turns: list[ReviewTurn]) -> dict[str, Any] | None:
        for turn in reversed(turns):
            if turn.role == "companion" and turn.verdict is not None:
                return turn.verdict
        return None

    @staticmethod
    def _reviewed(interaction: Interaction, turns: list[ReviewTurn]) -> Reviewed:
        """The commit and diff digest the latest companion turn read (a turn without a diff, e.g. a
        failed re-diff, reviewed nothing new), else the gate's first diff: what an approval pins."""
        for turn in reversed(turns):
            if turn.role == "companion" and turn.reviewed_head:
                return Reviewed(head=turn.reviewed_head, diff_digest=turn.diff_digest)
        diff = interaction.request_as(ReviewRequest).diff or {}
        return Reviewed(head=diff.get("head"), diff_digest=diff.get("digest"))

    @staticmethod
    def _branch_tip(config: GateConfig) -> str | None:
        """The run branch's tip now, where this process can read the repository (the local stack's
        repo_path); None deployed (the repository lives in CodeBuild) or when it cannot be read."""
        from baton.merge.gitcmd import GitCommandError, branch_head

        if config.repo_url or not config.repo_path or not config.run_branch or not Path(config.repo_path).is_dir():
            return None
        try:
            return branch_head(Path(config.repo_path), config.run_branch, "run branch")
        except (BatonError, GitCommandError, OSError):
            return None

    @staticmethod
    def _companion_turns(turns: list[ReviewTurn]) -> int:
        return sum(1 for t in turns if t.role == "companion")

    def review_url(self, interaction: Interaction) -> tuple[str, list[str]]:
        config = self.config_of(interaction)
        run_input = {k: v for k, v in interaction.request_as(ReviewRequest).config.items() if k != "outputs"}
        scope = {
            "run_id": interaction.run_id,
            "gate": config.gate,
            "run_branch": config.run_branch,
            "input": run_input,
            "outputs": config.outputs,
        }
        return resolve_review_url(config.review_url, scope)

    def _reopen(self, interaction: Interaction, config: GateConfig, *, reason: str | None) -> Interaction:
        """Back to pending (after a reply turn or a rejected merge), with a fresh expiry. A gate with a
        quorum starts a new round: its votes are cleared first (no vote lands while it is not pending)."""
        if config.approval is not None:
            self.core.store.clear_votes(interaction.run_id, interaction.interaction_id)
        reopened = interaction.model_copy(update={"expires_at": self.core.later(config.timeout_seconds)})
        return self.core.store.transition_interaction(reopened, status_of(interaction.state, "pending", reason=reason))

    def _output(self, interaction: Interaction) -> ReviewGateOutput:
        answer = interaction.state.answer or {}
        turns = self.core.store.list_turns(interaction.run_id, interaction.interaction_id)
        return ReviewGateOutput(
            interaction_id=interaction.interaction_id,
            node=interaction.node,
            action=answer.get("action"),
            reply=answer.get("reply"),
            message=answer.get("message"),
            merge_strategy=answer.get("merge_strategy"),
            reviewed_head=answer.get("reviewed_head"),
            answered_by=interaction.state.answered_by,
            answered_at=interaction.state.answered_at,
            verdict=self._latest_verdict(turns),
        )

    def _release(self, interaction: Interaction, *, token: str | None = None) -> bool:
        """Send the gate's token with the stored action's output (`Core.release_gate`)."""
        output = self._output(interaction).model_dump()
        return self.core.release_gate(interaction.run_id, interaction.node, output, token=token)

    @staticmethod
    def _has_action(interaction: Interaction) -> bool:
        """Its stored answer is a review action (anything else is nothing this gate sends)."""
        return (interaction.state.answer or {}).get("action") in ACTIONS
