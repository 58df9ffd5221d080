"""What the review gate's parts share. One `review` interaction per entry into a gate holds its
configuration and cycles pending -> answered (an action) -> pending (a reply, a rejected merge) until a
merge lands or changes are requested; its dialogue is stored as turn items (`DLG#<iid>#<n>`). The read
model (GET /api/runs/{run_id}/review) is here too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.review import MergeFields, ReviewDiff, ReviewDiffFile, ReviewGateOutput, ReviewView, ThreadTurn
from baton.domain.review_dialogue import diff_request
from baton.domain.review_gate import GateConfig, read_gate_config
from baton.domain.review_state import Reviewed, gate_output, review_url_of
from baton.domain.unified_diff import file_diffs
from baton.errors import BatonError, NotFoundError
from baton.models import Interaction, ReviewRequest, status_of
from baton.services.review.builds import ReviewBuilds

if TYPE_CHECKING:
    from baton.events import EventPayload
    from baton.models import ReviewTurn
    from baton.review_ports import DiffSource

# The gate's configuration as the review view shows it.
VIEWED_CONFIG = {"gate", "max_turns", "posture", "merge_strategy", "merge_into", "run_branch"}


class ReviewGate(ReviewBuilds):
    diffs: DiffSource

    def _latest(
        self, run_id: str, gate: str | None = None, reviews: list[Interaction] | None = None
    ) -> Interaction | None:
        if reviews is None:
            reviews = self.core.store.list_run_interactions(run_id, kind="review")
        found = [i for i in reviews if gate in (None, i.node)]
        return found[-1] if found else None

    def _require(
        self, run_id: str, gate: str | None = None, reviews: list[Interaction] | None = None
    ) -> tuple[Interaction, GateConfig]:
        """The gate's latest review and the configuration it holds (every caller reads both); else a 404."""
        found = self._latest(run_id, gate, reviews)
        if found is None:
            where = f" at gate '{gate}'" if gate else ""
            raise NotFoundError(f"run {run_id} has no review{where}", details={"run_id": run_id})
        return found, self.config_of(found)

    @staticmethod
    def config_of(interaction: Interaction) -> GateConfig:
        return read_gate_config(interaction.request_as(ReviewRequest).config)

    def _reviewed(self, interaction: Interaction) -> Reviewed:
        turns = self.core.store.list_turns(interaction.run_id, interaction.interaction_id)
        return Reviewed.of(interaction.request_as(ReviewRequest).diff, turns)

    @staticmethod
    def _branch_tip(config: GateConfig) -> str | None:
        """The run branch's tip where this process can read the repository (the local stack), else None: a
        gate with a `repo_url` reviews a clone the build makes, not the local path."""
        from baton.merge.gitcmd import readable_branch_head  # git's runner, loaded only when a tip is read

        return None if config.repo_url else readable_branch_head(config.repo_path, config.run_branch)

    def _store_turn(self, turn: ReviewTurn, *payloads: EventPayload, review: Interaction | None = None) -> None:
        """The turn and its events (with `review`: the new review its first turn opens), one write."""
        events = [self.core.new_event(turn.run_id, payload) for payload in payloads]
        self.core.store.put_turn(turn, review=review, events=events)

    def _reopen(self, interaction: Interaction, config: GateConfig, *, reason: str | None) -> Interaction:
        """Back to pending with a fresh expiry. A quorum starts a new round: its votes are cleared first."""
        if config.approval is not None:
            self.core.store.clear_votes(interaction.run_id, interaction.interaction_id)
        reopened = interaction.model_copy(update={"expires_at": self.core.deadline_of(config.timeout_seconds)})
        return self.core.store.transition_interaction(reopened, status_of(interaction.state, "pending", reason=reason))

    def _output(self, interaction: Interaction, reviewed: Reviewed | None = None) -> ReviewGateOutput:
        return gate_output(interaction, reviewed or self._reviewed(interaction))

    def _release(self, interaction: Interaction, reviewed: Reviewed | None = None) -> bool:
        """`reviewed`: the dialogue as the caller read it (no second read); its verdict is the companion's."""
        return self.core.release_gate(interaction.run_id, interaction.node, self._output(interaction, reviewed))

    def waiting_at_review(self, run_id: str, node: str | None = None) -> bool:
        latest = self._latest(run_id, node)
        return latest is not None and latest.state.status == "pending"

    def view(self, run_id: str, node: str | None = None) -> ReviewView:
        """GET /api/runs/{run_id}/review: the thread, the latest verdict, the pinned diff, the merge's fields."""
        run = self.core.require_run(run_id)
        reviews = self.core.store.list_run_interactions(run_id, kind="review")
        interaction, config = self._require(run_id, node, reviews)
        url, warnings = review_url_of(interaction, config)
        pending = interaction.state.status == "pending"
        reviewed = self._reviewed(interaction)
        return ReviewView(
            run_id=run_id,
            **config.model_dump(include=VIEWED_CONFIG),
            interaction_id=interaction.interaction_id,
            status=interaction.state.status,
            reason=interaction.state.reason,
            last_action=interaction.state.answer,
            thread=[ThreadTurn.model_validate(t, from_attributes=True) for t in reviewed.turns],
            verdict=reviewed.verdict,
            turns_used=reviewed.turns_used,
            allowed_actions=reviewed.allowed(config.max_turns) if pending else [],
            diff=reviewed.diff,
            review_url=url,
            warnings=warnings,
            reviewed_head=reviewed.head,
            diff_digest=reviewed.diff_digest,
            run_branch_head=self._branch_tip(config) if pending else None,
            merge=MergeFields.model_validate(run, from_attributes=True),
            rounds=[i.interaction_id for i in reviews],
        )

    def diff_view(self, run_id: str, node: str | None = None) -> ReviewDiff:
        """GET /api/runs/{run_id}/review/diff: the companion's diff (its source and bound), file by file."""
        self.core.require_run(run_id)
        interaction, config = self._require(run_id, node)
        request = diff_request(run_id, config)
        try:
            diff = self.diffs.run_branch_diff(request)
        except BatonError as err:  # not computed (yet), or no longer readable
            raise NotFoundError(f"no diff to show: {err.message}", details={"run_id": run_id}) from err
        reviewed = self._reviewed(interaction)
        files = [ReviewDiffFile.of(f) for f in file_diffs(diff.text, diff.files, truncated=diff.truncated)]
        return ReviewDiff(
            run_id=run_id,
            **config.model_dump(include={"gate", "run_branch", "merge_into"}),
            interaction_id=interaction.interaction_id,
            **diff.model_dump(exclude={"text", "files"}),
            reviewed_head=reviewed.head,
            diff_digest=reviewed.diff_digest,
            branch_moved=reviewed.head is not None and reviewed.head != diff.head,
            target=request.target,
            max_bytes=request.max_bytes,
            files=files,
        )
