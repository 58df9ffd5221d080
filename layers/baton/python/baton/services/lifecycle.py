"""A run's end (`run_succeeded` / `run_failed` / `run_timed_out` / `run_aborted`), recorded once when its
execution ends, stamped with the execution's stop time and published like every other event. Fed by
`functions/run_lifecycle` (EventBridge; locally baton/local/moto_fixes.py) and by `RunService.refresh` when
the event never came. Exactly once: `ended_at` is set by a conditional write, so of at-least-once deliveries
and the read fallback one writer records and publishes; a status a gate already set (a timeout's `failed`
and its reason) stands."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from baton.domain.fields import OPEN_RUN_STATES
from baton.errors import ConflictError
from baton.events import RunEnded
from baton.ids import iso
from baton.notify.model import CHANNELS, Notification

if TYPE_CHECKING:
    from baton.domain.execution_events import ExecutionEnd
    from baton.models import Event, RunSummary
    from baton.services.core import Core

log = logging.getLogger("baton")


def run_of(core: Core, end: ExecutionEnd) -> RunSummary | None:
    """The run this execution is: a hosted run is named after its run (and holds its ARN); the
    executions of machines granted to Baton name their run in their input. A child execution (a review
    gate run as one Task of its parent) is not the run, and is left alone."""
    for run_id in dict.fromkeys(x for x in (end.name, end.run_id_hint) if x):
        run = core.store.get_run(run_id)
        if run is not None and run.execution_arn in (None, end.execution_arn):
            return run
    return None


def record_end(core: Core, end: ExecutionEnd, run: RunSummary | None = None) -> bool:
    """Record the end of `end`'s run (`run`: as its caller read it) once; True if this call recorded it."""
    run = run or run_of(core, end)
    if run is None:
        log.info("execution ended with no Baton run of its own", extra={"execution_arn": end.execution_arn})
        return False
    stopped = iso(end.stopped_at)
    status = end.run_status
    changes: dict[str, Any] = {"status": status, "updated_at": stopped, "ended_at": stopped}
    if status != "succeeded":
        changes["reason"] = run.reason or end.cause or end.error or status
    elif end.output is not None:
        changes["output"] = end.output
    ended = run.model_copy(update=changes)
    event = _end_event(core, ended, status, stopped)
    try:  # the run's end and its event in one write: nothing half recorded to undo
        core.store.end_run(run.run_id, changes, event, allowed_from=set(OPEN_RUN_STATES))
    except ConflictError:
        # a gate ended the run first (its timeout's `failed` and reason stand): add the stop time. Read
        # again, only on this path: the event names the reason the run holds.
        current = core.store.get_run(run.run_id)
        if current is None or current.ended_at is not None:
            return False  # a redelivery, or the read fallback got there first: recorded and published once
        ended = current.model_copy(update={"ended_at": stopped})
        event = _end_event(core, ended, status, stopped)
        try:
            core.store.end_run(run.run_id, {"ended_at": stopped}, event)
        except ConflictError:
            return False  # the read fallback got there meanwhile
    _publish(core, ended, end, event)
    return True


def _end_event(core: Core, ended: RunSummary, status: str, stopped: str) -> Event:
    payload = RunEnded.of_status(status, ended.reason if status != "succeeded" else None)
    return core.new_event(ended.run_id, payload).model_copy(update={"at": stopped})


def _publish(core: Core, run: RunSummary, end: ExecutionEnd, event: Event) -> None:
    """The end goes out like every other event (best effort, like `Core.notify`)."""
    channels = [c for c in end.notify_channels if c in CHANNELS] or ["console"]
    what = run.status.replace("_", " ")
    prompt = f"Run {run.run_id} ({run.workflow or 'external'}) {what}" + (f": {run.reason}" if run.reason else "")
    try:
        core.notifier.publish(
            Notification.model_validate(
                {
                    "event": event.type,
                    "kind": "run",
                    "run_id": run.run_id,
                    "prompt": prompt,
                    "channels": channels,
                    "created_at": event.at,
                    "extra": {"status": run.status, "ended_at": event.at, "workflow": run.workflow, "error": end.error},
                }
            )
        )
    except Exception:
        log.exception("notification failed", extra={"run_id": run.run_id})
