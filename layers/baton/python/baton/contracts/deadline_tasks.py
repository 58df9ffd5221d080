"""What the deadline tasks return (the Lambdas' outputs, not API bodies): the `gate_deadline` timer's
outcome, whose `next` its state machine's Choice reads (statemachines/gate_deadline.asl.json), and the
`reconcile` pass's report (baton.services.deadlines, baton.services.reconciler)."""

from __future__ import annotations

from typing import Any

from pydantic import SerializerFunctionWrapHandler, model_serializer

from baton.contracts.base import Contract
from baton.domain.gate_payloads import GateDeadlinePayload


class NextTimer(GateDeadlinePayload, Contract):
    """The timer's next input: its step, and how long its Wait waits for it."""

    wait_seconds: int


class TimerOutcome(Contract):
    """What a timer's firing did (the `gate_deadline` task's output; the timer's Choice reads `next`). At
    the deadline: `ended`/`released`; at a ladder step: `done`, `step` and the `next` step, if any."""

    ended: bool | None = None
    released: bool | None = None
    done: bool | None = None
    step: str | None = None
    reason: str
    next: NextTimer | None = None


class WaitReconciled(Contract):
    """One parked wait's reconcile (`Reconciler.reconcile_one`): ended at its deadline, or released."""

    ended: bool = False
    released: bool = False


class Settled(Contract):
    """One pause a pass settled: its run and its gate (a parked wait's, a tool-form await's `tool:<id>`)
    or its interaction (a met quorum's, a question's default), and its kind. Unset keys are left out."""

    run_id: str
    gate: str | None = None
    interaction_id: str | None = None
    kind: str | None = None

    @model_serializer(mode="wrap")
    def _set_keys_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


class ReconcileReport(Contract):
    """What one pass did (the `reconcile` task's output, with the parked-age metrics added)."""

    checked: int
    released: list[Settled]
    timed_out: list[str]  # tool-form awaits past their expiry
    ended: list[Settled]
    quorums: list[Settled]
    defaults: list[Settled]
