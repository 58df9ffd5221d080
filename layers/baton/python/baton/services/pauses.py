"""The plain human pause of a hosted run and an agent's blocking ask (both `ask`): park its token,
resume it with the operator's answers (one vote each on a quorum pause), time it out. `RunService`
(baton/services/runs.py) carries these moves; their answer side is `PauseAnswers` (pause_answers.py)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from baton.contracts.runs import GateTimedOut, PauseOutput, ResumeResult
from baton.domain.ballot import NO_GROUPS, Groups, Voter
from baton.domain.fields import OPEN_RUN_STATES
from baton.domain.pause_rules import blocking_ask, parked_pause, pause_to_resume, pending_pause, timed_out
from baton.errors import ConflictError, NotFoundError
from baton.events import HumanInputRequested, RunPaused
from baton.models import Interaction, PauseRequest
from baton.ports import GuardFailedError
from baton.services.at_deadline import InteractionPauseDeadline, end_at_catch
from baton.services.deadlines import park_interaction, time_out_if_pending
from baton.services.decide import decide
from baton.services.pause_answers import Answers, PauseAnswers

if TYPE_CHECKING:
    from baton.domain.gate_payloads import ParkPayload
    from baton.ports import RunSnapshot
    from baton.services.core import Core


@dataclass(frozen=True)
class Resume:
    """One resume: `answers` for the run's pause (at `node` when it waits at several), by `caller`."""

    run_id: str
    answers: Answers
    caller: str
    node: str | None = None
    groups: Groups = NO_GROUPS


def open_pause(core: Core, pause: Interaction, *, by: str | None = None, token: str | None = None) -> Interaction:
    """Store an `ask` with `human_input_requested` and `run_paused` (one write), park a hosted task's `token`
    on it, pause its run (a run elsewhere is left alone) and publish it. A retried park (the same `token`:
    an earlier attempt stored it) parks what is stored, a no-op if parked, and records nothing again."""
    run_id, req = pause.run_id, pause.request
    requested = HumanInputRequested(
        interaction_id=pause.interaction_id,
        node=req.node,
        kind=req.kind,
        prompt=req.prompt,
        options=req.options,
        timeout_seconds=req.timeout_seconds,
        by=by,
    )
    paused = RunPaused(gate=req.node, kind=req.kind)
    try:
        core.store.put_pause(pause, events=[core.new_event(run_id, requested), core.new_event(run_id, paused)])
    except ConflictError:
        if token is None or (stored := core.store.get_interaction(run_id, pause.interaction_id)) is None:
            raise
        park_interaction(core, stored, token)
        return stored
    if token is not None:
        park_interaction(core, pause, token)
    core.set_run_status(run_id, "paused_waiting_human", allowed_from=OPEN_RUN_STATES)
    core.notify(pause, "human_input_requested")
    return pause


class PauseService:
    core: Core

    @property
    def answers(self) -> PauseAnswers:
        return PauseAnswers(self.core)

    def park(self, payload: ParkPayload) -> Interaction:
        """The `park` task: record what is asked, park the token. A retried invoke (same token) returns the
        same interaction and records nothing again. With `approval` the run's starter may not vote."""
        core = self.core
        run_id, node, token = payload.run_id, payload.node, payload.token
        run = core.ensure_run(run_id)
        again = core.parked_again(run_id, node, token)
        found = core.store.get_interaction(run_id, again.interaction_ids[0]) if again is not None else None
        if found is not None:
            return found
        request = PauseRequest(
            node=node,
            prompt=payload.prompt,
            timeout_seconds=payload.timeout_seconds,
            notify=payload.notify or ["console"],
            ladder=payload.ladder,
        )
        request = request.with_quorum(payload.approval, requested_by=run.started_by)
        deadline = core.deadline_of(payload.timeout_seconds, payload.entered_at)
        park_id = core.park_id(token, payload.entered_at)
        return open_pause(
            core, core.new_interaction(run_id, request, expires_at=deadline, interaction_id=park_id), token=token
        )

    def resume(self, request: Resume, *, snapshot: RunSnapshot | None = None) -> ResumeResult:
        """`decide` on the run's pending pause. The snapshot (the route's, when it read one) names the parked
        pause and holds it, so the critical path reads nothing else (tests/integration/test_call_budgets.py)."""
        core = self.core
        snapshot = snapshot if snapshot is not None else core.store.snapshot_run(request.run_id)
        if snapshot.run is None:
            raise NotFoundError(f"run {request.run_id} not found", details={"run_id": request.run_id})
        wait = parked_pause(snapshot, request.node)
        target = pending_pause(snapshot, wait) if wait is not None else None
        voter = Voter(request.caller, request.groups)
        if wait is not None and target is not None:
            try:
                return decide(core, PauseAnswers(core, wait=wait, snapshot=snapshot), target, request.answers, voter)
            except GuardFailedError:  # the wait closed under us (its deadline): decided on a fresh read
                pass
        pause = blocking_ask(snapshot, request.node) or pause_to_resume(
            core.store.list_run_interactions(request.run_id), request.run_id, request.node
        )
        return decide(core, PauseAnswers(core, snapshot=snapshot), pause, request.answers, voter)

    def deadline_policy(self) -> InteractionPauseDeadline:
        return InteractionPauseDeadline(self.core, PauseOutput.of)

    def record_timeout(self, run_id: str, node: str) -> GateTimedOut:
        """The gate's Catch on States.Timeout lands here (`end_at_catch`): mark what timed out and say so;
        unanswered: what this call timed out, and what Baton ended at its deadline (`end_at_deadline`)."""
        core = self.core
        wait = core.store.get_wait(run_id, node)
        at_node = [i for i in core.store.list_run_interactions(run_id) if i.request.node == node]
        parked = set(wait.interaction_ids) if wait is not None else set()
        ended = {i.interaction_id for i in at_node if i.state.status == "timed_out" and i.interaction_id in parked}
        ended |= {i.interaction_id for i in end_at_catch(core, wait, at_node, partial(time_out_if_pending, core))}
        unanswered = [i for i in at_node if i.interaction_id in ended]
        event = timed_out(node, unanswered)
        core.record(run_id, event)
        core.set_run_status(run_id, "failed", allowed_from=OPEN_RUN_STATES, reason=event.cause)
        return GateTimedOut(cause=event.cause, unanswered=event.unanswered)
