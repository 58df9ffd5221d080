"""The answer side of an `ask` (a hosted pause or an agent's blocking ask): `PauseAnswers` is the kind's
`AnswerPolicy` (baton.services.at_deadline), its quorum vote included."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton.contracts.runs import PauseOutput, ResumeResult
from baton.domain.approval import vote_of
from baton.domain.ladder import AnswerCheck
from baton.errors import ConflictError, ValidationFailedError, winner
from baton.events import InteractionAnswered, RunResumed
from baton.models import PauseRequest
from baton.notify.model import DECISION_KEY
from baton.services.answer_outcomes import SendFailedError, delivery_of
from baton.services.approvals import ApprovalService

if TYPE_CHECKING:
    from baton.domain.approval import ApprovalPolicy
    from baton.models import Interaction
    from baton.services.approvals import Ballot, Decided, Voter
    from baton.services.at_deadline import AnswerPolicy
    from baton.services.core import Core

Answers = dict[str, Any]


def conflict(i: Interaction, message: str) -> ConflictError:
    """A 409 with the pause as stored and who won it."""
    st = i.state
    won = winner(status=st.status, value=st.answer, by=st.answered_by, at=st.answered_at)
    return ConflictError(message, details={"interaction": i.public(), "winner": won})


class PauseAnswers:
    """The `AnswerPolicy` of an `ask` (a hosted pause or a blocking ask)."""

    def __init__(self, core: Core) -> None:
        self.core = core

    def check(self, pause: Interaction, answer: Answers) -> None:
        # A blocking ask with options takes only its options, by the rule its default is checked with.
        req = pause.request
        if req.kind == "ask":
            AnswerCheck(kind="answers", options=req.options, allow_free_text=req.allow_free_text).check_answers(
                answer, path="answers"
            )

    def refuse_if_late(self, pause: Interaction, answer: Answers, caller: str) -> None:
        self.core.refuse_if_late(pause, answer, caller=caller, deadline=pause.expires_at)

    @staticmethod
    def is_repeat(current: Interaction, answer: Answers, caller: str) -> bool:
        st = current.state
        return st.status == "answered" and st.answer == answer and st.answered_by == caller

    @staticmethod
    def quorum(pause: Interaction) -> ApprovalPolicy | None:
        return pause.request_as(PauseRequest).approval if pause.request.kind == "ask" else None

    @staticmethod
    def output(answered: Interaction) -> PauseOutput:
        st = answered.state
        return PauseOutput(
            interaction_id=answered.interaction_id,
            node=answered.request.node,
            answers=st.answer,
            answered_by=st.answered_by,
            answered_at=st.answered_at,
        )

    @staticmethod
    def view(answered: Interaction, resumed: bool, *, pending: bool = False) -> ResumeResult:
        return ResumeResult(
            interaction_id=answered.interaction_id,
            node=answered.request.node,
            queued=True,
            resumed=resumed,
            delivery=delivery_of(resumed, pending=pending),
        )

    def vote(self, pause: Interaction, policy: ApprovalPolicy, answer: Answers, voter: Voter) -> ResumeResult:
        """Each resume of a quorum pause is one vote, under answers.decision; the requester (a hosted run's
        starter, the asking agent) and non-approvers get a 403; the vote meeting the quorum answers the
        pause with its deciders' answers and delivers it (`settle`); a vote after that is a 409."""
        cast = vote_of(policy, pause.request.options, answer.get(DECISION_KEY))
        if cast is None:
            expected = pause.request.options or ["approve", "reject"]
            raise ValidationFailedError(
                f"this pause needs {policy.approvals} approval(s): put your vote in answers.{DECISION_KEY}, one of "
                f"{expected}",
                details={"path": f"answers.{DECISION_KEY}", "options": expected},
            )
        requested_by = pause.request_as(PauseRequest).requested_by
        text = json.dumps(answer, sort_keys=True, separators=(",", ":"))
        ballot = ApprovalService(self.core).cast(pause, policy, text, voter, requested_by=requested_by, vote=cast[0])
        try:
            resumed, pending = (self.settle(pause, policy, ballot) if ballot.decision else False), False
        except SendFailedError:  # the deciding vote is stored: the reconciler sends it
            resumed, pending = False, True
        current = self.core.store.get_interaction(pause.run_id, pause.interaction_id) or pause
        status = current.state.status
        if ballot.outcome == "closed":
            raise conflict(
                current, f"the pause at node '{pause.request.node}' is already {status}: the vote is not counted"
            )
        return ResumeResult(
            interaction_id=pause.interaction_id,
            node=pause.request.node,
            queued=status == "answered",
            resumed=resumed,
            delivery=delivery_of(resumed, pending=pending),
            status="answered" if status == "answered" else "pending",
            approval=ballot.view(policy),
        )

    def settle(self, pause: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Answer a pause whose tally met `ballot.decision` and deliver it. True if this call resumed the
        workflow or the blocking ask's waiter."""
        answers = ballot.deciding_answer()
        if answers is None:
            answers = {DECISION_KEY: "approve" if ballot.decision == "approved" else "reject"}

        def answered(current: Interaction, decided: Decided) -> tuple[Answers, InteractionAnswered]:
            event = InteractionAnswered(
                interaction_id=current.interaction_id, node=current.request.node, answer=answers, by=decided.by
            )
            return answers, event

        return ApprovalService(self.core).settle(pause, policy, ballot, answered=answered, deliver=self.deliver)

    def settle_standing(self, pause: Interaction) -> bool:
        """The reconciler: a pending quorum pause whose stored tally is met is answered and delivered."""
        policy = self.quorum(pause)
        if policy is None:
            return False
        return ApprovalService(self.core).settle_standing(pause, policy, lambda b: self.settle(pause, policy, b))

    def deliver(self, answered: Interaction, *, hosted: bool | None = None) -> bool:
        """Send an answered pause's token; a blocking ask (no token) lets its waiter go instead."""
        core = self.core
        run_id, node = answered.run_id, answered.request.node
        if hosted is None:
            hosted = core.require_run(run_id).hosted
        resumed = core.release_gate(run_id, node, self.output(answered))
        if not resumed and not hosted and core.store.get_wait(run_id, node) is None:
            resume_asking_run(core, run_id, node)  # a blocking ask: no token; its waiter reads the answer
            resumed = True
        return resumed


def resume_asking_run(core: Core, run_id: str, node: str) -> None:
    """A blocking ask's run goes on once it is answered (run_resumed only if the run moved)."""
    if core.set_run_status(run_id, "running", allowed_from={"paused_waiting_human"}):
        core.record(run_id, RunResumed(gate=node, kind="ask"))


def _conforms(policy: PauseAnswers) -> AnswerPolicy[Answers, PauseOutput, ResumeResult]:
    return policy  # mypy holds PauseAnswers to the protocol
