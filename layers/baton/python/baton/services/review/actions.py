"""The operator's actions on a review gate (a `ReviewDecision`; under a quorum, votes settled by
`baton/services/approvals.py`), the park of its task token and the reconciler's re-sends."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from baton.contracts.review import ReviewParked
from baton.contracts.runs import ReviewActionResult
from baton.domain.ballot import Voter, vote_text
from baton.domain.review_gate import MERGE_ACTIONS
from baton.domain.review_state import StoredAction
from baton.errors import ConflictError, GoneError
from baton.events import HumanInputRequested, RunPaused
from baton.models import ParkedWait, ReviewTurn, status_of
from baton.services.answer_outcomes import closed_error, delivery_of, send_or_pending
from baton.services.approvals import ApprovalService
from baton.services.at_deadline import InteractionPauseDeadline
from baton.services.deadlines import park_wait
from baton.services.review.gate import ReviewGate

if TYPE_CHECKING:
    from datetime import datetime

    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.domain.ballot import Ballot, Decided
    from baton.domain.review_decision import ReviewDecision
    from baton.events import EventPayload
    from baton.models import Interaction, InteractionStatus


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
        reviewed = self._reviewed(interaction)
        asked = HumanInputRequested(
            interaction_id=interaction.interaction_id,
            node=gate,
            kind="review",
            prompt=config.prompt,
            timeout_seconds=config.timeout_seconds,
            review_url=url,
            warnings=warnings,
            turns_used=reviewed.turns_used,
            max_turns=config.max_turns,
        )
        # The wait, its mark, the run paused and both events: one write. Before the re-read below, as the
        # await gate's park: an action stored after that read finds the wait and releases it (and the run).
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
            pause_at=core.now(),
            events=[core.new_event(run_id, asked), core.new_event(run_id, RunPaused(gate=gate, kind="review"))],
        )
        # An action stored before the token was parked (or a failed send) is delivered now.
        current = core.store.get_interaction(run_id, interaction.interaction_id) or interaction
        if current.state.status == "answered":
            if self._has_action(current):
                self._release(current)
                return ReviewParked(interaction_id=current.interaction_id, delivered=True)
            current = self._reopen(current, config, reason="an answer without a review action was ignored")
        core.notify(current, "human_input_requested", review_url=url, verdict=reviewed.verdict)
        return ReviewParked(interaction_id=interaction.interaction_id, delivered=False)

    def deadline_policy(self) -> InteractionPauseDeadline:
        """A stored review action is sent (at the deadline, and by the reconciler after a lost send)."""
        return InteractionPauseDeadline(self.core, self._output, self._has_action)

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
        interaction = self._waiting_review(run_id, node)  # a missing run is its 404
        wait, head = core.store.get_wait_and_head(run_id, interaction.node)  # the head: the decision's chain
        if wait is not None and wait.status == "parked" and interaction.interaction_id in wait.interaction_ids:
            core.refuse_if_late(interaction, decision.answers(), caller=caller, deadline=wait.deadline)
        config = self.config_of(interaction)
        turns = core.store.list_turns(run_id, interaction.interaction_id)
        reviewed = self._reviewed(interaction, turns)
        allowed = reviewed.refuse_disallowed(decision, max_turns=config.max_turns)
        if decision.merges:
            tip = self._branch_tip(config)
            reviewed.refuse_unreviewed(decision.seen_head, tip, run_branch=config.run_branch, allowed=allowed)
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
        if config.approval is not None and action != "reply":  # a vote
            vote = {k: v for k, v in stored.items() if k not in ("reply", "by")}
            requested_by = core.require_run(run_id).started_by
            return self._vote(interaction, config.approval, vote, Voter(caller, groups), requested_by=requested_by)
        answered = core.store.transition_interaction(  # the action and its event: one write
            interaction,
            status_of(interaction.state, "answered", answer=stored, by=caller, at=core.now()),
            with_records=[core.new_event(run_id, self._answered(interaction, stored, by=caller))],
            audit_head=head,
        )
        if decision.reply is not None:  # the reply is a turn of the dialogue
            iid, n = interaction.interaction_id, len(turns)
            turn = ReviewTurn(
                run_id=run_id, interaction_id=iid, n=n, role="operator", text=decision.reply, at=core.now(), by=caller
            )
            self._store_turn(turn, self._turn_recorded(turn, interaction.node, by=caller))
        # The turns read above give the output's verdict: the operator's reply turn is not the companion's.
        resumed, pending = send_or_pending(lambda: self._release(answered, turns=turns))
        return ReviewActionResult(
            interaction_id=interaction.interaction_id,
            node=interaction.node,
            action=action,
            queued=True,
            resumed=resumed,
            delivery=delivery_of(resumed, pending=pending),
            reviewed_head=stored.get("reviewed_head"),
        )

    def _vote(
        self,
        interaction: Interaction,
        policy: ApprovalPolicy,
        action: dict[str, Any],
        voter: Voter,
        *,
        requested_by: str | None,
    ) -> ReviewActionResult:
        """A quorum (`approval`): approve_merge / force_merge approve, request_changes rejects, a reply votes
        nothing; the vote meeting it stores its action and sends the token once (`_settle`)."""
        vote: Vote = "approve" if action["action"] in MERGE_ACTIONS else "reject"
        text = vote_text(action)
        ballot = ApprovalService(self.core).cast(interaction, policy, text, voter, requested_by=requested_by, vote=vote)
        settle = partial(self._settle, interaction, policy, ballot)
        resumed, pending = send_or_pending(settle) if ballot.decision else (False, False)
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

    def _settle(self, interaction: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Store the deciding vote's action (guarded by the met tally) and send the token: True if this
        call resumed the gate."""
        core = self.core
        chosen: dict[str, Any] = ballot.deciding_answer({"action": "request_changes"})

        def answered(current: Interaction, decided: Decided) -> tuple[InteractionStatus, EventPayload]:
            stored = chosen | {"reply": None, "by": decided.by}
            return decided.answered(current.state, stored, core.now()), self._answered(current, stored, by=decided.by)

        current = partial(core.store.get_interaction, interaction.run_id, interaction.interaction_id)
        return ApprovalService(core).settle(current, policy, ballot, answered, self._release)

    def settle_standing(self, interaction: Interaction) -> bool:
        """The reconciler: a pending review whose stored tally is met is decided and delivered."""
        policy = self.config_of(interaction).approval
        return ApprovalService(self.core).settle_standing(interaction, policy, partial(self._settle, interaction))

    def _waiting_review(self, run_id: str, node: str | None) -> Interaction:
        """The review the operator acts on: 409 when none waits (or the companion or a merge is busy)."""
        interaction = self._latest(run_id, node)
        if interaction is None:
            self.core.require_run(run_id)  # 404 for no such run (a run's review proves the run: not read then)
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
