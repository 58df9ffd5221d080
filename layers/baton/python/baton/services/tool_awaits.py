"""The tool form of awaiting a run's questions (`await_answers` as a tool): it never blocks. It returns the
answers, or the pending ids and an `await` interaction the last answer completes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.contracts.questions import AwaitAnswered, AwaitPending
from baton.domain.ladder import AnswerCheck
from baton.domain.questions import MAP_AWAIT_REFUSAL, refuse_in_map
from baton.errors import ConflictError
from baton.events import AwaitReleased, AwaitStarted, RunPaused
from baton.models import AwaitToolRequest, Interaction, status_of
from baton.services.await_gates import AwaitGates
from baton.services.deadlines import TOOL_GATE, arm_interaction, stop_interaction_timer
from baton.services.pause_answers import resume_asking_run

if TYPE_CHECKING:
    from baton.contracts.questions import AwaitRequest
    from baton.domain.ladder import Ladder


class ToolAwaits(AwaitGates):
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
            for awaiting in existing:
                self._complete_tool_await(awaiting)
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
        core.store.put_interaction(awaiting)
        arm_interaction(core, awaiting, TOOL_GATE)
        core.store.bump_scope(run_id)  # as a gate's park: an answer that read before it decides again
        started = AwaitStarted(
            gate="tool",
            interaction_id=awaiting.interaction_id,
            from_node=from_node,
            timeout_seconds=timeout_seconds,
            pending=pending,
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
            completed = self.core.store.transition_interaction(awaiting, answered)
        except ConflictError:
            return False  # another answer completed it
        released = AwaitReleased(gate="tool", interaction_id=awaiting.interaction_id, answers=len(answers))
        self.core.record(awaiting.run_id, released)
        self._unpause_if_idle(awaiting.run_id)  # another await or a parked gate may still hold the run
        stop_interaction_timer(self.core, completed)
        return True
