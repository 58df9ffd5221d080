"""Baton ends every pause itself at its deadline: one timer per parked gate.

A park (ask, await gate, hosted interrupt, review) stores its wait with `park_wait`, which then starts
the gate's timer (the `DeadlineTimers` port: deployed and locally, an execution of
`statemachines/gate_deadline.asl.json`, a Step Functions Wait then the `gate_deadline` Lambda), named
after the wait so a retried park starts no second one. At the deadline the Lambda calls
`Deadlines.fire`, which takes the existing deadline path for that one wait
(`baton.services.reconciler.Reconciler.reconcile_one`: what is still pending is timed out and the task
fails with `BatonDeadlinePassed` and its cause; a scope answered in time is released instead).

The timer fires at the deadline or up to `TIMER_PRECISION_SECONDS` after it, and Step Functions' own
`TimeoutSeconds` comes `GRACE_SECONDS` after the deadline (`baton.domain.deadline`), so Baton's
failure lands first and States.Timeout is only the backstop. A timer that fails to start loses
nothing: the reconciler (every minute) still sweeps every parked wait past its deadline.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from baton.domain.deadline import TIMER_PRECISION_SECONDS, timer_name, timer_wait_seconds
from baton.domain.gate_payloads import GateDeadlinePayload
from baton.ids import parse_iso

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.models import Interaction, ParkedWait
    from baton.services.core import Core

log = logging.getLogger("baton")

TOOL_GATE = "tool"  # the timer of a tool-form await names its interaction, not a parked wait
# A timer that fires this early (clock skew between the engine and the Lambda) waits for the deadline.
MAX_EARLY_SECONDS = 2 * TIMER_PRECISION_SECONDS


def park_wait(core: Core, wait: ParkedWait) -> None:
    """Store a wait a park just made, then start its timer: how every park parks."""
    core.store.put_wait(wait)
    arm(core, wait)


def arm(core: Core, wait: ParkedWait) -> None:
    """Start the timer of a wait just parked (best effort: the reconciler sweeps a missed one)."""
    if wait.deadline is not None:
        payload = GateDeadlinePayload(run_id=wait.run_id, gate=wait.gate, deadline=parse_iso(wait.deadline))
        _start(core, payload, key=wait.gate, deadline=wait.deadline)


def arm_tool_await(core: Core, awaiting: Interaction) -> None:
    """Start the timer of a tool-form await (`QuestionService.await_tool`) at its expiry."""
    if awaiting.expires_at is not None:
        payload = GateDeadlinePayload(
            run_id=awaiting.run_id,
            gate=TOOL_GATE,
            deadline=parse_iso(awaiting.expires_at),
            interaction_id=awaiting.interaction_id,
        )
        _start(core, payload, key=f"{TOOL_GATE}:{awaiting.interaction_id}", deadline=awaiting.expires_at)


def _start(core: Core, payload: GateDeadlinePayload, *, key: str, deadline: str) -> None:
    if core.timers is None:
        return
    try:
        core.timers.start(
            timer_name(payload.run_id, key, deadline), payload, timer_wait_seconds(payload.deadline, core.clock.now())
        )
    except Exception:  # the park itself succeeded: never fail it for its timer
        log.exception(
            "the deadline timer did not start; the reconciler ends the pause", extra={"run_id": payload.run_id}
        )


class Deadlines:
    """What the `gate_deadline` Lambda does when a gate's timer fires. It is given the reconciler's paths
    (`Reconciler.reconcile_one`, `QuestionService.time_out_tool_await`), which park through this module."""

    def __init__(
        self,
        core: Core,
        *,
        reconcile_one: Callable[[ParkedWait], dict[str, bool]],
        time_out_tool_await: Callable[[str, str], bool],
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.core = core
        self._reconcile_one = reconcile_one
        self._time_out_tool_await = time_out_tool_await
        self._sleep = sleep

    def fire(self, timer: GateDeadlinePayload) -> dict[str, Any]:
        early = (timer.deadline - self.core.clock.now()).total_seconds()
        if early > MAX_EARLY_SECONDS:
            return {"ended": False, "released": False, "reason": "not_due"}  # the reconciler will see it
        if early > 0:
            self._sleep(early)
        if timer.interaction_id is not None:
            ended = self._time_out_tool_await(timer.run_id, timer.interaction_id)
            return {"ended": ended, "released": False, "reason": "timed_out" if ended else "not_pending"}
        wait = self.core.store.get_wait(timer.run_id, timer.gate)
        if (
            wait is None
            or wait.status != "parked"
            or wait.deadline is None
            or parse_iso(wait.deadline) != timer.deadline
        ):
            # Released in time, already ended, or the gate parked again (another round, another timer).
            return {"ended": False, "released": False, "reason": "not_parked"}
        outcome = self._reconcile_one(wait)
        # Not ended here: an answer accepted in time (released now if its send was lost), or a pause
        # settled before (an interrupt a late read already timed out gets its task failure sent now).
        settled = "settled" if outcome["released"] else "answered_in_time"
        return {**outcome, "reason": "deadline" if outcome["ended"] else settled}
