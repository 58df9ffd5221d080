"""The answer side of a tool approval: `ToolApprovalAnswers`, its `AnswerPolicy`; its own step is the
passkey second factor before the decision or the vote."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.passkeys import WEBAUTHN_VERIFIED
from baton.contracts.questions import AnswerResult
from baton.contracts.tool_approvals import tool_spec
from baton.domain.ballot import vote_text
from baton.domain.tool_calls import StoredDecision, needs_second_factor
from baton.errors import ConflictError
from baton.events import InteractionAnswered
from baton.services.approvals import ApprovalService, Entry
from baton.services.at_deadline import AnswerPolicy, Write
from baton.services.deadlines import stop_interaction_timer
from baton.services.pause_answers import conflict

if TYPE_CHECKING:
    from baton.contracts.questions import ApprovalView
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.domain.ballot import Ballot, Decided
    from baton.models import Interaction
    from baton.services.core import Core

StoredAnswer = dict[str, Any]  # the answer as the approval stores it (`baton.domain.tool_calls.stored_decision`)


class DecideAgainError(ConflictError):
    """The answer's write lost (the approval was decided, or claimed, under it): read and decide again."""


class ToolApprovalAnswers(AnswerPolicy[StoredAnswer, AnswerResult, bool]):
    """`sent`: the answer as the operator sent it (what a passkey signs); `confirmed`: the passkey confirmed
    it, kept across the answer's retries (it is checked once)."""

    repeats_a_decider = True  # a quorum's decider's same decision again is answered as the first was

    def __init__(self, core: Core, *, sent: Any = None, passkey: dict[str, Any] | None = None, via: str | None = None):
        self.core, self.sent, self.passkey, self.via = core, sent, passkey, via
        self.confirmed = False

    # `check`: none here, it was checked as it was parsed against the approval's call (`stored_decision`)
    def refuse_if_late(self, pause: Interaction, answer: StoredAnswer, caller: str) -> None:
        """Then the last refusal before the decision or the vote: an approve of a call whose risk asks for a
        second factor is a 403 unless `passkey` verifies it."""
        super().refuse_if_late(pause, answer, caller)
        factor = self.core.second_factor
        allows = StoredDecision.model_validate(answer).allows
        if not self.confirmed and factor is not None and allows and needs_second_factor(tool_spec(pause)):
            factor.confirm(caller, pause.run_id, pause.interaction_id, self.sent, self.passkey)
            self.confirmed = True

    @staticmethod
    def quorum(pause: Interaction) -> ApprovalPolicy | None:
        return tool_spec(pause).approval

    @staticmethod
    def entry(pause: Interaction, policy: ApprovalPolicy, answer: StoredAnswer) -> Entry:
        side: Vote = "reject" if answer["decision"] == "deny" else "approve"  # an edit approves
        return Entry(vote_text(answer), side, tool_spec(pause).requested_by)

    @staticmethod
    def not_counted(pause: Interaction) -> ConflictError:
        return conflict(pause, f"tool approval {pause.interaction_id} was already decided: the vote is not counted")

    def counted(
        self, pause: Interaction, approval: ApprovalView, settled: bool | None, *, pending: bool
    ) -> AnswerResult:
        # a met tally is the decision: written by this settle, a concurrent vote's or the reconciler's
        decided = approval.decision is not None
        quorum = {"status": "answered" if decided else "pending", "queued": decided, "approval": approval}
        return self.view(pause, decided).model_copy(update=quorum)

    def settle(self, pause: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Decided with its side's last answer; True if this call decided it."""
        deciding = ballot.deciding_answer()
        return ApprovalService(self.core).settle_answered(
            pause, policy, ballot, deciding, lambda decided: self._release(decided).resumed
        )

    def write(
        self, pause: Interaction, answer: StoredAnswer, caller: str, decided: Decided | None
    ) -> Write[AnswerResult]:
        """The decision and its event (`second_factor` set only when a passkey confirmed it: an unset field
        stays out of the record), released by `_release`."""
        factor_said = {"second_factor": WEBAUTHN_VERIFIED} if self.confirmed else {}
        answered = InteractionAnswered(
            interaction_id=pause.interaction_id, node=pause.node, answer=answer, by=caller, via=self.via, **factor_said
        )
        return Write(at=self.core.now(), records=[self.core.new_event(pause.run_id, answered)], release=self._release)

    def _release(self, decided: Interaction) -> AnswerResult:
        stop_interaction_timer(self.core, decided)  # the deciding write won (an answer's, a quorum's): ladder moot
        return self.view(decided, True)  # delivered once stored: a tool approval has no token to send

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
