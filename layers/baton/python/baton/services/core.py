"""What every capability shares: the ports, the clock and ids, and the moves common to all gates (record
an event, notify, release a parked task token).

One clock decides a deadline (`deadline_of`): the task's entered time plus its declared timeout; Step
Functions' own timeout comes GRACE_SECONDS later (`baton.domain.deadline`). An answer after it is a 410
kept as `answer_late` (`refuse_if_late`). A park is idempotent under LambdaInvoke's retries: `park_id`
derives the interaction id from the task, `parked_again` knows a retry by the token its gate holds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NoReturn

from pydantic import BaseModel

from baton.domain.channels import refuse_unconfigured
from baton.domain.deadline import GRACE_SECONDS, OPEN_WAIT_STATUSES, holding_run, timer_name
from baton.errors import ConflictError, GoneError, NotFoundError, TaskTokenError
from baton.events import AnswerLate, EventPayload, RunResumed, RunStarted
from baton.ids import Clock, IdGenerator, SystemClock, UlidGenerator, iso, parse_iso, task_interaction_id
from baton.models import Event, Interaction, InteractionStatus, ParkedWait, RunSummary
from baton.notify.model import CHANNELS, Notification
from baton.policy.source import FixedPolicy, PolicySource
from baton.services.answer_outcomes import SendFailedError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from collections.abc import Set as AbstractSet

    from baton.contracts.push import PushReason
    from baton.models import InteractionRequest
    from baton.passkey_ports import SecondFactor
    from baton.ports import DeadlineTimers, Notifier, Store, TaskTokens, Workflows
    from baton.push_ports import OperatorPush

log = logging.getLogger("baton")

__all__ = ["DEADLINE_ERROR", "GRACE_SECONDS", "Core"]
DEADLINE_ERROR = "BatonDeadlinePassed"  # the task failure Baton sends at a deadline (the gates' Catch names it)
# What Step Functions says when a token was already closed; before the deadline that is an earlier send.
_CLOSED = ("TaskTimedOut", "InvalidToken")


@dataclass
class Core:
    store: Store
    tokens: TaskTokens
    workflows: Workflows
    notifier: Notifier
    workflow_arns: dict[str, str] = field(default_factory=dict)
    clock: Clock = field(default_factory=SystemClock)
    ids: IdGenerator = field(default_factory=UlidGenerator)
    timers: DeadlineTimers | None = None  # each gate's timer (baton.services.deadlines); None: the reconciler only
    channels: tuple[str, ...] = CHANNELS  # the notify channels the stack wires (Settings.notify_channels)
    policy: PolicySource = field(default_factory=FixedPolicy)  # decides tool calls first (issue 31); none: people
    push: OperatorPush | None = None  # Web Push to operators' devices (baton/channels/push/sender.py); None: off
    second_factor: SecondFactor | None = None  # passkeys for risky approvals (baton/services/passkeys.py); None: off

    def now(self) -> str:
        return iso(self.clock.now())

    def deadline_of(self, timeout_seconds: float, entered_at: datetime | None = None) -> str:
        return iso((entered_at or self.clock.now()) + timedelta(seconds=timeout_seconds))

    def is_past(self, deadline: str | None) -> bool:
        return deadline is not None and self.clock.now() >= parse_iso(deadline)

    def park_id(self, token: str, entered_at: datetime | None) -> str:
        """Without an entry time a retry gets another id; `parked_again` still finds it by its token."""
        return task_interaction_id(token, entered_at or self.clock.now())

    def parked_again(self, run_id: str, gate: str, token: str) -> ParkedWait | None:
        """The wait a retried park left (this token at this gate, released or not), holding what it parked."""
        wait = self.store.get_wait(run_id, gate)
        return wait if wait is not None and wait.task_token == token and wait.interaction_ids else None

    def refuse_if_late(
        self, interaction: Interaction, answer: Any, *, caller: str, deadline: str | None, **details: Any
    ) -> None:
        if deadline is not None and self.is_past(deadline):
            self._refuse_late(interaction, answer, caller=caller, deadline=deadline, **details)

    def refuse_if_ended(self, interaction: Interaction, answer: Any, /, *, caller: str, **details: Any) -> None:
        """A pause its deadline ended (timed out, or defaulted): a 410 as `refuse_if_late`, never a 409
        naming the default as if a person had won."""
        st = interaction.state
        if st.status != "timed_out" and st.outcome is None:
            return
        deadline = interaction.expires_at or st.answered_at or self.now()
        why = f"took its declared default ({st.outcome})" if st.outcome else "timed out"
        self._refuse_late(interaction, answer, caller=caller, deadline=deadline, why=why, outcome=st.outcome, **details)

    def _refuse_late(
        self, i: Interaction, answer: Any, /, *, caller: str, deadline: str, why: str = "timed out", **details: Any
    ) -> NoReturn:
        kind, iid = i.request.kind, i.interaction_id
        late = AnswerLate(
            interaction_id=iid, node=i.request.node, kind=kind, answer=answer, by=caller, deadline=deadline
        )
        self.record(i.run_id, late)
        raise GoneError(
            f"{kind} {iid} {why}: its deadline passed at {deadline}; the answer is recorded as late and not delivered",
            details={"reason": "deadline_passed", "deadline": deadline, "interaction_id": iid, **details},
        )

    def new_event(self, run_id: str, payload: EventPayload) -> Event:
        return Event(
            event_id=self.ids.new_id(), run_id=run_id, type=payload.event_type, at=self.now(), data=payload.data()
        )

    def record(self, run_id: str, payload: EventPayload) -> Event:
        event = self.new_event(run_id, payload)
        self.store.append_event(event)
        return event

    def new_interaction(
        self,
        run_id: str,
        request: InteractionRequest,
        *,
        expires_at: str | None,
        interaction_id: str | None = None,
        state: InteractionStatus | None = None,
    ) -> Interaction:
        return Interaction(
            interaction_id=interaction_id or self.ids.new_id(),
            run_id=run_id,
            created_at=self.now(),
            expires_at=expires_at,
            request=request,
            state=state or InteractionStatus(),
        )

    def interaction_of(self, run_id: str, interaction_id: str, kind: str, noun: str | None = None) -> Interaction:
        found = self.store.get_interaction(run_id, interaction_id)
        if found is None or found.request.kind != kind:
            raise NotFoundError(
                f"{noun or kind} {interaction_id} not found in run {run_id}",
                details={"run_id": run_id, "interaction_id": interaction_id},
            )
        return found

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

    def set_run_status(self, run_id: str, status: str, *, allowed_from: AbstractSet[str], **changes: Any) -> bool:
        """False (left alone) when the run is not in `allowed_from`."""
        try:
            self.store.update_run(
                run_id, {"status": status, "updated_at": self.now(), **changes}, allowed_from=set(allowed_from)
            )
        except ConflictError:
            return False
        return True

    def check_notify(self, notify: list[str] | None, *, field: str = "notify") -> None:
        refuse_unconfigured(notify, self.channels, field=field)

    def notify(self, interaction: Interaction, event: str, to: list[str] | None = None, /, **extra: Any) -> None:
        """To the request's channels, or `to` (an escalation). Best effort: never fails."""
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
                    channels=to or req.notify or ["console"],
                    created_at=interaction.created_at,
                    extra=extra,
                )
            )
        except Exception:
            log.exception("notification failed", extra={"run_id": interaction.run_id})

    def push_to(self, operators: list[str], interaction: Interaction, reason: PushReason) -> None:
        if self.push is not None:
            for operator in operators:
                self.push.push(operator, interaction, reason)

    def release_gate(
        self,
        run_id: str,
        gate: str,
        output: BaseModel | dict[str, Any],
        *,
        token: str | None = None,
        wait: ParkedWait | None = None,
        also: Sequence[EventPayload] = (),
        siblings: Sequence[ParkedWait] | None = None,
    ) -> bool:
        """Send the parked token with the stored `output`. True if the gate resumed with it (by this send,
        or an earlier one whose bookkeeping this completes); SendFailedError: not sent (the reconciler's).
        `token`: only that token; `also`: events recorded with it; `siblings`: the run's waits as read."""
        wait = wait if wait is not None else self.store.get_wait(run_id, gate)
        if wait is None or wait.status not in OPEN_WAIT_STATUSES or token not in (None, wait.task_token):
            return False
        try:
            self.tokens.send_success(
                wait.task_token, output.model_dump(mode="json") if isinstance(output, BaseModel) else output
            )
        except TaskTokenError as err:
            # An earlier send of this stored answer may have closed the token, its sender dead before the
            # bookkeeping (or about to finish it): then it is completed here, exactly once.
            if not self._closed_by_earlier_send(wait, err):
                return False
        except Exception as err:  # throttled past the retries, unreachable: the answer waits stored
            log.warning("send failed; the reconciler sends it", extra={"run_id": run_id, "gate": gate, "error": err})
            raise SendFailedError(run_id, gate) from err
        try:  # the workflow is resumed whatever happens here: a failed write is logged, not raised
            self.complete_release(wait, also=also, siblings=siblings)
        except Exception:
            log.exception("release bookkeeping failed; the reconciler completes it", extra={"run_id": wait.run_id})
        return True  # sent; if a twin finished the bookkeeping first, the resume is still ours

    def complete_release(
        self, wait: ParkedWait, *, also: Sequence[EventPayload] = (), siblings: Sequence[ParkedWait] | None = None
    ) -> bool:
        """One write: the wait released (one caller wins), `also` recorded, and the run running with
        `run_resumed` only if no other pause still holds it."""
        holding = holding_run(wait, siblings if siblings is not None else self.store.list_run_waits(wait.run_id))
        done = self.store.record_release(
            wait,
            run_status="running",
            run_from=set() if holding else {"paused_waiting_human"},
            events=[self.new_event(wait.run_id, payload) for payload in also],
            if_moved=[self.new_event(wait.run_id, RunResumed(gate=wait.gate, kind=wait.kind))],
        )
        if done and holding:
            self._resume_if_idle(wait)
        if done:
            self.stop_timer(wait.run_id, wait.gate, wait.deadline)
        return done

    def release_unsent(self, wait: ParkedWait) -> bool:
        """With no answer sent (its task failed, or ended): True for the one caller that released it."""
        released = self.store.release_wait(wait, "released")
        if released:
            self.stop_timer(wait.run_id, wait.gate, wait.deadline)
        return released

    def stop_timer(self, run_id: str, key: str, deadline: str | None) -> None:
        """A settled pause's timer ends now: its firing would cost transitions and a Lambda invocation
        for nothing. Past the deadline it is firing (perhaps the very caller) or has ended."""
        if self.timers is None or deadline is None or self.is_past(deadline):
            return
        try:
            self.timers.stop(timer_name(run_id, key, deadline))
        except Exception:  # the settlement stands; the timer fires, finds nothing to do and ends
            log.warning("a settled pause's timer was not stopped", extra={"run_id": run_id, "timer": key})

    def _resume_if_idle(self, wait: ParkedWait) -> None:
        """The branches holding the run were read before this release: one may have been released since by
        a release that saw this one parked. Read again; resume the run if none holds."""
        if not holding_run(wait, self.store.list_run_waits(wait.run_id)) and self.set_run_status(
            wait.run_id, "running", allowed_from={"paused_waiting_human"}
        ):
            self.record(wait.run_id, RunResumed(gate=wait.gate, kind=wait.kind))

    def fail_at_deadline(self, wait: ParkedWait, cause: str) -> bool:
        """DEADLINE_ERROR to the task (its Catch fails the run), then the wait timed out."""
        try:
            self.tokens.send_failure(wait.task_token, DEADLINE_ERROR, cause)
        except TaskTokenError:
            log.info("deadline: the task was already closed", extra={"run_id": wait.run_id, "gate": wait.gate})
        return self.store.release_wait(wait, "timed_out")

    def _released_by_deadline(self, wait: ParkedWait) -> bool:
        """The deadline path delivered the stored answer while this send was under way."""
        now = self.store.get_wait(wait.run_id, wait.gate)
        return now is not None and now.task_token == wait.task_token and now.status == "released"

    def _closed_by_earlier_send(self, wait: ParkedWait, err: TaskTokenError) -> bool:
        """Before the deadline only a send of the stored answer can have closed the token: True. A task
        that no longer exists: True if its execution runs on or succeeded. A timeout: GoneError."""
        in_time = wait.deadline is not None and not self.is_past(wait.deadline)  # unknown: assume it passed
        if err.reason in _CLOSED and (in_time or self._released_by_deadline(wait)):
            return True
        if err.reason == "TaskTimedOut":
            raise GoneError(
                f"the gate '{wait.gate}' of run {wait.run_id} already timed out; the answer is stored but "
                "nothing is waiting for it",
                details={"reason": err.reason, "gate": wait.gate},
            ) from err
        run = self.store.get_run(wait.run_id)
        if run is not None and run.execution_arn:
            try:
                status = self.workflows.describe(run.execution_arn).get("status")
            except Exception:  # unknown: leave the wait to the next reconcile
                log.exception("describe failed", extra={"run_id": wait.run_id})
                return False
            if status in ("RUNNING", "SUCCEEDED"):
                return True
        self.store.release_wait(wait, "released")  # the run ended: nothing is left to resume
        return False
