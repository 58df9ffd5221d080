"""The grace between Baton's deadline and Step Functions' own timeout, written once.

Baton's deadline for a parked task is its entered time + its declared timeout
(`baton.services.core.Core.deadline_of`): a pause times out when it says it does. Step Functions' own
timeout of the task is the backstop, `GRACE_SECONDS` later: the ASL gives the task the declared timeout
+ the grace (`task_timeout_seconds`; in ASL `States.MathAdd(<timeout path>, GRACE_SECONDS)` on the same
`timeout_seconds` the park payload carries; the CDK helpers and `baton.workflows.gate_states` add it).
At the deadline the gate's timer (`statemachines/gate_deadline.asl.json`, started by the park through
`baton.services.deadlines.park_wait`) ends the pause itself. The grace must exceed what the timer can be
late by, so Baton's end (a stored answer delivered, or the task failed) always lands before Step
Functions' timeout:

* `TIMER_PRECISION_SECONDS`: the timer is a Step Functions Wait state, which counts whole seconds
  (a Wait on a timestamp truncates its milliseconds); the timer waits the deadline rounded up to the
  next second, so it fires up to 1 s after the deadline, never before it;
* `TIMER_DELIVERY_SECONDS`: the Wait's Lambda task (a cold start included) and its send.

(EventBridge Scheduler was the other engine considered: its one-time schedules fire with 60 s
precision, which would make every gate's grace over a minute.)
"""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from baton.models import ParkedWait

TIMER_PRECISION_SECONDS = 1.0
TIMER_DELIVERY_SECONDS = 3.0
# Step Functions' timeout of a parked task comes this long after Baton's deadline (whole seconds: ASL adds it).
GRACE_SECONDS = int(TIMER_PRECISION_SECONDS + TIMER_DELIVERY_SECONDS) + 1
# A parked wait still holding its task: parked, or expiring (the deadline path closed it to answers and
# is deciding: release or fail).
OPEN_WAIT_STATUSES = ("parked", "expiring")
TIMER_STATE_MACHINE = "gate_deadline"  # the timer's entry in baton.workflows.resources.STATE_MACHINES
TOOL_GATE = "tool"  # the timer of a tool-form await names its interaction, not a parked wait
INTERACTION_GATE = "interaction"  # the ladder timer of a pause no gate parks (question, blocking ask, SDK interrupt)


def task_timeout_seconds(timeout_seconds: int) -> int:
    """Step Functions' TimeoutSeconds of a task whose pause declares `timeout_seconds`: the grace after it."""
    return timeout_seconds + GRACE_SECONDS


def timer_wait_seconds(deadline: datetime, now: datetime) -> int:
    """Whole seconds the timer waits so that it fires at the deadline or up to 1 s after it."""
    return max(0, math.ceil((deadline - now).total_seconds()))


def timer_name(run_id: str, gate: str, deadline: str) -> str:
    """The timer execution's name: one per parked wait (run, gate, deadline), so a retried park finds
    its timer already started (Step Functions refuses a second execution of the same name)."""
    digest = hashlib.sha256(f"{run_id}\n{gate}\n{deadline}".encode()).hexdigest()[:40]
    return f"deadline-{digest}"


def holding_run(wait: ParkedWait, waits: Sequence[ParkedWait]) -> list[ParkedWait]:
    """The run's other waits that hold it paused: open on a person. An await gate holds it only while it
    names pending questions (with none it is released at once)."""
    return [
        w
        for w in waits
        if w.gate != wait.gate and w.status in OPEN_WAIT_STATUSES and (w.kind != "await" or bool(w.interaction_ids))
    ]
