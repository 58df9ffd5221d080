"""The operator's actions on a review gate (a `ReviewDecision`), the park of its task token and the
reconciler's re-send of an action a failed send lost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.review import ReviewParked
from baton.contracts.runs import ReviewActionResult
from baton.domain.review_gate import KEY_ACTION, KEY_REASON, verdict_blocks_approval
from baton.errors import ConflictError, GoneError, ValidationFailedError
from baton.events import HumanInputRequested, RunPaused
from baton.models import ParkedWait, ReviewTurn, status_of
from baton.services.answer_outcomes import SendFailedError, closed_error, delivery_of
from baton.services.at_deadline import InteractionPauseDeadline
from baton.services.deadlines import park_wait
from baton.services.review.gate import ACTIVE_RUN, Reviewed, ReviewGate, StoredAction

if TYPE_CHECKING:
    from datetime import datetime

    from baton.domain.review_decision import ReviewDecision
    from baton.domain.review_gate import GateConfig
    from baton.models import Interaction


class ReviewActions(ReviewGate):
    def park(self, run_id: str, gate: str, token: str, entered_at: datetime | None = None) -> ReviewParked:
        """Park the token and ask the operator. A retried invoke (same token) records and notifies nothing."""
        core = self.core
        again = core.parked_again(run_id, gate, token)
        if again is not None and again.interaction_ids:
            return ReviewParked(interaction_id=again.interaction_ids[0], delivered=again.status == "released")
        interaction = self._require(run_id, gate)
        config = self.config_of(interaction)
        url, warnings = self.review_url(interaction)
        park_wait(
            core,
            ParkedWait(
                run_id=run_id,
                gate=gate,
                task_token=token,
                kind="review",
                interaction_ids=[interaction.interaction_id],
                scope={"review_url": url},
                parked_at=core.now(),
                deadline=core.deadline_of(config.timeout_seconds, entered_at),
            ),
            pause=interaction.request,  # its ladder (remind / escalate / request_changes at the deadline)
        )
        core.set_run_status(run_id, "paused_waiting_human", allowed_from=ACTIVE_RUN)
        # An action stored before the token was parked (or a failed send) is delivered now.
        current = core.store.get_interaction(run_id, interaction.interaction_id) or interaction
        if current.state.status == "answered":
            if self._has_action(current):
                self._release(current)
                return ReviewParked(interaction_id=current.interaction_id, delivered=True)
            current = self._reopen(current, config, reason="an answer without a review action was ignored")
        reviewed = self._reviewed(interaction)
        core.record(
            run_id,
            HumanInputRequested(
                interaction_id=interaction.interaction_id,
                node=gate,
                kind="review",
                prompt=config.prompt,
                timeout_seconds=config.timeout_seconds,
                review_url=url,
                warnings=warnings,
                turns_used=reviewed.turns_used,
                max_turns=config.max_turns,
            ),
        )
        core.record(run_id, RunPaused(gate=gate, kind="review"))
        core.notify(current, "human_input_requested", review_url=url, verdict=reviewed.verdict)
        return ReviewParked(interaction_id=interaction.interaction_id, delivered=False)

    def reconcile_wait(self, wait: ParkedWait) -> bool:
        """The reconciler: a stored action gets the send a failure lost. True if this call resumed it."""
        for iid in wait.interaction_ids:
            current = self.core.store.get_interaction(wait.run_id, iid)
            if current is not None and current.state.status == "answered" and self._has_action(current):
                return self._release(current, token=wait.task_token)
        return False

    def deadline_policy(self) -> InteractionPauseDeadline:
        """At the deadline a stored review action is sent."""
        return InteractionPauseDeadline(
            self.core, lambda current: self._output(current).model_dump() if self._has_action(current) else None
        )

    def act(
        self,
        run_id: str,
        decision: ReviewDecision,
        *,
        caller: str,
        node: str | None = None,
        groups: frozenset[str] = frozenset(),
    ) -> ReviewActionResult:
        core = self.core
        core.require_run(run_id)
        interaction = self._waiting_review(run_id, node)
        wait = core.store.get_wait(run_id, interaction.node)
        if wait is not None and wait.status == "parked" and interaction.interaction_id in wait.interaction_ids:
            core.refuse_if_late(interaction, decision.answers(), caller=caller, deadline=wait.deadline)
        config = self.config_of(interaction)
        turns = core.store.list_turns(run_id, interaction.interaction_id)
        reviewed = Reviewed.of(interaction, turns)
        allowed = reviewed.allowed(config.max_turns)
        self._refuse_disallowed(decision, reviewed, allowed, max_turns=config.max_turns)
        if decision.merges:
            self._refuse_unreviewed(config, reviewed, decision.seen_head, allowed)
        action = decision.action
        stored: dict[str, Any] = {
            "action": action,
            "reply": decision.reply,
            "message": decision.message,
            "merge_strategy": decision.merge_strategy or config.merge_strategy,
            "by": caller,
        }
        if action != "reply":  # the decision names the commit and diff it decides on, and why
            stored |= {"reviewed_head": reviewed.head, "diff_digest": reviewed.diff_digest, "reason": decision.reason}
        if config.approval is not None and action != "reply":  # a vote (baton/services/review/quorum.py)
            from baton.services.approvals import Voter
            from baton.services.review.quorum import ReviewQuorum

            vote = {k: v for k, v in stored.items() if k not in ("reply", "by")}
            return ReviewQuorum(self).vote(interaction, config.approval, vote, Voter(caller, groups))
        answered = core.store.transition_interaction(
            interaction,
            status_of(interaction.state, "answered", answer=stored, by=caller, at=core.now()),
        )
        core.record(run_id, self._answered(interaction, stored, by=caller))
        if decision.reply is not None:  # the reply is a turn of the dialogue
            iid, n = interaction.interaction_id, len(turns)
            turn = ReviewTurn(
                run_id=run_id, interaction_id=iid, n=n, role="operator", text=decision.reply, at=core.now(), by=caller
            )
            self._store_turn(turn, interaction.node, by=caller)
        try:
            resumed, pending = self._release(answered), False
        except SendFailedError:  # the action is stored: the reconciler sends it
            resumed, pending = False, True
        return ReviewActionResult(
            interaction_id=interaction.interaction_id,
            node=interaction.node,
            action=action,
            queued=True,
            resumed=resumed,
            delivery=delivery_of(resumed, pending=pending),
            reviewed_head=stored.get("reviewed_head"),
        )

    def _waiting_review(self, run_id: str, node: str | None) -> Interaction:
        """The review the operator acts on: 409 when none waits (or the companion or a merge is busy)."""
        interaction = self._latest(run_id, node)
        if interaction is None:
            raise ConflictError(
                f"run {run_id} is not waiting at a review gate" + (f" named '{node}'" if node else ""),
                details={"run_id": run_id},
            )
        if interaction.state.status == "timed_out":
            raise GoneError(
                f"the review at gate '{interaction.node}' timed out", details={"interaction": interaction.public()}
            )
        if interaction.state.status == "cancelled":  # its run was stopped
            raise closed_error(interaction)
        if interaction.state.status != "pending":
            busy = StoredAction.of(interaction).action
            raise ConflictError(
                f"the review at gate '{interaction.node}' is not waiting for the operator (last action: {busy}; "
                "the companion is answering, a merge is running or the gate finished); try again shortly",
                details={"interaction": interaction.public()},
            )
        return interaction

    @staticmethod
    def _refuse_disallowed(decision: ReviewDecision, reviewed: Reviewed, allowed: list[str], *, max_turns: int) -> None:
        used, verdict = reviewed.turns_used, reviewed.verdict
        if decision.action == "reply" and used >= max_turns:
            raise ConflictError(
                f"the dialogue reached max_turns ({max_turns}); only {', '.join(allowed)} are accepted now",
                details={"allowed": allowed, "max_turns": max_turns, "turns_used": used},
            )
        blocked = verdict_blocks_approval(verdict)
        if decision.action == "approve_merge" and blocked:
            raise ConflictError(
                "the companion's verdict is request_changes or lists blockers; approve_merge is refused. "
                "Use force_merge to merge anyway (with a reason; git safety guards still apply), or reply / "
                "request_changes",
                details={"verdict": verdict, "allowed": allowed},
            )
        if decision.action == "force_merge" and blocked and decision.reason is None:
            raise ValidationFailedError(
                f"force_merge over the companion's blockers needs a reason: set {KEY_REASON} to why it merges anyway",
                details={"path": KEY_REASON, "verdict": verdict},
            )

    def _refuse_unreviewed(
        self, config: GateConfig, reviewed: Reviewed, seen_head: str | None, allowed: list[str]
    ) -> None:
        """409 before a merge of anything but the reviewed commit (the merge build merges the pinned commit
        whatever the branch holds by then; this catches it early where the repository can be read)."""
        again = [a for a in allowed if a in ("reply", "request_changes")]
        details = {"reviewed_head": reviewed.head, "diff_digest": reviewed.diff_digest, "allowed": again}
        if seen_head is not None and reviewed.head is not None and seen_head != reviewed.head:
            raise ConflictError(
                f"you reviewed {seen_head[:12]} but the companion's latest review is of {reviewed.head[:12]}: "
                "reload the review and decide on what it shows",
                details={**details, "seen_head": seen_head},
            )
        tip = self._branch_tip(config)
        if tip is not None and reviewed.head is not None and tip != reviewed.head:
            raise ConflictError(
                f"the run branch {config.run_branch!r} moved to {tip} after the review of {reviewed.head[:12]}: "
                f"a merge now would take commits nobody reviewed. Send a reply ({KEY_ACTION}=reply) so the "
                "companion reviews the new head, then decide",
                details={**details, "run_branch": config.run_branch, "run_branch_head": tip},
            )
