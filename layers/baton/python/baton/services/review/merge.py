"""The review gate's merge: start its build (merge_start), then land its outcome on the run (merge_record)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.review import MERGE_REJECTED_PREFIX, BuildStarted, MergeRecorded, MergeResult
from baton.domain.fields import OPEN_RUN_STATES
from baton.domain.review_state import StoredAction
from baton.errors import ConflictError, ValidationFailedError
from baton.events import ReviewMerged, ReviewMergeRejected, ReviewMergeStarted, ReviewMergeTimedOut
from baton.services.review.gate import ReviewGate

if TYPE_CHECKING:
    from baton.domain.merge_contracts import MergeOutcome, StatesError

# How much of a merge build's failure cause lands in the rejection reason shown to the operator.
REASON_CAUSE_CHARS = 2000


class ReviewMerge(ReviewGate):
    def start_merge(self, run_id: str, gate: str, token: str) -> BuildStarted:
        interaction, config = self._require(run_id, gate)
        stored = StoredAction.of(interaction)
        request = stored.merge_request(interaction, config)  # the reviewed commit, never the branch tip
        handle = self.start_build(request, token)
        self.core.record(
            run_id,
            ReviewMergeStarted(
                gate=gate,
                interaction_id=interaction.interaction_id,
                action=stored.action,
                by=interaction.state.answered_by,
                handle=handle,
                **request.model_dump(include={"strategy", "into", "run_branch", "reviewed_head"}),
            ),
        )
        return BuildStarted(started=True, handle=handle)

    def record_merge(
        self,
        run_id: str,
        gate: str,
        *,
        outcome: MergeOutcome | None = None,
        error: StatesError | None = None,
    ) -> MergeRecorded:
        """Merged/noop: the gate finishes; rejected (or a merge that failed to run): pending again."""
        core = self.core
        interaction, config = self._require(run_id, gate)
        base = MergeRecorded(
            status="merged",
            **StoredAction.of(interaction).model_dump(include={"action", "reviewed_head", "diff_digest"}),
            answered_by=interaction.state.answered_by,
            verdict=self._reviewed(interaction).verdict,
            interaction_id=interaction.interaction_id,
        )
        if error is not None and error.error == "States.Timeout":
            cause = f"the merge at review gate '{gate}' did not report within {config.merge_timeout_seconds}s"
            timed_out = {"merge_status": "timed_out", "updated_at": core.now()}
            event = core.new_event(run_id, ReviewMergeTimedOut(gate=gate, cause=cause))
            try:  # the run failed, its merge status and the event: one write
                failed = {**timed_out, "status": "failed", "reason": cause}
                core.store.update_run_recording(run_id, failed, events=[event], allowed_from=set(OPEN_RUN_STATES))
            except ConflictError:  # the run has ended meanwhile: its status stays, the rest is written
                core.store.update_run_recording(run_id, timed_out, events=[event])
            return base.model_copy(update={"status": "timed_out", "cause": cause})
        if error is not None:
            reason = f"the merge did not run: {error.error}: {(error.cause or '')[:REASON_CAUSE_CHARS]}"
            merge = MergeResult(merge_status="rejected", reason=reason)
            blocked = {"reject_code": "merge_failed", "conflicting_files": [], "dirty_files": []}
        elif outcome is None:
            raise ValidationFailedError(f"the merge at review gate '{gate}' reported neither an outcome nor an error")
        else:
            merge = MergeResult.model_validate(outcome, from_attributes=True)
            if outcome.merge_status in ("merged", "noop", "not_merged"):  # the gate is done: not_merged = into none
                fields = merge.model_dump(include={"final_commit", "final_branch", "merged_into"}, exclude_none=True)
                decided = base.model_dump(exclude={"status", "cause", "merge"})
                merged = ReviewMerged(gate=gate, by=interaction.state.answered_by, **decided, **merge.model_dump())
                core.store.update_run_recording(  # the run's merge fields and `review_merged`: one write
                    run_id,
                    {**fields, "merge_status": outcome.merge_status, "updated_at": core.now()},
                    events=[core.new_event(run_id, merged)],
                )
                return base.model_copy(update={"merge": merge})
            reason = outcome.reason or "the merge was rejected"
            blocked = outcome.model_dump(include={"reject_code", "conflicting_files", "dirty_files"})
        # Pending again, so the operator can fix the tree and approve again.
        rejected = ReviewMergeRejected(
            gate=gate, reason=reason, action=base.action, reviewed_head=base.reviewed_head, **blocked
        )
        core.store.update_run_recording(  # the run's merge status and the rejection: one write
            run_id, {"merge_status": "rejected", "updated_at": core.now()}, events=[core.new_event(run_id, rejected)]
        )
        self._reopen(interaction, config, reason=f"{MERGE_REJECTED_PREFIX} {reason}")
        return base.model_copy(update={"status": "rejected", "cause": reason, "merge": merge})
