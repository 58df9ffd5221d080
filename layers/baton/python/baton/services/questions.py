"""Async questions: ask, keep working, sync later. An answer (`QuestionAnswers`) is queued for the asking node
and releases the await gates and tool-form awaits it leaves with nothing pending in scope."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.questions import ApprovalView, AskResult
from baton.domain import gate_answers
from baton.domain.approval import requester_of
from baton.domain.ladder import USE_QUESTION_DEFAULTS
from baton.domain.parked_ladder import defaults_at_deadline, wait_ladder
from baton.domain.questions import (
    asked_event,
    message_text,
    open_gates_of,
    question_asked,
    refuse_a_pause_node,
    refuse_ended_run,
)
from baton.errors import ConflictError, NotFoundError
from baton.ports import GuardFailedError
from baton.services.approvals import approval_view
from baton.services.at_deadline import fail_unanswered
from baton.services.deadlines import answer_with_default, arm_interaction, stop_interaction_timer
from baton.services.question_answers import AnswerQuestions, QuestionAnswers

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.contracts.questions import AskRequest, CollectedAnswer
    from baton.models import Interaction, Message, ParkedWait
    from baton.services.core import Core


class QuestionService(AnswerQuestions):
    def __init__(self, core: Core) -> None:
        self.core = core

    def ask(self, run_id: str, request: AskRequest, *, caller: str) -> AskResult:
        """`ask_user_async`: store, publish, return at once. A ladder's default is taken at the question's
        own deadline; with `approval` each answer is a vote (not the requester's)."""
        core = self.core
        asked = question_asked(request, core.channels, caller=caller)
        run = core.ensure_run(run_id)
        refuse_ended_run(run)
        refuse_a_pause_node(run_id, request.node, core.store.list_run_interactions(run_id))
        if asked.approval is not None:
            requested_by = requester_of(caller, hosted=run.hosted, started_by=run.started_by)
            asked = asked.model_copy(update={"requested_by": requested_by})
        timeout_seconds = asked.timeout_seconds
        expires_at = core.deadline_of(timeout_seconds) if timeout_seconds is not None else None
        interaction = core.new_interaction(run_id, asked, expires_at=expires_at)
        # counted: a gate released unread sees it; its event recorded in the same write
        core.store.put_question(interaction, events=[core.new_event(run_id, asked_event(interaction))])
        # Asked while a gate of its scope is parked, it holds that gate up (the inbox shows it). Read after the
        # write, as the park reads after the wait's: of the two racing, one sees the other.
        if gates := open_gates_of(interaction, core.store.list_run_waits(run_id)):
            core.store.mark_blocked(run_id, gates[0].gate, [interaction.interaction_id])
        core.notify(interaction, "human_input_requested", **{"async": True})
        arm_interaction(core, interaction)
        return AskResult.posted(interaction)

    def pending(self, run_id: str) -> list[Interaction]:
        """The run's pending questions: one consistent read of its open markers (O(pending))."""
        snapshot = self.core.store.snapshot_run(run_id)
        if snapshot.run is None:
            raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
        return [i for i in snapshot.pending if i.request.kind == "question"]

    def approval_of(self, question: Interaction) -> ApprovalView | None:
        """A quorum question's count and voters (one Query of its votes); else None."""
        policy = QuestionAnswers.quorum(question)
        return approval_view(self.core, question, policy) if policy else None

    def take_default(self, run_id: str, interaction_id: str) -> bool:
        """A question's timer at its deadline: answered with its declared default (`timed_out_default`) and
        released like any answer; a person's answer accepted first wins. True if this call took the default."""
        core = self.core
        question = core.store.get_interaction(run_id, interaction_id)
        if question is None or question.state.status != "pending" or not defaults_at_deadline(question):
            return False  # none declared: the run's waits are not read
        gates = open_gates_of(question, core.store.list_run_waits(run_id))
        if not self._answer_default(question, open_gates=gates):
            return False
        self._release_gates(run_id, gates)  # a failed send: the reconciler's
        self.complete_tool_awaits(core.store.list_run_interactions(run_id, kind="await", status="pending"))
        return True

    def _answer_default(
        self, question: Interaction, *, open_gates: Sequence[ParkedWait] = (), carrying: Sequence[ParkedWait] = ()
    ) -> bool:
        """Answer a pending question with its declared default, its message queued, guarded by `open_gates`
        still open, carried onto their waits and `carrying`'s. False if none or changed first."""
        ladder = question.request.ladder
        if ladder is None or ladder.default is None:
            return False
        core, value = self.core, ladder.default.default
        guards = [gate_answers.open_guard(w, question, value, now=core.now(), deciding=False) for w in open_gates]
        guards += gate_answers.carried_by(carrying, question, value)
        text = message_text(question, value) + " (nobody answered: the declared default, timed_out_default)"
        message = self._message(question, text)
        try:
            answered = answer_with_default(core, question, None, also=[message], guards=guards)
        except (ConflictError, GuardFailedError):
            return False
        if answered is not None:  # by a gate's deadline before the question's own: its timer is moot
            stop_interaction_timer(core, answered)
        return answered is not None

    def drain(self, run_id: str, node: str) -> list[Message]:
        """The agent side: the node's queued messages, oldest first, each delivered exactly once."""
        drained = self.core.store.drain_messages(run_id, node, drained_at=self.core.now())
        if not drained:  # a message read proves its run exists; with none, a missing run is a 404
            self.core.require_run(run_id)
        return drained


class AwaitDeadline:
    """An await gate's `DeadlinePolicy` (baton.services.at_deadline): closed by a conditional write to
    "expiring" (answers are guarded by the wait being parked; a wait found expiring goes on from the
    read); what was stored is its scope's answers once none of it is pending."""

    def __init__(self, questions: QuestionService) -> None:
        self.questions, self.core = questions, questions.core

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        if wait.status == "parked":
            if not self.core.store.release_wait(wait, "expiring"):
                return None  # released or ended by someone else first
            return wait.model_copy(update={"status": "expiring"})
        return wait if wait.status == "expiring" else None

    def stored(self, wait: ParkedWait) -> list[CollectedAnswer] | None:
        pending, answers = self.questions._scope(wait.run_id, wait.from_node)
        return None if pending else answers

    def release(self, wait: ParkedWait, stored: list[CollectedAnswer]) -> bool:
        return self.questions._send_release(wait, stored)

    def _defaults_declared(self, wait: ParkedWait) -> bool:
        ladder = wait_ladder(wait)
        return ladder is not None and ladder.on_timeout == USE_QUESTION_DEFAULTS

    def take_default(self, wait: ParkedWait) -> bool:
        """Each pending question's own default (the wait is closed to answers) under `use_question_defaults`;
        the other parked gates of its scope carry the answer too."""
        if not self._defaults_declared(wait):
            return False
        pending, _ = self.questions._scope(wait.run_id, wait.from_node)
        others = [w for w in self.core.store.list_run_waits(wait.run_id) if w.gate != wait.gate]
        for question in pending:
            self.questions._answer_default(question, carrying=open_gates_of(question, others))
        return bool(pending)

    def time_out(self, wait: ParkedWait) -> bool:
        pending, _ = self.questions._scope(wait.run_id, wait.from_node)
        unanswered = [i.interaction_id for i in pending]
        note = " (no declared default)" if self._defaults_declared(wait) else ""
        return bool(pending) and fail_unanswered(self.core, wait, f"await gate '{wait.gate}'", unanswered, note)
