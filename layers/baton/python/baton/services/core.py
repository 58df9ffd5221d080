"""What every capability shares: the ports, the clock and ids, and the moves common to all gates
(record an event, notify, release a parked task token)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from baton.errors import ConflictError, GoneError, NotFoundError, TaskTokenError
from baton.events import EventPayload, RunResumed, RunStarted
from baton.ids import Clock, IdGenerator, SystemClock, UlidGenerator, iso, parse_iso
from baton.models import Event, Interaction, ParkedWait, RunSummary
from baton.notify.model import Notification

if TYPE_CHECKING:
    from baton.ports import Notifier, Store, TaskTokens, Workflows

log = logging.getLogger("baton")


@dataclass
class Core:
    store: Store
    tokens: TaskTokens
    workflows: Workflows
    notifier: Notifier
    workflow_arns: dict[str, str] = field(default_factory=dict)
    clock: Clock = field(default_factory=SystemClock)
    ids: IdGenerator = field(default_factory=UlidGenerator)

    def now(self) -> str:
        return iso(self.clock.now())

    def later(self, seconds: int) -> str:
        return iso(self.clock.now() + timedelta(seconds=seconds))

    def new_event(self, run_id: str, payload: EventPayload) -> Event:
        return Event(
            event_id=self.ids.new_id(), run_id=run_id, type=payload.event_type, at=self.now(), data=payload.data()
        )

    def record(self, run_id: str, payload: EventPayload) -> Event:
        event = self.new_event(run_id, payload)
        self.store.append_event(event)
        return event

    def require_run(self, run_id: str) -> RunSummary:
        run = self.store.get_run(run_id)
        if run is None:
            raise NotFoundError(f"run {run_id} not found", details={"run_id": run_id})
        return run

    def ensure_run(self, run_id: str) -> RunSummary:
        """External runs (agents that only talk to the API) come into being with their first request."""
        run = self.store.get_run(run_id)
        if run is not None:
            return run
        now = self.now()
        run = RunSummary(run_id=run_id, status="running", created_at=now, updated_at=now)
        try:
            self.store.create_run(run)
        except Exception:  # lost a creation race: the winner's record is the run
            found = self.store.get_run(run_id)
            if found is None:
                raise
            return found
        self.record(run_id, RunStarted(hosted=False))
        return run

    def set_run_status(self, run_id: str, status: str, *, allowed_from: set[str], **changes: Any) -> bool:
        """Move the run's status if it is in `allowed_from`; a run already elsewhere is left alone."""

        try:
            self.store.update_run(
                run_id, {"status": status, "updated_at": self.now(), **changes}, allowed_from=allowed_from
            )
        except ConflictError:
            return False
        return True

    def notify(self, interaction: Interaction, event: str, **extra: Any) -> None:
        """Notifications are best effort: a failed publish is logged, never loses the request."""
        req = interaction.request
        try:
            self.notifier.publish(
                Notification(
                    event=event,
                    kind=req.kind,
                    run_id=interaction.run_id,
                    interaction_id=interaction.interaction_id,
                    node=req.node,
                    prompt=req.prompt,
                    options=req.options,
                    channels=req.notify or ["console"],
                    created_at=interaction.created_at,
                    extra=extra,
                )
            )
        except Exception:
            log.exception("notification failed", extra={"run_id": interaction.run_id})

    def wait_expired(self, wait: ParkedWait) -> bool:
        """Has this parked gate's timeout passed? (Unknown deadline: assume it has.)"""
        seconds = wait.scope.get("timeout_seconds")
        if isinstance(seconds, int | float):
            return self.clock.now() >= parse_iso(wait.parked_at) + timedelta(seconds=seconds)
        for iid in wait.interaction_ids:
            interaction = self.store.get_interaction(wait.run_id, iid)
            if interaction is not None and interaction.expires_at:
                return self.clock.now() >= parse_iso(interaction.expires_at)
        return True

    def release_gate(self, run_id: str, gate: str, output: dict[str, Any], *, token: str | None = None) -> bool:
        """Send the parked token of `gate` with `output`. True if this call resumed the gate.

        Called only after the answer is stored, so a failure here loses nothing: a retry or the
        reconciler sends it later. The conditional release makes a second sender a no-op. With `token`,
        only that parked token is sent (the reconciler: a gate re-parked for a later round is left alone).
        """
        wait = self.store.get_wait(run_id, gate)
        if wait is None or wait.status != "parked" or (token is not None and wait.task_token != token):
            return False
        try:
            self.tokens.send_success(wait.task_token, output)
        except TaskTokenError as err:
            if err.reason != "TaskTimedOut":
                # InvalidToken / TaskDoesNotExist: someone else already resumed it or the run ended.
                self.store.release_wait(wait, "released")
                return False
            # AWS answers TaskTimedOut both for a gate whose timeout passed and for a token a twin
            # sender already closed. Before the deadline it is the twin (which marks the wait
            # released); after it, the gate's timeout path owns the wait. Either way, don't touch it.
            if not self.wait_expired(wait):
                return False
            raise GoneError(
                f"the gate '{gate}' of run {run_id} already timed out; the answer is stored but "
                "nothing is waiting for it",
                details={"reason": err.reason, "gate": gate},
            ) from err
        if not self.store.release_wait(wait, "released"):
            return False
        self.set_run_status(run_id, "running", allowed_from={"paused_waiting_human"})
        self.record(run_id, RunResumed(gate=gate, kind=wait.kind))
        return True
