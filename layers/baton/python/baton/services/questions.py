"""Async questions: ask, keep working, sync later. An answer is queued for the asking node and releases
the await gates (`await_gates.py`, this service's base) and tool-form awaits it leaves with nothing pending
in scope (`baton.domain.questions`). The tool form (`await_tool`) never blocks: the answers, or an `await`
interaction the last answer completes, the run paused_waiting_human meanwhile. Why over 400 lines: asking,
answering (its guards, repeats, votes, defaults) and the tool form read and write the same scope.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from baton.contracts.questions import (
    AnswerResult,
    ApprovalView,
    AskResult,
    AwaitAnswered,
    AwaitPending,
)
from baton.domain.deadline import OPEN_WAIT_STATUSES
from baton.domain.ladder import USE_QUESTION_DEFAULTS, AnswerCheck
from baton.domain.questions import (
    MAP_AWAIT_REFUSAL,
    MAP_REFUSAL,
    answer_text,
    check_answer,
    check_question,
    check_question_ladder,
    in_scope,
    message_text,
    open_gates_of,
    refuse_in_map,
    unanswered_of,
)
from baton.errors import ConflictError, GoneError, NotFoundError, ValidationFailedError
from baton.events import (
    AnswerLate,
    AwaitReleased,
    AwaitStarted,
    AwaitTimedOut,
    HumanInputRequested,
    InteractionAnswered,
    RunPaused,
)
from baton.models import (
    TERMINAL_RUN_STATES,
    AwaitToolRequest,
    Interaction,
    Message,
    ParkedWait,
    QuestionRequest,
    status_of,
)
from baton.ports import GuardFailedError, ScopeUnchanged, StillPending
from baton.services import gate_answers
from baton.services.answer_outcomes import delivery_of
from baton.services.approvals import ApprovalService, Voter, approval_view
from baton.services.at_deadline import Write, end_at_deadline, fail_unanswered
from baton.services.await_gates import AwaitGates
from baton.services.deadlines import answer_with_default, arm_interaction, arm_tool_await, wait_ladder
from baton.services.decide import decide
from baton.services.pause_answers import conflict, resume_asking_run

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.contracts.questions import AskRequest, AwaitRequest, CollectedAnswer
    from baton.domain.approval import ApprovalPolicy
    from baton.models import Event
    from baton.ports import Guard, RunSnapshot
    from baton.services.approvals import Decided
    from baton.services.core import Core

__all__ = ["POSTED", "AwaitDeadline", "QuestionService", "answer_text", "message_text"]

log = logging.getLogger("baton")

ANSWER_ATTEMPTS = 5  # an answer whose guard failed (the run changed under it) reads again and decides again
MAX_PENDING_GUARDS = 50  # other pending questions checked in the answer's write; more: one read after it
POSTED = "question posted; keep working"
PAUSE_KINDS = frozenset({"ask", "interrupt", "review"})  # a person's pause: its node asks no async questions


class QuestionService(AwaitGates):
    def __init__(self, core: Core) -> None:
        self.core = core
        self.approvals = ApprovalService(core)

    # ---- posting --------------------------------------------------------------------------------
    def ask(self, run_id: str, request: AskRequest, *, caller: str) -> AskResult:
        """`ask_user_async`: store a pending question, publish it, return at once. A ladder's default is
        taken at the question's own deadline; with `approval` each answer is a vote (not the requester's)."""
        refuse_in_map(request.map_item, MAP_REFUSAL)
        options, free_text = check_question(request.question, request.options, request.allow_free_text)
        approval, ladder, timeout_seconds, core = request.approval, request.ladder(), request.timeout_seconds, self.core
        if approval is not None:
            approval.check_options(options)
        core.check_notify(request.notify)
        if ladder is not None:
            check_question_ladder(ladder, timeout_seconds, options, free_text=free_text, quorum=approval is not None)
        run = core.ensure_run(run_id)
        if run.status in TERMINAL_RUN_STATES:
            raise ConflictError(
                f"run {run_id} is {run.status}; it can no longer ask questions",
                details={"run_id": run_id, "status": run.status},
            )
        self._refuse_a_pause_node(run_id, request.node)
        interaction = Interaction(
            interaction_id=core.ids.new_id(),
            run_id=run_id,
            created_at=core.now(),
            expires_at=core.later(timeout_seconds) if timeout_seconds is not None else None,
            request=QuestionRequest(
                node=request.node,
                prompt=request.question,
                options=options,
                allow_free_text=free_text,
                timeout_seconds=timeout_seconds,
                ladder=ladder,
                notify=request.notify or ["console"],
                is_async=True,
                asked_by=caller,
                approval=approval,
                requested_by=(run.started_by if run.hosted and run.started_by else caller) if approval else None,
            ),
        )
        requested = HumanInputRequested(
            interaction_id=interaction.interaction_id,
            node=request.node,
            kind="question",
            prompt=request.question,
            options=options,
            allow_free_text=free_text,
            is_async=True,
        )
        # counted: a gate released unread sees it; its event recorded in the same write
        core.store.put_question(interaction, events=[core.new_event(run_id, requested)])
        self._mark_awaited(interaction)
        core.notify(interaction, "human_input_requested", **{"async": True})
        arm_interaction(core, interaction)
        return AskResult(
            interaction_id=interaction.interaction_id,
            run_id=run_id,
            node=request.node,
            status="pending",
            message=POSTED,
        )

    # ---- reading --------------------------------------------------------------------------------
    def pending(self, run_id: str) -> list[Interaction]:
        """The run's pending questions: one consistent read of its open markers (O(pending))."""
        snapshot = self.core.store.snapshot_run(run_id)
        if snapshot.run is None:
            raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
        return [i for i in snapshot.pending if i.request.kind == "question"]

    def approval_of(self, question: Interaction) -> ApprovalView | None:
        """A quorum question's count and voters (one Query of its votes); None for any other question."""
        policy = QuestionAnswers.quorum(question)
        return approval_view(self.core, question, policy) if policy else None

    def _get_question(self, run_id: str, interaction_id: str) -> Interaction:
        found = self.core.store.get_interaction(run_id, interaction_id)
        if found is None or found.request.kind != "question":
            raise NotFoundError(
                f"question {interaction_id} not found in run {run_id}",
                details={"run_id": run_id, "interaction_id": interaction_id},
            )
        return found

    def _refuse_a_pause_node(self, run_id: str, node: str) -> None:
        """C240 at run time (`baton check` finds it in ASL): a person's pause node IS the blocking question."""
        interactions = self.core.store.list_run_interactions(run_id)
        pause = next((i for i in interactions if i.request.kind in PAUSE_KINDS and i.request.node == node), None)
        if pause is not None:
            raise ValidationFailedError(
                f"node '{node}' is a person's pause in run {run_id} (its {pause.request.kind} "
                f"{pause.interaction_id}): a human node IS the blocking question and cannot post async "
                "questions (C240); post them from the agent node that runs before it",
                details={
                    "reason": "node_is_a_human_pause",
                    "code": "C240",
                    "node": node,
                    "pause": pause.interaction_id,
                    "kind": pause.request.kind,
                },
            )

    # ---- answering ------------------------------------------------------------------------------
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
        """Decide the answer (`QuestionAnswers`, by the one engine `decide`) on one read of the run's open
        part: two calls before the send (tests/integration/test_call_budgets.py). A failed guard (the run
        changed under it): read and decide again. `decided`: the quorum that met answers it; `via`: the
        channel it came by, kept in its decision (`InteractionAnswered.via`)."""
        voter = Voter(caller, groups)
        for _attempt in range(ANSWER_ATTEMPTS):
            snapshot = self.core.store.snapshot_run(run_id)
            if snapshot.run is None:
                raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
            question = next((i for i in snapshot.pending if i.interaction_id == interaction_id), None)
            if question is None or question.request.kind != "question":
                question = self._get_question(run_id, interaction_id)  # not pending: only to say why not
            try:
                policy = QuestionAnswers(self, snapshot, via=via)
                return decide(self.core, policy, question, answer, voter, decided=decided)
            except GuardFailedError:
                continue
        raise ConflictError(
            f"question {interaction_id} of run {run_id} is changing too fast to answer; send the answer again",
            details={"run_id": run_id, "interaction_id": interaction_id, "reason": "contention"},
        )

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

    def take_default(self, run_id: str, interaction_id: str) -> bool:
        """A question's own deadline (its timer) with a declared default: answered with it (nobody's
        answer: `timed_out_default`), queued like any answer, and the await gates it completes released.
        A person's answer accepted first wins the conditional write. True if this call took the default."""
        core = self.core
        question = core.store.get_interaction(run_id, interaction_id)
        if question is None or question.request.kind != "question" or question.state.status != "pending":
            return False
        gates = open_gates_of(question, core.store.list_run_waits(run_id))
        if not self._answer_default(question, open_gates=gates):
            return False
        self._release_gates(run_id, gates)  # a failed send: the reconciler's
        for awaiting in core.store.list_run_interactions(run_id, kind="await", status="pending"):
            self._complete_tool_await(awaiting)
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
            return answer_with_default(core, question, None, also=[message], guards=guards) is not None
        except (ConflictError, GuardFailedError):
            return False

    # ---- the tool form --------------------------------------------------------------------------
    def await_tool(self, run_id: str, request: AwaitRequest, *, caller: str) -> AwaitAnswered | AwaitPending:
        """`await_answers` as a tool: the answers when nothing in scope is pending; otherwise the pending
        ids, the run marked paused_waiting_human and an `await` interaction the last answer completes (a
        call while waiting reuses it, and its ladder: `use_question_defaults` at its expiry)."""
        from_node, timeout_seconds, ladder = request.from_ or None, request.timeout_seconds, request.ladder()
        refuse_in_map(request.map_item, MAP_AWAIT_REFUSAL)
        if ladder is not None:
            ladder.check_for(timeout_seconds, answer_is=AnswerCheck(kind="await"))
        core = self.core
        core.require_run(run_id)
        pending, answers = self._scope(run_id, from_node)
        scope_key = from_node or "*"
        if not pending:
            # The last answer may still be on its way to completing this scope's tool await: complete it
            # here too (a conditional write: one of the two does it), so a 200 never leaves the run paused.
            for awaiting in self._tool_awaits(run_id, scope_key):
                self._complete_tool_await(awaiting)
            self._unpause_if_idle(run_id)
            return AwaitAnswered(status="answered", run_id=run_id, from_=from_node, answers=answers)
        ids = [i.interaction_id for i in pending]
        existing = self._tool_awaits(run_id, scope_key)
        prompt = f"waiting for {len(ids)} answer(s)" + (f" of node '{from_node}'" if from_node else "")
        awaiting = (
            existing[-1]
            if existing
            else self._start_tool_await(
                run_id,
                AwaitToolRequest(
                    node=scope_key,
                    prompt=prompt,
                    timeout_seconds=timeout_seconds,
                    from_node=from_node,
                    pending=ids,
                    by=caller,
                    ladder=ladder,
                ),
                timeout_seconds,
            )
        )
        if core.set_run_status(run_id, "paused_waiting_human", allowed_from={"created", "running"}):
            core.record(run_id, RunPaused(gate="await_answers", kind="await", pending=ids))
        # Answers that landed between our read and our writes (the await may even have been completed
        # before we marked the run paused): complete it now, and never leave the run paused for nothing.
        current = core.store.get_interaction(run_id, awaiting.interaction_id) or awaiting
        if current.state.status != "pending" or self._complete_tool_await(current):
            self._unpause_if_idle(run_id)
            pending, answers = self._scope(run_id, from_node)
            if not pending:
                return AwaitAnswered(status="answered", run_id=run_id, from_=from_node, answers=answers)
        return AwaitPending(
            status="pending",
            run_id=run_id,
            from_=from_node,
            pending=ids,
            interaction_id=awaiting.interaction_id,
            run_status="paused_waiting_human",
        )

    def _tool_awaits(self, run_id: str, scope_key: str) -> list[Interaction]:
        awaits = self.core.store.list_run_interactions(run_id, kind="await", status="pending")
        return [i for i in awaits if i.request.node == scope_key]

    def _start_tool_await(self, run_id: str, request: AwaitToolRequest, timeout_seconds: int) -> Interaction:
        core = self.core
        awaiting = Interaction(
            interaction_id=core.ids.new_id(),
            run_id=run_id,
            created_at=core.now(),
            expires_at=core.later(timeout_seconds),
            request=request,
        )
        core.store.put_interaction(awaiting)
        arm_tool_await(core, awaiting)
        core.store.bump_scope(run_id)  # as a gate's park: an answer that read before it decides again
        started = AwaitStarted(
            gate="tool",
            interaction_id=awaiting.interaction_id,
            from_node=request.from_node,
            timeout_seconds=timeout_seconds,
            pending=request.pending,
        )
        core.record(run_id, started)
        return awaiting

    def _unpause_if_idle(self, run_id: str) -> None:
        """A run marked paused by the tool form goes back to running once nothing waits on a human."""
        run = self.core.store.get_run(run_id)
        if run is None or run.status != "paused_waiting_human":
            return
        if any(w.status == "parked" for w in self.core.store.list_run_waits(run_id)):
            return
        if not self.core.store.list_run_interactions(run_id, kind="await", status="pending"):
            resume_asking_run(self.core, run_id, "await_answers", kind="await")

    def _complete_tool_await(self, awaiting: Interaction) -> bool:
        pending, answers = self._scope(awaiting.run_id, awaiting.request_as(AwaitToolRequest).from_node)
        if pending:
            return False
        answered = status_of(awaiting.state, "answered", answer=[a.model_dump() for a in answers], at=self.core.now())
        try:
            self.core.store.transition_interaction(awaiting, answered)
        except ConflictError:
            return False  # another answer completed it
        released = AwaitReleased(gate="tool", interaction_id=awaiting.interaction_id, answers=len(answers))
        self.core.record(awaiting.run_id, released)
        resume_asking_run(self.core, awaiting.run_id, "await_answers", kind="await")
        return True

    # ---- delivery -------------------------------------------------------------------------------
    def drain(self, run_id: str, node: str) -> list[Message]:
        """The agent side: the node's queued messages, oldest first, each delivered exactly once."""
        drained = self.core.store.drain_messages(run_id, node, drained_at=self.core.now())
        if not drained:  # a message read proves its run exists; with none, a missing run is a 404
            self.core.require_run(run_id)
        return drained

    # ---- the reconciler -------------------------------------------------------------------------
    def end_at_deadline(self, wait: ParkedWait) -> bool:
        """A parked await gate's deadline, through the one deadline path (`AwaitDeadline`). True if this
        call ended (or released) the gate."""
        return end_at_deadline(AwaitDeadline(self), wait) is not None

    def reconcile_tool_awaits(self) -> tuple[list[dict[str, str]], list[str]]:
        """Complete tool-form awaits whose questions are answered; time out those past their expiry."""
        released: list[dict[str, str]] = []
        timed_out: list[str] = []
        now = self.core.now()
        for awaiting in self.core.store.list_pending("await"):
            if self._complete_tool_await(awaiting):
                released.append({"run_id": awaiting.run_id, "gate": f"tool:{awaiting.interaction_id}"})
            # past its expiry: its timer's own path (under use_question_defaults the defaults are taken first)
            elif (
                awaiting.expires_at
                and awaiting.expires_at <= now
                and self.time_out_tool_await(awaiting.run_id, awaiting.interaction_id)
            ):
                timed_out.append(awaiting.interaction_id)
        return released, timed_out

    def time_out_tool_await(self, run_id: str, interaction_id: str) -> bool:
        """A tool-form await's timer, at its expiry: completed if its scope is answered (by the questions'
        defaults under `use_question_defaults`), else timed out. True if this call timed it out."""
        awaiting = self.core.store.get_interaction(run_id, interaction_id)
        if awaiting is None or awaiting.request.kind != "await" or awaiting.state.status != "pending":
            return False
        ladder = awaiting.request.ladder
        if ladder is not None and ladder.on_timeout == USE_QUESTION_DEFAULTS:  # each question's own default
            pending, _ = self._scope(run_id, awaiting.request_as(AwaitToolRequest).from_node)
            for question in pending:
                self.take_default(run_id, question.interaction_id)
            awaiting = self.core.store.get_interaction(run_id, interaction_id) or awaiting
            if awaiting.state.status != "pending":
                return False  # completed by the defaults: not timed out
        return not self._complete_tool_await(awaiting) and self._time_out_tool_await(awaiting)

    def _time_out_tool_await(self, awaiting: Interaction) -> bool:
        """The run is no longer paused for it; its questions stay open (the tool form blocks nobody)."""
        core = self.core
        pending, _ = self._scope(awaiting.run_id, awaiting.request_as(AwaitToolRequest).from_node)
        try:
            core.store.transition_interaction(awaiting, status_of(awaiting.state, "timed_out", reason="timeout"))
        except ConflictError:
            return False
        unanswered = [unanswered_of(i) for i in pending]
        core.record(
            awaiting.run_id, AwaitTimedOut(gate="tool", interaction_id=awaiting.interaction_id, unanswered=unanswered)
        )
        self._unpause_if_idle(awaiting.run_id)
        return True


class AwaitDeadline:
    """An await gate's `DeadlinePolicy` (baton.services.at_deadline): closed by a conditional write to
    "expiring" (answers are guarded by the wait being parked; a wait found expiring goes on from the
    read); what was stored is its scope's answers once none of it is pending."""

    def __init__(self, questions: QuestionService) -> None:
        self.questions = questions
        self.core = questions.core

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        if wait.status == "parked":
            if not self.core.store.release_wait(wait, "expiring"):
                return None  # released or ended by someone else first
            return wait.model_copy(update={"status": "expiring"})
        return wait if wait.status == "expiring" else None

    def stored(self, wait: ParkedWait) -> list[CollectedAnswer] | None:
        pending, answers = self.questions._scope(wait.run_id, wait.scope.get("from"))
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
        pending, _ = self.questions._scope(wait.run_id, wait.scope.get("from"))
        others = [w for w in self.core.store.list_run_waits(wait.run_id) if w.gate != wait.gate]
        for question in pending:
            self.questions._answer_default(question, carrying=open_gates_of(question, others))
        return bool(pending)

    def time_out(self, wait: ParkedWait) -> bool:
        pending, _ = self.questions._scope(wait.run_id, wait.scope.get("from"))
        if not pending:
            return False
        unanswered = [i.interaction_id for i in pending]
        note = " (no declared default)" if self._defaults_declared(wait) else ""
        return fail_unanswered(self.core, wait, f"await gate '{wait.gate}'", unanswered, note)


class QuestionAnswers:
    """An async question's `AnswerPolicy` (baton.services.at_deadline), on the run as `snapshot` read it:
    its answer is checked against the await gates of its scope (`refuse_if_late` keeps them for the
    write), carried onto them in its deciding write, queued for the asking node, and released."""

    def __init__(self, questions: QuestionService, snapshot: RunSnapshot, *, via: str | None = None) -> None:
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
        for wait in self.snapshot.waits:
            if wait.kind != "await" or wait.status == "released" or not in_scope(question, wait.scope.get("from")):
                continue
            closed = wait.status != "parked"
            core.refuse_if_late(question, answer, caller=caller, deadline=core.now() if closed else wait.deadline)
            self.gates.append(wait)
        if run is not None and run.status in TERMINAL_RUN_STATES and run.hosted:
            raise GoneError(
                f"run {run.run_id} is {run.status}; nothing is waiting for this answer",
                details={"run_id": run.run_id, "status": run.status},
            )

    def refuse_if_ended(self, question: Interaction, answer: Any, caller: str) -> None:
        """Its gate timed it out: kept on the record as late, never delivered; its default taken: late too."""
        st = question.state
        if st.status == "timed_out":
            when = st.answered_at or self.core.now()
            late = AnswerLate(
                interaction_id=question.interaction_id,
                node=question.request.node,
                kind="question",
                answer=answer,
                by=caller,
                deadline=when,
            )
            self.core.record(question.run_id, late)
            raise GoneError(
                f"question {question.interaction_id} is no longer pending: {st.reason or 'its gate timed out'} at "
                f"{when}; the answer is recorded as late and not delivered",
                details={"reason": "gate_timed_out", "timed_out_at": when, "interaction": question.public()},
            )
        self.core.refuse_if_ended(question, answer, caller=caller)

    def is_repeat(self, current: Interaction, answer: Any, caller: str) -> bool:
        """The stored answer is this very request's (the same caller, the same answer; not a quorum's)."""
        st = current.state
        plain = current.request.kind == "question" and self.quorum(current) is None
        return plain and st.status == "answered" and st.answer == answer and st.answered_by == caller

    def repeat(self, current: Interaction, answer: Any, caller: str) -> AnswerResult | None:
        """A retry of an accepted answer gets the first one's result from the stored answer, with no record:
        the gates parked on its scope before it count as released once resumed; one still parked (the
        first send failed or is under way) is released now (conditionally: never twice)."""
        if not self.is_repeat(current, answer, caller):
            return None
        at = current.state.answered_at or ""
        gates = [
            w
            for w in self.snapshot.waits
            if w.kind == "await" and in_scope(current, w.scope.get("from")) and w.parked_at <= at
        ]
        open_gates = [w for w in gates if w.status in OPEN_WAIT_STATUSES]
        sent, unsent = self.questions._release_gates(current.run_id, open_gates)
        released = [w.gate for w in gates if w.status == "released" or w.gate in sent]
        return self._after_answer(current, released, unsent)

    @staticmethod
    def quorum(question: Interaction) -> ApprovalPolicy | None:
        return question.request_as(QuestionRequest).approval if question.request.kind == "question" else None

    def vote(self, question: Interaction, policy: ApprovalPolicy, answer: Any, voter: Voter) -> AnswerResult:
        """One operator's vote (403 for the requester or a non-approver), counted once per operator; the
        vote that meets the quorum (or the rejection rule) answers the question, exactly once."""
        approvals = self.questions.approvals
        requested_by = question.request_as(QuestionRequest).requested_by
        ballot = approvals.cast(question, policy, answer, voter, requested_by=requested_by)
        result = AnswerResult(
            interaction_id=question.interaction_id,
            node=question.request.node,
            status="pending",
            queued=False,
            resumed=False,
        )
        if ballot.decision is not None:
            decided = approvals.decided(question, policy, ballot)
            try:
                result = self.questions.answer(
                    question.run_id, question.interaction_id, decided.answer, caller=decided.by, decided=decided
                )
            except ConflictError:  # a concurrent vote that read the same tally released it first
                result.status = "answered"
        if ballot.outcome == "closed":
            current = self.core.store.get_interaction(question.run_id, question.interaction_id)
            raise self.already(current or question, racing=False)
        result.approval = ballot.view(policy)
        return result

    def write(self, question: Interaction, answer: Any, caller: str, decided: Decided | None) -> Write[AnswerResult]:
        """Guarded by every in-scope gate still open before its deadline (the answer carried onto each),
        by the run's scope version and by the other in-scope questions still pending; the gates it leaves
        with nothing pending are released from their carried answers (no read of the scope after it)."""
        snapshot, gates, run_id = self.snapshot, self.gates, question.run_id
        others = [
            i
            for i in snapshot.pending
            if i.interaction_id != question.interaction_id and any(in_scope(i, w.scope.get("from")) for w in gates)
        ]
        guarded = len(others) <= MAX_PENDING_GUARDS  # more: decided by a read after the write instead
        ready = [w for w in gates if not guarded or not any(in_scope(i, w.scope.get("from")) for i in others)]
        known = {w.gate for w in ready if guarded and gate_answers.releasable(w, question, answer)}
        now = self.core.now()
        guards: list[Guard] = [
            gate_answers.open_guard(w, question, answer, now=now, deciding=w.gate in known) for w in gates
        ]
        guards.append(ScopeUnchanged(run_id, snapshot.scope_version, asked=snapshot.asked if known else None))
        if guarded:
            guards += [StillPending(i) for i in others]

        def release(answered: Interaction) -> AnswerResult:
            outputs = {w.gate: gate_answers.output(w, question, answer) for w in ready if w.gate in known}
            released, unsent = self.questions._release_gates(run_id, ready, known=outputs, siblings=snapshot.waits)
            return self._after_answer(answered, released, unsent)

        event = InteractionAnswered(
            interaction_id=question.interaction_id,
            node=question.request.node,
            kind="question",
            answer=answer,
            answer_text=answer_text(answer),
            by=caller,
            is_async=True,
            via=self.via,
        )  # written with the answer's message for the asking node, all or nothing
        message = self.questions._message(question, message_text(question, answer))
        records: list[Message | Event] = [message, self.core.new_event(run_id, event)]
        return Write(at=now, records=records, release=release, guards=guards, audit_head=snapshot.audit_head)

    def _after_answer(self, answered: Interaction, released: list[str], unsent: Sequence[str] = ()) -> AnswerResult:
        """Complete the tool-form awaits the answer completes; `unsent`: gates whose send failed (the
        reconciler sends them: the delivery is pending)."""
        for awaiting in self.snapshot.pending:
            if awaiting.request.kind == "await" and self.questions._complete_tool_await(awaiting):
                released.append(f"tool:{awaiting.interaction_id}")
        return self.view(answered, bool(released), pending=bool(unsent), released=released)

    @staticmethod
    def already(current: Interaction, *, racing: bool) -> ConflictError:
        st = current.state
        said = f" (answer: {answer_text(st.answer)!r})" if st.status == "answered" else ""
        return conflict(current, f"question {current.interaction_id} is already {st.status}{said}", answer=st.answer)

    @staticmethod
    def view(
        answered: Interaction, resumed: bool, *, pending: bool = False, released: list[str] | None = None
    ) -> AnswerResult:
        return AnswerResult(
            interaction_id=answered.interaction_id,
            node=answered.request.node,
            status="answered",
            queued=True,
            resumed=resumed,
            released=released or [],
            delivery=delivery_of(resumed, pending=pending),
        )
