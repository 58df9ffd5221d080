"""The answer side of an `ask` (a hosted pause or an agent's blocking ask): `PauseAnswers`, its `AnswerPolicy`."""

from __future__ import annotations

from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Any

from baton.contracts.runs import PauseOutput, ResumeResult
from baton.domain.answer_replies import delivery_of
from baton.domain.ballot import vote_text
from baton.domain.ladder import AnswerCheck
from baton.domain.pause_rules import pause_vote
from baton.errors import ConflictError, winner
from baton.events import InteractionAnswered, RunResumed
from baton.models import PauseRequest
from baton.notify.model import DECISION_KEY
from baton.ports import WaitStillOpen
from baton.services.answer_outcomes import send_or_pending
from baton.services.approvals import ApprovalService, Entry
from baton.services.at_deadline import AnswerPolicy, Write
from baton.services.deadlines import stop_interaction_timer

if TYPE_CHECKING:
    from baton.contracts.questions import ApprovalView
    from baton.domain.approval import ApprovalPolicy
    from baton.domain.ballot import Ballot, Decided
    from baton.models import Interaction, ParkedWait
    from baton.ports import RunSnapshot
    from baton.services.core import Core

Answers = dict[str, Any]


def conflict(i: Interaction, message: str, **details: Any) -> ConflictError:
    """A 409 with the pause as stored and who won it (`details` first: a question's says its answer)."""
    st = i.state
    won = winner(status=st.status, value=st.answer, by=st.answered_by, at=st.answered_at)
    return ConflictError(message, details={**details, "interaction": i.public(), "winner": won})


class PauseAnswers(AnswerPolicy[Answers, ResumeResult, bool]):
    """`snapshot`: the run as a resume read it (its chain head, its waits, is it hosted; None: read when
    needed); `wait`: the parked pause it names (its write guarded by the wait still open, its send with no read)."""

    def __init__(self, core: Core, *, snapshot: RunSnapshot | None = None, wait: ParkedWait | None = None) -> None:
        self.core, self.wait = core, wait
        # the answer's chain head as the snapshot read it (a stale one loses the head's race and is re-read)
        self.audit_head = snapshot.audit_head if snapshot is not None else None
        self.waits = snapshot.waits if snapshot is not None else None
        self.hosted = snapshot.run.hosted if snapshot is not None and snapshot.run is not None else None

    def check(self, pause: Interaction, answer: Answers) -> None:
        # A blocking ask with options takes only its options, by the rule its default is checked with.
        req = pause.request
        if req.kind == "ask":
            AnswerCheck(kind="answers", options=req.options, allow_free_text=req.allow_free_text).check_answers(
                answer, path="answers"
            )

    def repeat(self, current: Interaction, answer: Answers, caller: str) -> ResumeResult | None:
        """The stored answer is resent (a retry after a failed send); only the same caller's repeat is
        answered as the first was (another's lost the race; on a quorum pause it is a vote)."""
        st = current.state
        if st.status != "answered" or st.answer != answer:
            return None
        resumed, pending = send_or_pending(partial(self._send, current))
        if not self.is_repeat(current, answer, caller):
            return None
        return self.view(current, not pending and (resumed or self._delivered(current)), pending=pending)

    def _send(self, answered: Interaction) -> bool:
        """Send to the wait a resume read, with the run's other waits as its snapshot read them."""
        output, node = PauseOutput.of(answered), answered.request.node
        siblings = self.waits if self.wait is not None else None
        return self.core.release_gate(answered.run_id, node, output, wait=self.wait, siblings=siblings)

    def _delivered(self, answered: Interaction) -> bool:
        """Was the answer delivered (its wait released), or is there no token (a blocking ask)?"""
        wait = self.core.store.get_wait(answered.run_id, answered.request.node)
        if wait is None:
            return True
        return wait.status == "released" and answered.interaction_id in wait.interaction_ids

    def write(self, pause: Interaction, answer: Answers, caller: str, decided: Decided | None) -> Write[ResumeResult]:
        """The answer and its event, chained after the snapshot's head; guarded by the parked wait still
        open before its deadline (its send then needs no read)."""
        core, wait = self.core, self.wait
        guards = [WaitStillOpen(wait, core.now())] if wait is not None else []
        node = pause.request.node
        event = InteractionAnswered(interaction_id=pause.interaction_id, node=node, answer=answer, by=caller)
        records = [core.new_event(pause.run_id, event)]

        def release(answered: Interaction) -> ResumeResult:
            resumed = self._send(answered) if wait is not None else self.deliver(answered)
            return self.view(answered, resumed)

        return Write(at=core.now(), records=records, release=release, guards=guards, audit_head=self.audit_head)

    def already(self, current: Interaction, *, racing: bool) -> ConflictError:
        by = f" by {current.state.answered_by}" if racing else ""
        return conflict(current, f"run {current.run_id} was already resumed at node '{current.request.node}'{by}")

    @staticmethod
    def quorum(pause: Interaction) -> ApprovalPolicy | None:
        return pause.request_as(PauseRequest).approval if pause.request.kind == "ask" else None

    @staticmethod
    def view(answered: Interaction, resumed: bool, *, pending: bool = False) -> ResumeResult:
        return ResumeResult(
            interaction_id=answered.interaction_id,
            node=answered.request.node,
            queued=True,
            resumed=resumed,
            delivery=delivery_of(resumed, pending=pending),
        )

    @staticmethod
    def entry(pause: Interaction, policy: ApprovalPolicy, answer: Answers) -> Entry:
        vote = pause_vote(policy, pause.request.options, answer)
        return Entry(vote_text(answer), vote, pause.request_as(PauseRequest).requested_by)

    def not_counted(self, pause: Interaction) -> ConflictError:
        current = self.core.store.get_interaction(pause.run_id, pause.interaction_id) or pause
        said = f"the pause at node '{pause.request.node}' is already {current.state.status}: the vote is not counted"
        return conflict(current, said)

    def counted(
        self, pause: Interaction, approval: ApprovalView, resumed: bool | None, *, pending: bool
    ) -> ResumeResult:
        current = self.core.store.get_interaction(pause.run_id, pause.interaction_id) or pause
        answered = current.state.status == "answered"
        quorum = {"queued": answered, "status": "answered" if answered else "pending", "approval": approval}
        return self.view(current, bool(resumed), pending=pending).model_copy(update=quorum)

    def settle(self, pause: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """True if this call resumed the workflow or the blocking ask's waiter."""
        answers = ballot.deciding_answer({DECISION_KEY: "approve" if ballot.decision == "approved" else "reject"})
        return ApprovalService(self.core).settle_answered(pause, policy, ballot, answers, self.deliver)

    def deliver(self, answered: Interaction) -> bool:
        """Send an answered pause's token; a blocking ask (no token) lets its waiter go instead."""
        core = self.core
        run_id, node = answered.run_id, answered.request.node
        hosted = self.hosted if self.hosted is not None else core.require_run(run_id).hosted
        # an agent's run has no park: a node with no wait in the snapshot has none to send (a blocking ask)
        unparked = not hosted and self.waits is not None and all(w.gate != node for w in self.waits)
        # read once: the send's wait, or none (a blocking ask)
        wait = None if unparked else core.store.get_wait(run_id, node)
        if wait is not None:
            return core.release_gate(run_id, node, PauseOutput.of(answered), wait=wait)
        if hosted:
            return False
        resume_asking_run(core, run_id, node)  # a blocking ask: no token; its waiter reads the answer
        stop_interaction_timer(core, answered)  # its ladder's timer (it settles it: a winner's call)
        return True


def resume_asking_run(core: Core, run_id: str, gate: str, kind: str = "ask") -> None:
    """A blocking ask's run (or one the await tool paused: `kind` "await") goes on once it is answered
    (run_resumed only if the run moved: one write of both, conditional on the run paused)."""
    resumed = core.new_event(run_id, RunResumed(gate=gate, kind=kind))
    with suppress(ConflictError):  # moved by another request meanwhile: left alone
        running = {"status": "running", "updated_at": core.now()}
        core.store.update_run_recording(run_id, running, events=[resumed], allowed_from={"paused_waiting_human"})
