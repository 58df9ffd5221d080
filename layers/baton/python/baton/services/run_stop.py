"""Stopping a hosted run (`baton runs stop`, `POST /api/runs/{run_id}/stop`): StopExecution, then the run's
`run_aborted` is recorded at once, the same way `functions/run_lifecycle` records it (baton.services.lifecycle),
so `baton runs events --follow` sees the end without waiting for the EventBridge rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.errors import ConflictError
from baton.models import TERMINAL_RUN_STATES

if TYPE_CHECKING:
    from baton.models import RunSummary
    from baton.services.core import Core
    from baton.services.runs import RunService

STOP_ERROR = "BatonRunStopped"


def stop_run(core: Core, runs: RunService, run_id: str, *, caller: str, reason: str | None) -> RunSummary:
    """Stop `run_id`'s execution; 409 when the run is not hosted or has already ended."""
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
    try:
        core.workflows.stop(arn, error=STOP_ERROR, cause=cause)
    except Exception:
        core.store.update_run(run_id, {"reason": previous})
        raise
    return runs.refresh(core.require_run(run_id))
