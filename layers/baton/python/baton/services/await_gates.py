"""The await gate (`statemachines/await_answers.asl.json`, or a Task state of `baton.workflows.gate_states`):
the Step Functions form of awaiting a run's questions (its scope: `baton.domain.questions`).

It parks its task token as WAIT#<gate>, then re-checks the store: what was answered before it parked is
merged onto the wait (so the last answer sends the output with no read: `gate_answers`), or releases it at
once. The reconciler and the deadline end it by `questions.AwaitDeadline`; `Core.release_gate`'s
conditional release makes a second sender a no-op.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from baton.contracts.questions import AskedQuestion, CollectedAnswer, GateParked, GateTimedOut
from baton.domain import gate_answers
from baton.domain.fields import OPEN_RUN_STATES, check_gate_name
from baton.domain.ladder import AnswerCheck
from baton.domain.questions import gate_timeout_cause, in_scope, never_asked, split_scope, unanswered_of
from baton.errors import GoneError
from baton.events import AwaitReleased, AwaitStarted, AwaitTimedOut, RunPaused
from baton.models import Interaction, ParkedWait
from baton.services.answer_outcomes import SendFailedError
from baton.services.at_deadline import end_at_catch
from baton.services.deadlines import park_wait, time_out_if_pending

if TYPE_CHECKING:
    from datetime import datetime

    from baton.domain.ladder import Ladder
    from baton.services.core import Core

log = logging.getLogger("baton")


class AwaitGates:
    """Park, release and time out a run's await gates (the base of `QuestionService`)."""

    core: Core

    def _scope(self, run_id: str, from_node: str | None) -> tuple[list[Interaction], list[CollectedAnswer]]:
        return split_scope(self.core.store.list_run_interactions(run_id, kind="question"), from_node)

    def park_gate(
        self,
        *,
        run_id: str,
        gate: str,
        token: str,
        timeout_seconds: int,
        from_node: str | None = None,
        map_item: int | str | None = None,
        entered_at: datetime | None = None,
        ladder: Ladder | None = None,
    ) -> GateParked:
        """The gate's waitForTaskToken Lambda: park the token, then re-check the store. Inside a Map the
        gate is per item (`<gate>-<map_item>`). A retried invoke (same token) finds its wait, records
        nothing again and only re-checks. A bad ladder fails the task with the 422's message (C261)."""
        if map_item is not None:  # the payload checked the gate's name; the per-item name must hold too
            gate = check_gate_name(f"{gate}-{map_item}")
        core = self.core
        if ladder is not None:
            ladder.check_for(timeout_seconds, answer_is=AnswerCheck(kind="await"))
        run, stored = core.store.get_run_and_wait(run_id, gate)  # one read for both
        if run is None:
            core.ensure_run(run_id)
        if stored is not None and stored.task_token == token:  # parked again (`Core.parked_again`)
            parked = stored if stored.status == "parked" else None
            released = stored.status == "released" or self._recheck(run_id, gate, from_node, parked)[0]
            return GateParked(parked=True, gate=gate, released=released, pending=stored.interaction_ids)
        pending, answered = self._scope(run_id, from_node)
        pending_ids = [i.interaction_id for i in pending]
        warning = never_asked(gate, from_node) if from_node and not pending and not answered else None
        if warning:
            log.warning(warning)
        parked = ParkedWait(
            run_id=run_id,
            gate=gate,
            task_token=token,
            kind="await",
            interaction_ids=pending_ids,
            scope={"from": from_node or None, "timeout_seconds": timeout_seconds}
            | ({"ladder": ladder.model_dump(mode="json")} if ladder is not None else {}),
            parked_at=core.now(),
            deadline=core.deadline_of(timeout_seconds, entered_at),
            carry="filling",  # the re-check below merges what was answered before it (gate_answers.py)
        )
        park_wait(core, parked)
        # An answer that read the run before this wait existed is refused by its write (and decides
        # again, seeing the gate); one that landed first is seen by the re-check below. The scope's bump,
        # the run paused (when it is created or running) and their events: one write.
        started = AwaitStarted(
            gate=gate,
            from_node=from_node or None,
            timeout_seconds=timeout_seconds,
            pending=pending_ids,
            **({"warning": warning} if warning else {}),
        )
        core.store.record_park(
            run_id,
            events=[core.new_event(run_id, started)],
            pause_at=core.now() if pending else None,
            if_paused=[core.new_event(run_id, RunPaused(gate=gate, kind="await", pending=pending_ids))],
        )
        released, late = self._recheck(run_id, gate, from_node, parked)
        if not released:  # asked between our read above and the park: this gate holds it up too. A question
            # asked after the re-check's read sees the wait (read after its write) and marks itself.
            core.store.mark_blocked(
                run_id, gate, [i.interaction_id for i in late if i.interaction_id not in pending_ids]
            )
        return GateParked(parked=True, gate=gate, released=released, pending=pending_ids)

    def _recheck(
        self, run_id: str, gate: str, from_node: str | None, parked: ParkedWait | None
    ) -> tuple[bool, list[Interaction]]:
        """Release the gate if its scope is answered, else merge what was answered onto `parked`'s carried
        answers; and the scope's pending questions from this one read (the park marks them with it)."""
        questions = self.core.store.list_run_interactions(run_id, kind="question")
        pending, answers = split_scope(questions, from_node)
        if pending:
            if parked is not None:
                answered = [i for i in questions if in_scope(i, from_node) and i.state.status == "answered"]
                for entries, carry, added in gate_answers.merges_at_park(parked, answered):
                    if not self.core.store.merge_carried(parked, entries, carry=carry, bytes_added=added):
                        break  # released, re-parked or ended meanwhile: nothing left to merge into
            return False, pending
        wait = self.core.store.get_wait(run_id, gate)
        return wait is not None and self._send_release(wait, answers), []

    def _send_release(
        self, wait: ParkedWait, answers: list[CollectedAnswer], *, siblings: list[ParkedWait] | None = None
    ) -> bool:
        output = {"answers": [a.model_dump() for a in answers], "gate": wait.gate, "from": wait.from_node}
        try:
            return self.core.release_gate(
                wait.run_id,
                wait.gate,
                output,
                wait=wait,
                also=[AwaitReleased(gate=wait.gate, answers=len(answers), from_node=wait.from_node)],
                siblings=siblings,
            )
        except GoneError:
            return False  # the gate timed out first; its timeout handler reports what was missing

    def record_gate_timeout(self, run_id: str, gate: str, map_item: int | str | None = None) -> GateTimedOut:
        """The gate's Catch on States.Timeout (`end_at_catch`)."""
        core = self.core
        gate = f"{gate}-{map_item}" if map_item is not None else gate
        wait = core.store.get_wait(run_id, gate)
        scope = wait.scope if wait else {}
        from_node = wait.from_node if wait else None
        pending, _ = self._scope(run_id, from_node)
        reason = f"await gate '{gate}' timed out"
        end_at_catch(core, wait, pending, lambda question: time_out_if_pending(core, question, reason, at=core.now()))
        unanswered = [unanswered_of(i) for i in pending]
        cause = gate_timeout_cause(gate, from_node, scope.get("timeout_seconds"), unanswered)
        core.record(run_id, AwaitTimedOut(gate=gate, from_node=from_node, unanswered=unanswered, cause=cause))
        if map_item is None:  # a timed-out Map branch fails its item; the Map decides the run's fate
            core.set_run_status(run_id, "failed", allowed_from=OPEN_RUN_STATES, reason=cause)
        return GateTimedOut(cause=cause, unanswered=[AskedQuestion.model_validate(u.model_dump()) for u in unanswered])

    def _release_gates(
        self,
        run_id: str,
        gates: list[ParkedWait],
        *,
        known: dict[str, list[CollectedAnswer]] | None = None,
        siblings: list[ParkedWait] | None = None,
    ) -> tuple[list[str], list[str]]:
        """Release each of `gates` whose scope is fully answered, with its `known` output (carried on its
        wait) or from one read of the run's questions for all of them. Returns (released, unsent): a failed
        send loses nothing (the reconciler sends it). `siblings`: the run's waits from the caller's snapshot."""
        known = known or {}
        unknown = [w for w in gates if w.gate not in known]
        questions = self.core.store.list_run_interactions(run_id, kind="question") if unknown else []
        released: list[str] = []
        unsent: list[str] = []
        for wait in gates:
            if wait.gate in known:
                answers = known[wait.gate]
            else:
                pending, answers = split_scope(questions, wait.from_node)
                if pending:
                    continue
            others = None if siblings is None else [w for w in siblings if w.gate not in released]
            try:
                if self._send_release(wait, answers, siblings=others):
                    released.append(wait.gate)
            except SendFailedError:
                unsent.append(wait.gate)
            except Exception:
                log.exception("await gate release failed", extra={"run_id": run_id, "gate": wait.gate})
        return released, unsent
