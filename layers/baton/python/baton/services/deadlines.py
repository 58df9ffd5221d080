"""Baton ends every pause itself at its deadline: one timer per parked gate (the `DeadlineTimers` port:
`statemachines/gate_deadline.asl.json`, a Wait then the `gate_deadline` Lambda, baton.services.deadline_timers),
named after its wait so a retried park starts none again (`park_wait`), or after its interaction for a pause no
gate parks (`arm_interaction`). A timer that fails to start loses nothing: the reconciler sweeps every parked
wait each minute.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from baton.domain.deadline import INTERACTION_GATE, timer_name, timer_wait_seconds
from baton.domain.gate_payloads import GateDeadlinePayload
from baton.domain.interaction_timers import interaction_timer_gate, interaction_timer_key, interaction_timer_steps
from baton.domain.ladder import TIMED_OUT_DEFAULT
from baton.domain.parked_ladder import default_answer, wait_steps
from baton.errors import ConflictError
from baton.events import TimedOutDefault
from baton.ids import parse_iso
from baton.models import ParkedWait, status_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.domain.ladder import LadderStep
    from baton.models import Event, Interaction, InteractionRequest, Message
    from baton.ports import Guard
    from baton.services.core import Core

log = logging.getLogger("baton")


def park_wait(
    core: Core,
    wait: ParkedWait,
    *,
    pause: InteractionRequest | None = None,
    pause_at: str | None = None,
    events: Sequence[Event] = (),
) -> None:
    """Store a wait a park just made (with `pause_at`, the run paused and `events` recorded in its write)
    and start its timer, due at its ladder's first step, else the deadline."""
    core.store.put_wait(wait, pause_at=pause_at, events=events)
    if wait.deadline is not None:
        deadline = parse_iso(wait.deadline)
        payload = GateDeadlinePayload(run_id=wait.run_id, gate=wait.gate, deadline=deadline)
        _start(core, payload, wait_steps(wait, deadline, pause), key=wait.gate, deadline=wait.deadline)


def park_interaction(core: Core, interaction: Interaction, token: str, deadline: str | None = None) -> None:
    """Park a hosted task's `token` for one interaction at WAIT#<its node>; never over the wait an earlier
    attempt of this park left (it may be released by now)."""
    node = interaction.request.node
    if core.parked_again(interaction.run_id, node, token) is not None:
        return
    wait = ParkedWait(
        run_id=interaction.run_id,
        gate=node,
        task_token=token,
        kind=interaction.request.kind,
        interaction_ids=[interaction.interaction_id],
        parked_at=interaction.created_at,
        deadline=deadline or interaction.expires_at,
    )
    park_wait(core, wait, pause=interaction.request)


def arm_interaction(core: Core, interaction: Interaction, gate: str = INTERACTION_GATE) -> None:
    """Start the timer of a pause no gate parks, named after its interaction: with ladder steps or a
    question's default to take; a tool-form await's (gate `TOOL_GATE`) always."""
    steps = interaction_timer_steps(interaction, gate)
    expires_at, iid = interaction.expires_at, interaction.interaction_id
    if steps is not None and expires_at is not None:
        payload = GateDeadlinePayload(
            run_id=interaction.run_id, gate=gate, deadline=parse_iso(expires_at), interaction_id=iid
        )
        _start(core, payload, steps, key=interaction_timer_key(interaction, gate), deadline=expires_at)


def stop_interaction_timer(core: Core, interaction: Interaction) -> None:
    """The timer `arm_interaction` started for a pause no gate parks, stopped once it settled: for the
    settling write's winner only."""
    gate = interaction_timer_gate(interaction)
    # none started (or still pending): a stop would be a call for nothing
    if interaction.state.status != "pending" and interaction_timer_steps(interaction, gate) is not None:
        core.stop_timer(interaction.run_id, interaction_timer_key(interaction, gate), interaction.expires_at)


def _start(core: Core, payload: GateDeadlinePayload, steps: list[LadderStep], *, key: str, deadline: str) -> None:
    if core.timers is None:
        return
    if steps:
        payload = payload.model_copy(update={"step": steps[0].step})
    try:
        core.timers.start(
            timer_name(payload.run_id, key, deadline),
            payload,
            timer_wait_seconds(steps[0].at if steps else payload.deadline, core.clock.now()),
        )
    except Exception:  # the park itself succeeded: never fail it for its timer
        log.exception(
            "the deadline timer did not start; the reconciler ends the pause", extra={"run_id": payload.run_id}
        )


def interactions_of(core: Core, wait: ParkedWait) -> list[Interaction]:
    found = (core.store.get_interaction(wait.run_id, iid) for iid in wait.interaction_ids)
    return [i for i in found if i is not None]


def time_out_if_pending(
    core: Core, i: Interaction, reason: str = "timeout", *, at: str | None = None, events: Sequence[Event] = ()
) -> bool:
    """`i` timed out by a conditional write, `events` in it. False: answered (or ended) at the last moment,
    left as it is (nothing written)."""
    try:
        core.store.transition_interaction(i, status_of(i.state, "timed_out", at=at, reason=reason), with_records=events)
    except ConflictError:
        return False
    return True


def answer_with_default(
    core: Core, i: Interaction, deadline: str | None, *, also: Sequence[Message] = (), guards: Sequence[Guard] = ()
) -> Interaction | None:
    """Answer a pending interaction with its declared default, nobody's (outcome `timed_out_default`), with
    its event (after `also`) in one conditional write (and `guards`). None without a default; ConflictError
    (GuardFailedError) if it changed first."""
    ladder = i.request.ladder
    if ladder is None or ladder.default is None or i.state.status != "pending":
        return None
    event = core.new_event(
        i.run_id,
        TimedOutDefault(
            interaction_id=i.interaction_id,
            node=i.request.node,
            kind=i.request.kind,
            default=ladder.default.default,
            deadline=deadline or i.expires_at or core.now(),
        ),
    )
    answer = default_answer(i, ladder.default.default)
    new_state = status_of(i.state, "answered", answer=answer, at=core.now(), reason=TIMED_OUT_DEFAULT)
    return core.store.transition_interaction(i, new_state, with_records=[*also, event], guards=guards)
