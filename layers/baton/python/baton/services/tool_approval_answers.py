"""The answer side of a tool approval: `ToolApprovalAnswers`, the kind's `AnswerPolicy`
(baton.services.at_deadline), walked by the one engine `baton.services.decide` as every kind's answer is;
its own steps are the passkey second factor before the decision and the quorum vote on its digest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.passkeys import WEBAUTHN_VERIFIED
from baton.contracts.questions import AnswerResult
from baton.contracts.tool_approvals import tool_spec
from baton.domain.ballot import vote_text
from baton.domain.tool_calls import StoredDecision, needs_second_factor
from baton.errors import ConflictError
from baton.events import InteractionAnswered
from baton.services.approvals import ApprovalService
from baton.services.at_deadline import Write
from baton.services.deadlines import stop_interaction_timer
from baton.services.pause_answers import conflict

if TYPE_CHECKING:
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.domain.ballot import Ballot, Decided, Voter
    from baton.models import Interaction
    from baton.services.core import Core

StoredAnswer = dict[str, Any]  # the answer as the approval stores it (`baton.domain.tool_calls.stored_decision`)


class DecideAgainError(ConflictError):
    """The answer's write lost (the approval was decided, or claimed, under it): read and decide again."""


class ToolApprovalAnswers:
    """A tool approval's `AnswerPolicy`. `sent`: the answer as the operator sent it (what a passkey signs);
    `confirmed`: the passkey confirmed it, kept across the answer's retries (it is checked once)."""

    def __init__(self, core: Core, *, sent: Any = None, passkey: dict[str, Any] | None = None, via: str | None = None):
        self.core, self.sent, self.passkey, self.via = core, sent, passkey, via
        self.confirmed = False

    def check(self, pause: Interaction, answer: StoredAnswer) -> None:
        """Checked as it was parsed against the approval's call (`stored_decision`: 422 at the field)."""

    def refuse_if_late(self, pause: Interaction, answer: StoredAnswer, caller: str) -> None:
        """410 past the deadline (kept late); then the last refusal before the decision or the vote: an
        approve of a call whose risk asks for a second factor is a 403 unless `passkey` verifies it."""
        self.core.refuse_if_late(pause, answer, caller=caller, deadline=pause.expires_at)
        factor = self.core.second_factor
        allows = StoredDecision.model_validate(answer).allows
        if not self.confirmed and factor is not None and allows and needs_second_factor(tool_spec(pause)):
            factor.confirm(caller, pause.run_id, pause.interaction_id, self.sent, self.passkey)
            self.confirmed = True

    def refuse_if_ended(self, pause: Interaction, answer: StoredAnswer, caller: str) -> None:
        self.core.refuse_if_ended(pause, answer, caller=caller, interaction=pause.public())

    @staticmethod
    def is_repeat(current: Interaction, answer: StoredAnswer, caller: str) -> bool:
        st = current.state
        return st.status == "answered" and st.answer == answer and st.answered_by == caller

    def repeat(self, current: Interaction, answer: StoredAnswer, caller: str) -> AnswerResult | None:
        """The same caller's accepted decision again: answered as the first was (nothing is sent)."""
        return self.view(current, True) if self.is_repeat(current, answer, caller) else None

    @staticmethod
    def quorum(pause: Interaction) -> ApprovalPolicy | None:
        return tool_spec(pause).approval

    def vote(self, pause: Interaction, policy: ApprovalPolicy, answer: StoredAnswer, voter: Voter) -> AnswerResult:
        """One vote (approve and edit approve, deny rejects; the asking agent and non-approvers get a 403);
        the vote meeting the quorum decides it with the deciding side's last answer."""
        side: Vote = "reject" if answer["decision"] == "deny" else "approve"
        requested_by = tool_spec(pause).requested_by
        approvals = ApprovalService(self.core)
        ballot = approvals.cast(pause, policy, vote_text(answer), voter, requested_by=requested_by, vote=side)
        if ballot.outcome == "closed":
            raise conflict(pause, f"tool approval {pause.interaction_id} was already decided: the vote is not counted")
        if ballot.decision is not None:
            self.settle(pause, policy, ballot)
        # a met tally is the decision: written by this settle, a concurrent vote's or the reconciler's
        decided = ballot.decision is not None
        quorum = {"status": "answered" if decided else "pending", "queued": decided, "approval": ballot.view(policy)}
        return self.view(pause, decided).model_copy(update=quorum)

    def settle(self, pause: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Decide a met tally (guarded by it) with its side's last answer; True if this call decided it."""
        return ApprovalService(self.core).settle_answered(
            pause, policy, ballot, ballot.deciding_answer(), self._stop_timer
        )

    def _stop_timer(self, answered: Interaction) -> bool:
        """The settling write's winner: the approval's ladder timer is moot now."""
        stop_interaction_timer(self.core, answered)
        return True

    def write(
        self, pause: Interaction, answer: StoredAnswer, caller: str, decided: Decided | None
    ) -> Write[AnswerResult]:
        """The decision and its event (`second_factor` set only when a passkey confirmed it: an unset field
        stays out of the record); once written, its ladder's timer stopped."""
        factor_said = {"second_factor": WEBAUTHN_VERIFIED} if self.confirmed else {}
        answered = InteractionAnswered(
            interaction_id=pause.interaction_id, node=pause.node, answer=answer, by=caller, via=self.via, **factor_said
        )

        def release(written: Interaction) -> AnswerResult:
            stop_interaction_timer(self.core, written)  # this write won: its ladder is moot
            return self.view(written, True)

        return Write(at=self.core.now(), records=[self.core.new_event(pause.run_id, answered)], release=release)

    @staticmethod
    def already(current: Interaction, *, racing: bool) -> ConflictError:
        if racing:  # decide again on what is stored now: a repeat, a late answer or the 409
            return DecideAgainError(f"tool approval {current.interaction_id} changed under this answer")
        return conflict(current, f"tool approval {current.interaction_id} was already decided")

    @staticmethod
    def view(answered: Interaction, resumed: bool, *, pending: bool = False) -> AnswerResult:
        """What the operator is told: decided (a tool approval has no token to send: never pending)."""
        return AnswerResult(
            interaction_id=answered.interaction_id, node=answered.node, status="answered", queued=True, resumed=resumed
        )
