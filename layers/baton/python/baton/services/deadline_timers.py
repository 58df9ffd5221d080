"""What a pause's timer does when it fires (the `gate_deadline` Lambda, `statemachines/gate_deadline.asl.json`;
started by baton.services.deadlines): a ladder step (remind, escalate) while the pause waits, or at the
deadline the reconciler's own path for the pause (`Reconciler.reconcile_one`, a tool-form await's time-out,
a question's default). Idempotent: a wait already released or ended is left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.contracts.deadline_tasks import NextTimer, TimerOutcome
from baton.domain.deadline import INTERACTION_GATE, TIMER_PRECISION_SECONDS, TOOL_GATE, timer_wait_seconds
from baton.domain.ladder import TIMED_OUT_DEFAULT, Ladder
from baton.domain.parked_ladder import defaults_at_deadline, wait_ladder, wait_steps
from baton.events import Escalated, ReminderSent
from baton.ids import parse_iso
from baton.models import AwaitToolRequest
from baton.services.away import delegate_for
from baton.services.deadlines import interactions_of

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from baton.domain.gate_payloads import GateDeadlinePayload
    from baton.domain.ladder import LadderStep
    from baton.models import Interaction, ParkedWait
    from baton.services.core import Core
    from baton.services.reconciler import Reconciler


# A timer that fires this early (clock skew between the engine and the Lambda) waits for the deadline.
MAX_EARLY_SECONDS = 2 * TIMER_PRECISION_SECONDS


@dataclass(frozen=True)
class _StepSubject:
    """What a ladder step is about: its event's gate, the interactions still pending, their ladder."""

    gate: str
    pending: list[Interaction]
    ladder: Ladder
    steps: list[LadderStep]
    deadline: str | None
    ends_after_last: bool = False  # no deadline step follows: the pause's waiter ends it


class Deadlines:
    def __init__(self, reconciler: Reconciler, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.core, self._reconciler, self._sleep = reconciler.core, reconciler, sleep

    def fire(self, timer: GateDeadlinePayload) -> TimerOutcome:
        """A ladder step returns the timer's next step under `next`; the deadline ends the timer."""
        if timer.step != "deadline" or (timer.gate == INTERACTION_GATE and timer.interaction_id is not None):
            return self._walk(timer)
        if not self._due(timer.deadline):
            return TimerOutcome(ended=False, released=False, reason="not_due")  # the reconciler will see it
        if timer.interaction_id is not None:
            ended = self._reconciler.questions.time_out_tool_await(timer.run_id, timer.interaction_id)
            return TimerOutcome(ended=ended, released=False, reason="timed_out" if ended else "not_pending")
        wait = self._parked_for(timer)
        if wait is None:  # released in time, already ended, or parked again (another round, another timer)
            return TimerOutcome(ended=False, released=False, reason="not_parked")
        outcome = self._reconciler.reconcile_one(wait)
        # Not ended here: an answer accepted in time (released now if its send was lost), or a pause
        # settled before (an interrupt a late read already timed out gets its task failure sent now).
        settled = "settled" if outcome.released else "answered_in_time"
        reason = "deadline" if outcome.ended else settled
        return TimerOutcome(ended=outcome.ended, released=outcome.released, reason=reason)

    def _due(self, deadline: datetime) -> bool:
        early = (deadline - self.core.clock.now()).total_seconds()
        if 0 < early <= MAX_EARLY_SECONDS:
            self._sleep(early)
        return early <= MAX_EARLY_SECONDS

    def _parked_for(self, timer: GateDeadlinePayload) -> ParkedWait | None:
        wait = self.core.store.get_wait(timer.run_id, timer.gate)
        if wait is None or wait.status != "parked" or wait.deadline is None:
            return None
        return wait if parse_iso(wait.deadline) == timer.deadline else None

    def _walk(self, timer: GateDeadlinePayload) -> TimerOutcome:
        """One ladder step: sent while the pause waits, else the timer ends; the next step under `next`."""
        subject = self._subject(timer)
        if isinstance(subject, str):  # why the timer ends
            return TimerOutcome(done=True, step=timer.step, reason=subject)
        if timer.step == "deadline":  # a question's declared default (only a pause no gate parks gets here)
            due = self._due(timer.deadline)
            assert timer.interaction_id is not None
            taken = due and self._reconciler.questions.take_default(timer.run_id, timer.interaction_id)
            reason = TIMED_OUT_DEFAULT if taken else "not_pending" if due else "not_due"
            return TimerOutcome(done=True, step="deadline", reason=reason)
        this = next((s for s in subject.steps if s.step == timer.step), None)
        if this is not None and subject.pending:
            self._send(this, subject)
        following = next((s for s in subject.steps if s.at > this.at), None) if this is not None else None
        reason = "sent" if this is not None else "not_a_step"  # not a step of its ladder: on to the deadline
        if following is None and subject.ends_after_last:
            return TimerOutcome(done=True, step=timer.step, reason=reason, next=None)  # `next` in the output
        return TimerOutcome(done=False, step=timer.step, reason=reason, next=self._next(timer, following))

    def _subject(self, timer: GateDeadlinePayload) -> _StepSubject | str:
        """What a step is about (a wait's, a tool await's or one interaction's pending), or why the timer ends."""
        if timer.interaction_id is None or timer.gate not in (INTERACTION_GATE, TOOL_GATE):
            return self._wait_subject(timer)
        i = self.core.store.get_interaction(timer.run_id, timer.interaction_id)
        ladder = i.request.ladder if i is not None else None
        if i is None or ladder is None or i.state.status != "pending":
            return "not_pending"
        steps = ladder.steps_from(parse_iso(i.created_at), timer.deadline)
        if timer.gate == TOOL_GATE:
            asked = (self.core.store.get_interaction(i.run_id, iid) for iid in i.request_as(AwaitToolRequest).pending)
            pending = [q for q in asked if q is not None and q.state.status == "pending"]
            return _StepSubject(TOOL_GATE, pending, ladder, steps, i.expires_at)
        if i.expires_at is None or parse_iso(i.expires_at) != timer.deadline:
            return "not_pending"
        # Its node names the step's gate; without a default to take the timer ends after its last step.
        return _StepSubject(i.request.node, [i], ladder, steps, i.expires_at, not defaults_at_deadline(i))

    def _wait_subject(self, timer: GateDeadlinePayload) -> _StepSubject | str:
        wait = self._parked_for(timer)
        if wait is None:
            return "not_parked"
        pending = [i for i in interactions_of(self.core, wait) if i.state.status == "pending"]
        asked = next((i.request for i in pending if i.request.ladder is not None), None)
        own = wait_ladder(wait)  # an await gate's own ladder, about its still-unanswered questions
        ladder = own or (asked.ladder if asked is not None else None)
        if ladder is None or not pending:
            return "answered"  # the rest of the ladder is skipped
        return _StepSubject(wait.gate, pending, ladder, wait_steps(wait, timer.deadline, asked), wait.deadline)

    def _send(self, this: LadderStep, subject: _StepSubject) -> None:
        """One ladder step's event, then a notification per pending interaction (a little early: it waits)."""
        core = self.core
        if (early := (this.at - core.clock.now()).total_seconds()) > 0:
            self._sleep(min(early, MAX_EARLY_SECONDS))
        pending, remind = subject.pending, this.step == "remind"
        own: list[str] = sorted({c for i in pending for c in i.request.notify})
        channels = own if remind else [str(c) for c in subject.ladder.escalate_to]
        iids = [i.interaction_id for i in pending]
        addressed = {} if remind else addressed_to(core, subject.ladder.escalate_to_operators)
        step = (
            ReminderSent(gate=subject.gate, interaction_ids=iids, channels=channels)
            if remind
            else Escalated(gate=subject.gate, interaction_ids=iids, channels=channels, **addressed)
        )
        core.record(pending[0].run_id, step)
        for i in pending:  # a reminder to the interaction's own channels, an escalation to the ladder's
            core.notify(i, str(step.event_type), None if remind else channels, deadline=subject.deadline, **addressed)
            if addressed.get("operators"):  # and the operators it names (or their delegates), on their devices
                core.push_to(addressed["operators"], i, "escalated")

    def _next(self, timer: GateDeadlinePayload, following: LadderStep | None) -> NextTimer:
        due = following.at if following is not None else timer.deadline
        step = following.step if following is not None else "deadline"
        wait_seconds = timer_wait_seconds(due, self.core.clock.now())
        return NextTimer.model_validate({**timer.model_dump(), "step": step, "wait_seconds": wait_seconds})


def addressed_to(core: Core, operators: list[str] | None) -> dict[str, list[str]]:
    """An escalation's named operators as addressed: one away goes to their delegate, and the substitution
    says for whom (the `escalated` event's and the notification's `operators` and `substitutions`)."""
    if not operators:
        return {}
    aways = [(operator, delegate_for(core, operator)) for operator in operators]
    to = list(dict.fromkeys(away.delegate if away is not None else operator for operator, away in aways))
    substitutions = [f"{away.delegate} {away.for_whom()}" for _, away in aways if away is not None]
    return {"operators": to} | ({"substitutions": substitutions} if substitutions else {})
