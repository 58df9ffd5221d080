"""The review-and-merge gate's service: the diff and merge builds, companion turns, the operator's
actions, the merge and its outcome, and the read model, one module each. Its adapters arrive through
the ports (`Companion`, `DiffSource`, `BuildRunner`, `BuildRecords` in `baton/ports.py`);
`baton/runtime/wiring.py` builds them. The state machine (statemachines/review_gate.asl.json) calls, in
order:

    start_diff -> first_turn -> park -> [reply -> park]* -> start_merge -> record_merge -> (park again if rejected)

and each build's end comes back through `build_finished` (the build_finished Lambda).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.services.review.actions import ReviewActions
from baton.services.review.builds import ReviewBuilds, StoredDiffSource
from baton.services.review.dialogue import ReviewDialogue
from baton.services.review.merge import ReviewMerge
from baton.services.review.read_model import ReviewReadModel

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

    from baton.contracts.review import (
        BuildSent,
        BuildStarted,
        MergeRecorded,
        ReviewParked,
        ReviewTurnOutput,
        ReviewView,
    )
    from baton.contracts.runs import ReviewActionResult
    from baton.domain.merge_contracts import BuildFinished, MergeOutcome, StatesError
    from baton.domain.review_decision import ReviewDecision
    from baton.models import Interaction, ParkedWait
    from baton.review_ports import BuildRecords, BuildRunner, Companion, DiffSource
    from baton.services.at_deadline import InteractionPauseDeadline
    from baton.services.core import Core

__all__ = ["ReviewService", "is_review_answer"]


def is_review_answer(answers: Mapping[str, Any]) -> bool:
    return any(key.startswith("__review_") for key in answers)


class ReviewService:
    """One door for the handlers and the API: each call goes to the part that owns it."""

    def __init__(
        self,
        core: Core,
        *,
        companion: Callable[[], Companion],
        runner: Callable[[], BuildRunner],
        records: BuildRecords,
        diffs: DiffSource | None = None,
        merge_runner_kind: str = "local",
        merge_repository: str = "",
    ) -> None:
        """`diffs` defaults to the stored diff of the gate's own diff build (`StoredDiffSource`)."""
        self.core = core
        self.builds = ReviewBuilds(core, records=records, runner=runner)
        self.dialogue = ReviewDialogue(
            core,
            companion=companion,
            diffs=diffs if diffs is not None else StoredDiffSource(self.builds),
            builds=self.builds,
            merge_runner_kind=merge_runner_kind,
            merge_repository=merge_repository,
        )
        self.actions = ReviewActions(core)
        self.merge = ReviewMerge(core, builds=self.builds)
        self.read_model = ReviewReadModel(core)

    # the diff_start Lambda and the end of every build (the build_finished Lambda)
    def start_diff(self, run_id: str, raw_config: Any, token: str) -> BuildStarted:
        return self.dialogue.start_diff(run_id, raw_config, token)

    def build_finished(self, event: BuildFinished) -> BuildSent:
        return self.builds.finished(event)

    # the review_turn Lambda
    def first_turn(self, run_id: str, raw_config: Any) -> ReviewTurnOutput:
        return self.dialogue.first_turn(run_id, raw_config)

    def reply_turn(self, run_id: str, gate: str) -> ReviewTurnOutput:
        return self.dialogue.reply_turn(run_id, gate)

    # the review_park Lambda, the operator's action, the reconciler
    def park(self, run_id: str, gate: str, token: str, entered_at: datetime | None = None) -> ReviewParked:
        return self.actions.park(run_id, gate, token, entered_at)

    def act(
        self,
        run_id: str,
        decision: ReviewDecision,
        *,
        caller: str,
        node: str | None = None,
        groups: frozenset[str] = frozenset(),
    ) -> ReviewActionResult:
        return self.actions.act(run_id, decision, caller=caller, node=node, groups=groups)

    def reconcile_wait(self, wait: ParkedWait) -> bool:
        return self.actions.reconcile_wait(wait)

    def deadline_policy(self) -> InteractionPauseDeadline:
        return self.actions.deadline_policy()

    def settle_quorum(self, interaction: Interaction) -> bool:
        """The reconciler: a pending review whose quorum is met but was not released (quorum.py)."""
        from baton.services.review.quorum import ReviewQuorum

        policy = self.actions.config_of(interaction).approval
        return policy is not None and ReviewQuorum(self.actions).settle_standing(interaction, policy)

    # the merge_start and merge_record Lambdas
    def start_merge(self, run_id: str, gate: str, token: str) -> BuildStarted:
        return self.merge.start_merge(run_id, gate, token)

    def record_merge(
        self,
        run_id: str,
        gate: str,
        *,
        outcome: MergeOutcome | None = None,
        error: StatesError | None = None,
    ) -> MergeRecorded:
        return self.merge.record_merge(run_id, gate, outcome=outcome, error=error)

    # GET /api/runs/{run_id}/review and the resume route's question
    def view(self, run_id: str, node: str | None = None) -> ReviewView:
        return self.read_model.view(run_id, node)

    def waiting_at_review(self, run_id: str, node: str | None = None) -> bool:
        return self.read_model.waiting_at_review(run_id, node)
