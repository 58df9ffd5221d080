"""The operator's actions on a review gate (a `ReviewDecision`, taken by the one decision engine with
`ReviewAnswers`; under a quorum, votes settled by `baton/services/approvals.py`), the park of its task
token and the reconciler's re-sends."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from baton.contracts.review import ReviewParked
from baton.contracts.runs import ReviewActionResult
from baton.domain.answer_replies import delivery_of
from baton.domain.ballot import Voter, vote_text
from baton.domain.review_decision import ReviewDecision
from baton.domain.review_state import (
    StoredAction,
    action_answered,
    not_waiting,
    refuse_unless_waiting,
    review_url_of,
    turn_recorded,
)
from baton.errors import ConflictError
from baton.events import HumanInputRequested, RunPaused
from baton.models import ParkedWait
from baton.services.approvals import ApprovalService, Entry
from baton.services.at_deadline import AnswerPolicy, InteractionPauseDeadline, Write
from baton.services.deadlines import park_wait
from baton.services.decide import decide
from baton.services.review.gate import ReviewGate

if TYPE_CHECKING:
    from datetime import datetime

    from baton.contracts.questions import ApprovalView
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.domain.ballot import Ballot, Decided
    from baton.events import EventPayload
    from baton.models import Interaction, InteractionStatus


class ReviewActions(ReviewGate):
    def park(self, run_id: str, gate: str, token: str, entered_at: datetime | None = None) -> ReviewParked:
        """Park the token and ask the operator. A retried invoke (same token) records and notifies nothing."""
        core = self.core
        if (again := core.parked_again(run_id, gate, token)) is not None:
            return ReviewParked(interaction_id=again.interaction_ids[0], delivered=again.status == "released")
        interaction, config = self._require(run_id, gate)
        url, warnings = review_url_of(interaction, config)
        reviewed = self._reviewed(interaction)
        asked = HumanInputRequested(
            interaction_id=interaction.interaction_id,
            node=gate,
            kind="review",
            **config.model_dump(include={"prompt", "timeout_seconds", "max_turns"}),
            review_url=url,
            warnings=warnings,
            turns_used=reviewed.turns_used,
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
            if StoredAction.of(current).is_operator_action:
                self._release(current, reviewed)  # the verdict is the companion's: its turns were read above
                return ReviewParked(interaction_id=current.interaction_id, delivered=True)
            current = self._reopen(current, config, reason="an answer without a review action was ignored")
        core.notify(current, "human_input_requested", review_url=url, verdict=reviewed.verdict)
        return ReviewParked(interaction_id=interaction.interaction_id, delivered=False)

    def deadline_policy(self) -> InteractionPauseDeadline:
        """A stored review action is sent (at the deadline, and by the reconciler after a lost send)."""
        return InteractionPauseDeadline(self.core, self._output, lambda i: StoredAction.of(i).is_operator_action)

    def act(
        self,
        run_id: str,
        decision: ReviewDecision,
        *,
        caller: str,
        node: str | None = None,
        groups: frozenset[str] = frozenset(),
    ) -> ReviewActionResult:
        interaction = self._waiting_review(run_id, node)  # a missing run is its 404
        answers = ReviewAnswers(self, interaction, decision)
        return decide(self.core, answers, interaction, decision, Voter(caller, groups))

    def settle(self, interaction: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """A met tally: the deciding vote's action stored and the token sent; True if this call resumed it."""
        core = self.core
        chosen: dict[str, Any] = ballot.deciding_answer({"action": "request_changes"})

        def answered(current: Interaction, decided: Decided) -> tuple[InteractionStatus, EventPayload]:
            stored = chosen | {"reply": None, "by": decided.by}
            return decided.answered(current.state, stored, core.now()), action_answered(current, stored, by=decided.by)

        return ApprovalService(core).settle(interaction, policy, ballot, answered, self._release)

    def settle_standing(self, interaction: Interaction) -> bool:
        policy = self.config_of(interaction).approval
        return ApprovalService(self.core).settle_standing(interaction, policy, partial(self.settle, interaction))

    def _waiting_review(self, run_id: str, node: str | None) -> Interaction:
        """The review the operator acts on: 409 when none waits (or the companion or a merge is busy)."""
        interaction = self._latest(run_id, node)
        if interaction is None:
            self.core.require_run(run_id)  # 404 for no such run (a run's review proves the run: not read then)
            raise ConflictError(
                f"run {run_id} is not waiting at a review gate" + (f" named '{node}'" if node else ""),
                details={"run_id": run_id},
            )
        refuse_unless_waiting(interaction)
        return interaction


class ReviewAnswers(AnswerPolicy[ReviewDecision, ReviewActionResult, bool]):
    """One operator's decision on the review, read once: its parked `wait`, the run's chain head (the
    decision's write is chained after it), the dialogue (`reviewed`). A reply is one answer; any other action
    on a gate with an `approval` is a vote."""

    def __init__(self, gate: ReviewActions, review: Interaction, decision: ReviewDecision) -> None:
        self.gate, self.core, self.decision = gate, gate.core, decision
        self.wait, self.audit_head = self.core.store.get_wait_and_head(review.run_id, review.node)
        self.config, self.reviewed = gate.config_of(review), gate._reviewed(review)

    def check(self, review: Interaction, decision: ReviewDecision) -> None:
        """409/422 for an action the dialogue does not allow; a merge of anything but the reviewed commit."""
        allowed = self.reviewed.refuse_disallowed(decision, max_turns=self.config.max_turns)
        if decision.merges:
            tip = self.gate._branch_tip(self.config)
            self.reviewed.refuse_unreviewed(decision.seen_head, tip, run_branch=self.config.run_branch, allowed=allowed)

    def refuse_if_late(self, review: Interaction, decision: ReviewDecision, caller: str) -> None:
        """Late against the parked wait's deadline (a review not parked yet has none)."""
        wait = self.wait
        if wait is not None and wait.status == "parked" and review.interaction_id in wait.interaction_ids:
            self.core.refuse_if_late(review, decision.answers(), caller=caller, deadline=wait.deadline)

    def is_repeat(self, current: Interaction, decision: ReviewDecision, caller: str) -> bool:
        return False  # each action moves the dialogue on: the same one again is refused as not waiting

    def quorum(self, review: Interaction) -> ApprovalPolicy | None:
        return None if self.decision.action == "reply" else self.config.approval

    def _stored(self, by: str) -> StoredAction:
        return StoredAction.decided(self.decision, self.reviewed, merge_strategy=self.config.merge_strategy, by=by)

    def entry(self, review: Interaction, policy: ApprovalPolicy, decision: ReviewDecision) -> Entry:
        """approve_merge / force_merge approve, request_changes rejects; the run's starter may not vote."""
        action = self._stored(by="").model_dump(exclude_unset=True, exclude={"reply", "by"})  # who: the ballot's
        vote: Vote = "approve" if decision.merges else "reject"
        return Entry(vote_text(action), vote, self.core.require_run(review.run_id).started_by)

    def settle(self, review: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        return self.gate.settle(review, policy, ballot)

    def not_counted(self, review: Interaction) -> ConflictError:
        current = self.core.store.get_interaction(review.run_id, review.interaction_id) or review
        return ConflictError(
            f"the review at gate '{review.node}' is already decided: the vote is not counted",
            details={"interaction": current.public()},
        )

    def counted(
        self, review: Interaction, approval: ApprovalView, resumed: bool | None, *, pending: bool
    ) -> ReviewActionResult:
        current = self.core.store.get_interaction(review.run_id, review.interaction_id) or review
        decided = current.state.status != "pending" and approval.decision is not None
        counted = {"queued": decided, "status": "answered" if decided else "pending", "approval": approval}
        voted = self.view(current, bool(resumed), pending=pending)
        return voted.model_copy(update=counted | {"reviewed_head": self.reviewed.head})

    def write(
        self, review: Interaction, decision: ReviewDecision, caller: str, decided: Decided | None
    ) -> Write[ReviewActionResult]:
        """The action and its event, chained after the head read with the wait."""
        stored = self._stored(caller).stored()
        event = self.core.new_event(review.run_id, action_answered(review, stored, by=caller))
        release = partial(self._release, caller=caller)
        return Write(at=self.core.now(), records=[event], release=release, audit_head=self.audit_head, stored=stored)

    def _release(self, answered: Interaction, *, caller: str) -> ReviewActionResult:
        """A reply is a turn of the dialogue; then the token is sent. The output's verdict is from the turns
        read before the reply: the operator's turn is not the companion's."""
        gate, reply = self.gate, self.decision.reply
        if reply is not None:
            turn = self.reviewed.operator_turn(answered, reply, at=self.core.now(), by=caller)
            gate._store_turn(turn, turn_recorded(turn, answered.node, by=caller))
        return self.view(answered, gate._release(answered, self.reviewed))

    def already(self, current: Interaction, *, racing: bool) -> ConflictError:
        if current.state.status == "pending":  # the write lost to no action (the decision log busy): again
            return ConflictError(
                f"the review at gate '{current.node}' changed while this action was written; send it again",
                details={"interaction": current.public()},
            )
        return not_waiting(current)

    def view(self, answered: Interaction, resumed: bool, *, pending: bool = False) -> ReviewActionResult:
        return ReviewActionResult(
            interaction_id=answered.interaction_id,
            node=answered.node,
            action=self.decision.action,
            queued=True,
            resumed=resumed,
            delivery=delivery_of(resumed, pending=pending),
            reviewed_head=StoredAction.of(answered).reviewed_head,
        )
