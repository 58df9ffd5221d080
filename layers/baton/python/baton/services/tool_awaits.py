"""The tool form of awaiting a run's questions (`await_answers` as a tool): it never blocks. It returns the
answers, or the pending ids and an `await` interaction the last answer completes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.deadline_tasks import Settled
from baton.contracts.questions import AwaitAnswered, AwaitPending
from baton.domain.deadline import TOOL_GATE
from baton.domain.ladder import USE_QUESTION_DEFAULTS, AnswerCheck
from baton.domain.questions import MAP_AWAIT_REFUSAL, refuse_in_map, unanswered_of
from baton.errors import ConflictError
from baton.events import AwaitReleased, AwaitStarted, AwaitTimedOut, RunPaused
from baton.models import AwaitToolRequest, Interaction, status_of
from baton.services.await_gates import AwaitGates
from baton.services.deadlines import arm_interaction, stop_interaction_timer, time_out_if_pending
from baton.services.pause_answers import resume_asking_run

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from baton.contracts.questions import AwaitRequest, CollectedAnswer
    from baton.domain.ladder import Ladder

    Scope = tuple[list[Interaction], list[CollectedAnswer]]  # pending questions, collected answers


class ToolAwaits(AwaitGates):
    take_default: Callable[[str, str], bool]  # a question's own default at its deadline (`QuestionService`)

    def await_tool(self, run_id: str, request: AwaitRequest, *, caller: str) -> AwaitAnswered | AwaitPending:
        """The run is marked paused_waiting_human while its scope is pending; a call while waiting reuses the
        scope's `await` interaction (and its ladder: `use_question_defaults` at its expiry)."""
        from_node, ladder = request.from_ or None, request.ladder()
        refuse_in_map(request.map_item, MAP_AWAIT_REFUSAL)
        if ladder is not None:
            ladder.check_for(request.timeout_seconds, answer_is=AnswerCheck(kind="await"))
        core = self.core
        core.require_run(run_id)
        pending, answers = self._scope(run_id, from_node)
        awaits = core.store.list_run_interactions(run_id, kind="await", status="pending")
        existing = [i for i in awaits if i.request.node == (from_node or "*")]
        if not pending:
            # The last answer may still be on its way to completing this scope's tool await: complete it
            # here too (a conditional write: one of the two does it), so a 200 never leaves the run paused.
            self.complete_tool_awaits(existing, (pending, answers))
            self._unpause_if_idle(run_id)
            return AwaitAnswered(status="answered", run_id=run_id, from_=from_node, answers=answers)
        ids = [i.interaction_id for i in pending]
        awaiting = existing[-1] if existing else self._start_tool_await(run_id, request, ladder, ids, caller=caller)
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

    def _start_tool_await(
        self, run_id: str, request: AwaitRequest, ladder: Ladder | None, pending: list[str], *, caller: str
    ) -> Interaction:
        core, from_node, timeout_seconds = self.core, request.from_ or None, request.timeout_seconds
        asked = AwaitToolRequest(
            node=from_node or "*",
            prompt=f"waiting for {len(pending)} answer(s)" + (f" of node '{from_node}'" if from_node else ""),
            timeout_seconds=timeout_seconds,
            from_node=from_node,
            pending=pending,
            by=caller,
            ladder=ladder,
        )
        awaiting = core.new_interaction(run_id, asked, expires_at=core.deadline_of(timeout_seconds))
        started = AwaitStarted(
            gate="tool",
            interaction_id=awaiting.interaction_id,
            from_node=from_node,
            timeout_seconds=timeout_seconds,
            pending=pending,
        )
        core.store.put_pause(awaiting, events=[core.new_event(run_id, started)])  # one write with its event
        arm_interaction(core, awaiting, TOOL_GATE)
        core.store.bump_scope(run_id)  # as a gate's park: an answer that read before it decides again
        return awaiting

    def _unpause_if_idle(self, run_id: str) -> None:
        """A run marked paused by the tool form goes back to running once nothing waits on a human. One
        consistent read of the run's open part holds the run, its waits and its pending awaits (was three
        reads, no more consistent with each other); the conditional write decides, as before: a run that
        another request moved meanwhile is left alone."""
        core = self.core
        snapshot = core.store.snapshot_run(run_id)
        if snapshot.run is None or snapshot.run.status != "paused_waiting_human":
            return
        if any(w.status == "parked" for w in snapshot.waits):
            return
        if any(i.request.kind == "await" for i in snapshot.pending):
            return
        resume_asking_run(core, run_id, "await_answers", kind="await")

    def reconcile_tool_awaits(self) -> tuple[list[Settled], list[str]]:
        """Complete tool-form awaits whose questions are answered; time out those past their expiry."""
        released: list[Settled] = []
        timed_out: list[str] = []
        for awaiting in self.core.store.list_pending("await"):
            if self._complete_tool_await(awaiting):
                released.append(Settled(run_id=awaiting.run_id, gate=f"tool:{awaiting.interaction_id}"))
            # past its expiry: its timer's own path (under use_question_defaults the defaults are taken first)
            elif self.core.is_past(awaiting.expires_at) and self.time_out_tool_await(
                awaiting.run_id, awaiting.interaction_id
            ):
                timed_out.append(awaiting.interaction_id)
        return released, timed_out

    def time_out_tool_await(self, run_id: str, interaction_id: str) -> bool:
        """A tool-form await's timer, at its expiry: completed if its scope is answered (by the questions'
        defaults under `use_question_defaults`), else timed out. True if this call timed it out."""
        awaiting = self.core.store.get_interaction(run_id, interaction_id)
        if awaiting is None or awaiting.request.kind != "await" or awaiting.state.status != "pending":
            return False
        from_node, ladder = awaiting.request_as(AwaitToolRequest).from_node, awaiting.request.ladder
        pending, answers = self._scope(run_id, from_node)
        if pending and ladder is not None and ladder.on_timeout == USE_QUESTION_DEFAULTS:
            for question in pending:  # each question's own default (the last one's taker completes this await)
                self.take_default(run_id, question.interaction_id)
            pending, answers = self._scope(run_id, from_node)  # a question with no default is still pending
        if self._complete_tool_await(awaiting, (pending, answers)) or not pending:
            return False  # answered: completed, here or by whoever won the write (a default's taker)
        unanswered = [unanswered_of(i) for i in pending]
        event = self.core.new_event(
            run_id, AwaitTimedOut(gate="tool", interaction_id=interaction_id, unanswered=unanswered)
        )
        if not time_out_if_pending(self.core, awaiting, events=[event]):  # timed out and its event: one write
            return False
        self._unpause_if_idle(run_id)  # no longer paused for it; its questions stay open (it blocks nobody)
        return True

    def complete_tool_awaits(self, awaits: Iterable[Interaction], scope: Scope | None = None) -> list[str]:
        """Complete each tool-form await of `awaits` whose scope is answered (`scope`: theirs, as the caller
        just read it; else each reads its own). Returns the `tool:<id>` of those this call completed."""
        return [
            f"tool:{awaiting.interaction_id}"
            for awaiting in awaits
            if awaiting.request.kind == "await" and self._complete_tool_await(awaiting, scope)
        ]

    def _complete_tool_await(self, awaiting: Interaction, scope: Scope | None = None) -> bool:
        """Completed with its scope's answers once none is pending (`scope`: as the caller just read it)."""
        from_node = awaiting.request_as(AwaitToolRequest).from_node
        pending, answers = scope if scope is not None else self._scope(awaiting.run_id, from_node)
        if pending:
            return False
        answered = status_of(awaiting.state, "answered", answer=[a.model_dump() for a in answers], at=self.core.now())
        released = AwaitReleased(gate="tool", interaction_id=awaiting.interaction_id, answers=len(answers))
        try:  # completed and its event in one write
            completed = self.core.store.transition_interaction(
                awaiting, answered, with_records=[self.core.new_event(awaiting.run_id, released)]
            )
        except ConflictError:
            return False  # another answer completed it
        self._unpause_if_idle(awaiting.run_id)  # another await or a parked gate may still hold the run
        stop_interaction_timer(self.core, completed)
        return True
