"""Stopping a hosted run (`POST /api/runs/{run_id}/stop`): its pauses closed, StopExecution, then
`run_aborted` recorded at once (baton.services.lifecycle), so a follower sees the end without waiting for
EventBridge. Every pending item is cancelled with the stop's cause and every parked wait released before
StopExecution, so no answer is accepted (a 410 naming the stop) and no `run_resumed` follows the end."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.domain.deadline import OPEN_WAIT_STATUSES
from baton.errors import ConflictError
from baton.models import TERMINAL_RUN_STATES, status_of
from baton.services.deadlines import stop_interaction_timer

if TYPE_CHECKING:
    from baton.contracts.runs import RunView
    from baton.models import Interaction, ParkedWait
    from baton.services.core import Core
    from baton.services.runs import RunService

STOP_ERROR = "BatonRunStopped"
CLOSE_ATTEMPTS = 3  # reads of what is open: an answer that lands while the stop closes it is read again


def close_pauses(core: Core, run_id: str, *, by: str, cause: str, stop_timers: bool = True) -> list[str]:
    """Cancel every pending interaction of `run_id` with `cause` (each keeps who closed it and when, as
    its `answered_by`/`answered_at`) and release its open waits; then stop the timers of what this call
    closed (`stop_timers`: not when they were lost with the executions). Returns the interactions closed.
    One answered meanwhile stands (it was decided first); after CLOSE_ATTEMPTS the stop goes on, and the
    run's end refuses what is still open (a hosted run's answers are a 410 once it has ended). A wait
    released by a transaction before a conflict keeps its timer: it fires and finds nothing to do."""
    closed: list[Interaction] = []
    released: list[ParkedWait] = []
    parked: set[str] = set()  # the interactions a gate parks
    for _attempt in range(CLOSE_ATTEMPTS):
        pending = core.store.list_run_interactions(run_id, status="pending")
        run_waits = core.store.list_run_waits(run_id)
        parked |= {iid for w in run_waits if w.kind != "await" for iid in w.interaction_ids}
        waits = [w for w in run_waits if w.status in OPEN_WAIT_STATUSES]
        if not pending and not waits:
            break
        now = core.now()
        closing = [(i, status_of(i.state, "cancelled", by=by, at=now, reason=cause)) for i in pending]
        try:
            core.store.close_interactions(closing, waits=waits)
        except ConflictError as err:  # one was answered meanwhile: what was written stands, read the rest
            written = set(err.details.get("closed", []))
            closed += [i.model_copy(update={"state": new}) for i, new in closing if i.interaction_id in written]
            continue
        closed += [i.model_copy(update={"state": new}) for i, new in closing]
        released += waits
        break
    if stop_timers:
        for wait in released:
            core.stop_timer(wait.run_id, wait.gate, wait.deadline)
        for interaction in closed:
            if interaction.interaction_id not in parked:  # a gate's pause: its timer is its wait's
                stop_interaction_timer(core, interaction)
    return [i.interaction_id for i in closed]


def stop_run(runs: RunService, run_id: str, *, caller: str, reason: str | None) -> RunView:
    core = runs.core
    run = core.require_run(run_id)
    if not run.hosted or not run.execution_arn:
        raise ConflictError(
            f"run {run_id} is not a hosted run: Baton has no execution to stop",
            details={"run_id": run_id, "hosted": run.hosted},
        )
    arn = run.execution_arn
    run = runs.refresh(run)
    if run.status in TERMINAL_RUN_STATES:
        raise ConflictError(
            f"run {run_id} has already ended ({run.status})", details={"run_id": run_id, "status": run.status}
        )
    cause = f"stopped by {caller}" + (f": {reason}" if reason else "")
    # The reason goes on the run first: the end is recorded with the run's reason (the local stack records
    # it while StopExecution is still returning; AWS reports it through the rule, or the refresh below).
    previous = run.reason
    core.store.update_run(run_id, {"reason": cause})
    # Closed first: an answer after this is refused, so nothing resumes a run that is being stopped. A
    # StopExecution that fails leaves them closed (the stop was decided); sending the stop again ends the run.
    close_pauses(core, run_id, by=caller, cause=cause)
    try:
        core.workflows.stop(arn, error=STOP_ERROR, cause=cause)
    except Exception:
        core.store.update_run(run_id, {"reason": previous})
        raise
    return runs.get(run_id)
