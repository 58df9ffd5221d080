"""The answer side of an async question: `AnswerQuestions.answer` reads the run's open part once and walks
`QuestionAnswers`, the kind's `AnswerPolicy`, by the one engine `baton.services.decide`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.questions import AnswerResult
from baton.domain import gate_answers
from baton.domain.ballot import Voter, release_of
from baton.domain.deadline import OPEN_WAIT_STATUSES
from baton.domain.questions import answer_text, answered_event, check_answer, in_scope, late_after_gate, message_text
from baton.errors import ConflictError, GoneError, NotFoundError
from baton.models import TERMINAL_RUN_STATES, Message, QuestionRequest
from baton.ports import GuardFailedError, RunSnapshot
from baton.services.approvals import Entry
from baton.services.at_deadline import AnswerPolicy, Write
from baton.services.deadlines import stop_interaction_timer
from baton.services.decide import decide
from baton.services.pause_answers import conflict
from baton.services.tool_awaits import ToolAwaits

if TYPE_CHECKING:
    from baton.contracts.questions import ApprovalView
    from baton.domain.approval import ApprovalPolicy
    from baton.domain.ballot import Ballot, Decided
    from baton.models import Event, Interaction, ParkedWait

ANSWER_ATTEMPTS = 5  # an answer whose guard failed (the run changed under it) reads again and decides again


class AnswerQuestions(ToolAwaits):
    """Answering a question (the base of `QuestionService`, over the gates and tool awaits it releases)."""

    def answer(
        self,
        run_id: str,
        interaction_id: str,
        answer: Any,
        *,
        caller: str,
        groups: frozenset[str] = frozenset(),
        decided: Decided | None = None,
        via: str | None = None,
    ) -> AnswerResult:
        """`decide` on one read of the run's open part (two calls before the send); a failed guard (the run
        changed under it): read and decide again. `via`: the channel it came by, kept in its decision."""
        voter = Voter(caller, groups)
        for _attempt in range(ANSWER_ATTEMPTS):
            snapshot = self.core.store.snapshot_run(run_id)
            if snapshot.run is None:
                raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
            question = next((i for i in snapshot.pending if i.interaction_id == interaction_id), None)
            if question is None or question.request.kind != "question":
                question = self.core.interaction_of(run_id, interaction_id, "question")  # not pending: to say why not
            try:
                policy = QuestionAnswers(self, snapshot, via=via)
                return decide(self.core, policy, question, answer, voter, decided=decided)
            except GuardFailedError:
                continue
        raise ConflictError(
            f"question {interaction_id} of run {run_id} is changing too fast to answer; send the answer again",
            details={"run_id": run_id, "interaction_id": interaction_id, "reason": "contention"},
        )

    def settle_standing(self, question: Interaction) -> bool:
        return QuestionAnswers(self, RunSnapshot(run=None)).settle_standing(question)  # settle reads the run

    def _message(self, question: Interaction, text: str) -> Message:
        """The message an answered question leaves in its asking node's queue."""
        return Message(
            message_id=self.core.ids.new_id(),
            run_id=question.run_id,
            node=question.request.node,
            text=text,
            created_at=self.core.now(),
            interaction_id=question.interaction_id,
        )


class QuestionAnswers(AnswerPolicy[Any, AnswerResult, AnswerResult | None]):
    """On the run as `snapshot` read it: the answer is checked against the await gates of its scope
    (`refuse_if_late` keeps them for the write), carried onto them, queued for the asking node, released."""

    def __init__(self, questions: AnswerQuestions, snapshot: RunSnapshot, *, via: str | None = None) -> None:
        self.questions, self.via = questions, via
        self.core = questions.core
        self.snapshot = snapshot
        self.gates: list[ParkedWait] = []

    @staticmethod
    def check(question: Interaction, answer: Any) -> None:
        check_answer(answer, question.request.options, allow_free_text=question.request.allow_free_text)

    def refuse_if_late(self, question: Interaction, answer: Any, caller: str) -> None:
        """The unreleased await gates waiting on `question`: it is answered under each one's deadline (after
        it, or once the deadline path closed the gate, a 410 kept as late); a hosted run that ended: 410."""
        core, run = self.core, self.snapshot.run
        self.gates = [w for w in self._gates_of(question) if w.status != "released"]
        for wait in self.gates:
            closed = wait.status != "parked"
            core.refuse_if_late(question, answer, caller=caller, deadline=core.now() if closed else wait.deadline)
        if run is not None and run.status in TERMINAL_RUN_STATES and run.hosted:
            raise GoneError(
                f"run {run.run_id} is {run.status}; nothing is waiting for this answer",
                details={"run_id": run.run_id, "status": run.status},
            )

    def refuse_if_ended(self, question: Interaction, answer: Any, caller: str) -> None:
        """Its gate timed it out: kept on the record as late, never delivered; its default taken: late too."""
        st = question.state
        if st.status == "timed_out":
            late, gone = late_after_gate(question, answer, caller, st.answered_at or self.core.now())
            self.core.record(question.run_id, late)
            raise gone
        self.core.refuse_if_ended(question, answer, caller=caller)

    def repeat(self, current: Interaction, answer: Any, caller: str) -> AnswerResult | None:
        """A retry of an accepted answer gets the first one's result from the stored answer, with no record:
        the gates parked on its scope before it count as released once resumed; one still parked (the
        first send failed or is under way) is released now (conditionally: never twice)."""
        if not self.is_repeat(current, answer, caller):
            return None
        gates = [w for w in self._gates_of(current) if w.parked_at <= (current.state.answered_at or "")]
        open_gates = [w for w in gates if w.status in OPEN_WAIT_STATUSES]
        sent, unsent = self.questions._release_gates(current.run_id, open_gates)
        released = [w.gate for w in gates if w.status == "released" or w.gate in sent]
        return self._after_answer(current, released, unsent)

    @staticmethod
    def quorum(question: Interaction) -> ApprovalPolicy | None:
        return question.request_as(QuestionRequest).approval if question.request.kind == "question" else None

    @staticmethod
    def entry(question: Interaction, policy: ApprovalPolicy, answer: Any) -> Entry:
        return Entry(answer, None, question.request_as(QuestionRequest).requested_by)  # its options decide the side

    def settle(self, question: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> AnswerResult | None:
        """Answered as the deciding vote gives it; None: another vote (or the reconciler) answered it first."""
        decided = release_of(question, policy, ballot)
        try:
            run_id, iid = question.run_id, question.interaction_id
            return self.questions.answer(run_id, iid, decided.answer, caller=decided.by, decided=decided)
        except ConflictError:
            return None

    def not_counted(self, question: Interaction) -> ConflictError:
        return self.already(self.core.store.get_interaction(question.run_id, question.interaction_id) or question)

    def counted(
        self, question: Interaction, approval: ApprovalView, decided: AnswerResult | None, *, pending: bool
    ) -> AnswerResult:
        # the decided answer's result, else nothing queued: pending (or answered by a concurrent vote's tally)
        if decided is not None:
            return decided.model_copy(update={"approval": approval})
        status = "answered" if approval.decision is not None else "pending"
        return self.view(question, False).model_copy(update={"status": status, "queued": False, "approval": approval})

    def write(self, question: Interaction, answer: Any, caller: str, decided: Decided | None) -> Write[AnswerResult]:
        """Guarded by the gates of its scope and carried onto them (`gate_answers.answer_on_gates`); the
        gates it leaves with nothing pending are released from their carried answers (no read after it)."""
        snapshot, run_id, now = self.snapshot, question.run_id, self.core.now()
        on_gates = gate_answers.answer_on_gates(question, answer, self.gates, snapshot, now=now)

        def release(answered: Interaction) -> AnswerResult:
            released, unsent = self.questions._release_gates(
                run_id, on_gates.ready, known=on_gates.outputs, siblings=snapshot.waits
            )
            result = self._after_answer(answered, released, unsent)
            stop_interaction_timer(self.core, answered)  # this write won: its ladder or default is moot
            return result

        event = answered_event(question, answer, caller, self.via)  # written with the message, all or nothing
        message = self.questions._message(question, message_text(question, answer))
        records: list[Message | Event] = [message, self.core.new_event(run_id, event)]
        return Write(at=now, records=records, release=release, guards=on_gates.guards, audit_head=snapshot.audit_head)

    def _gates_of(self, question: Interaction) -> list[ParkedWait]:
        return [w for w in self.snapshot.waits if w.kind == "await" and in_scope(question, w.from_node)]

    def _after_answer(self, answered: Interaction, released: list[str], unsent: list[str]) -> AnswerResult:
        """Complete the tool-form awaits the answer completes; `unsent`: gates whose send failed (pending)."""
        released += self.questions.complete_tool_awaits(self.snapshot.pending)
        return self.view(answered, bool(released), pending=bool(unsent), released=released)

    @staticmethod
    def already(current: Interaction, *, racing: bool = False) -> ConflictError:
        st = current.state
        said = f" (answer: {answer_text(st.answer)!r})" if st.status == "answered" else ""
        return conflict(current, f"question {current.interaction_id} is already {st.status}{said}", answer=st.answer)

    @staticmethod
    def view(
        answered: Interaction, resumed: bool, *, pending: bool = False, released: list[str] | None = None
    ) -> AnswerResult:
        return AnswerResult.of(answered, resumed, pending=pending, released=released)
