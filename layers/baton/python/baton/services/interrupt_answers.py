"""The answer side of an interrupt: its resume (`InterruptAnswers`) and cancel (`InterruptCancels`), each
an `AnswerPolicy` (on a quorum interrupt each resume an approval, each cancel a rejection) over what both
share (`InterruptPolicy`)."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from baton import contracts
from baton.contracts.interrupts import TIMEOUT_REASON, InterruptView, ResumeInterrupt, edge_status
from baton.domain.answer_replies import delivery_of
from baton.domain.ballot import Voter
from baton.domain.interrupt_fields import MAX_REASON_CHARS
from baton.domain.interrupt_rules import (
    KIND,
    InterruptOutput,
    accepted_resume,
    cancelled_event,
    closed_interrupt,
    conflict_details,
    failure_cause,
    interrupt_request,
    is_same_resume,
    is_timed_out,
    not_found,
    refuse_other_version,
    require_pending,
    resumed_event,
    settled_by_quorum,
    settled_error,
)
from baton.errors import BadRequestError, ConflictError, GoneError, TaskTokenError
from baton.events import InterruptTimedOut
from baton.models import Interaction, status_of
from baton.services.answer_outcomes import SendFailedError, send_or_pending
from baton.services.approvals import ApprovalService, Entry
from baton.services.asks import StoreDeadline
from baton.services.at_deadline import AnswerPolicy, Write
from baton.services.core import DEADLINE_ERROR
from baton.services.deadlines import stop_interaction_timer
from baton.services.decide import decide

if TYPE_CHECKING:
    from baton.contracts import ApprovalView
    from baton.contracts.interrupts import CancelInterrupt
    from baton.domain.approval import ApprovalPolicy
    from baton.domain.audit import AuditHead
    from baton.domain.ballot import Ballot, Decided
    from baton.events import EventPayload
    from baton.models import InteractionStatus, ParkedWait
    from baton.ports import FoundInteraction
    from baton.services.core import Core

Answer = TypeVar("Answer")
View = TypeVar("View", bound=BaseModel)
CANCEL_ERROR = "InterruptCancelled"  # the hosted task's failure on cancel (the ASL Catch names it)


class InterruptPolicy(StoreDeadline, AnswerPolicy[Answer, View, bool]):
    """What a resume and a cancel share: the read, the store-backed deadline every path first runs
    (`_expire_if_due`), the quorum's settle, and the release they all end in."""

    wait: ParkedWait | None = None  # as read with the interrupt: its deciding write's release sends through it
    audit_head: AuditHead | None = None  # the run's decision-log head, as read with it

    @staticmethod
    def quorum(pause: Interaction) -> ApprovalPolicy | None:
        return interrupt_request(pause).approval

    def not_counted(self, pause: Interaction) -> ConflictError:
        current = self.reread(pause)
        return ConflictError(
            f"interrupt {pause.interaction_id} is already {edge_status(current)}: the vote is not counted",
            details=conflict_details(current),
        )

    def settle(self, pause: Interaction, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """A met tally: answered with the deciding approval's value, or cancelled (`settled_by_quorum`)."""

        def settled(i: Interaction, decided: Decided) -> tuple[InteractionStatus, EventPayload]:
            return settled_by_quorum(i, decided, ballot, policy.approvals, self.core.now())

        service = ApprovalService(self.core)  # a lapsed claim is not carried into the decision (`_seen`)
        return service.settle(self._seen(pause), policy, ballot, settled, self.deliver, read=lambda: self.reread(pause))

    def deliver(self, settled: Interaction, wait: ParkedWait | None = None, *, token: str | None = None) -> bool:
        """Its waiter resumed (answered) or failed, then its run settled (`wait`: as read with it)."""
        done = self._send(settled, token=token, wait=wait)
        self._settle_run(settled)
        return done

    def _released(self, settled: Interaction) -> View:  # a deciding write's release
        return self.view(settled, self.deliver(settled, self.wait))

    def refuse_if_late(self, pause: Interaction, answer: Answer, caller: str) -> None:
        """Nothing: the deadline was applied as the interrupt was read (`current_for_decision`)."""

    def reread(self, pause: Interaction) -> Interaction:
        """The interrupt as stored now, read in its run's partition (one GetItem: no pointer to read)."""
        return self._seen(self.core.interaction_of(pause.run_id, pause.interaction_id, KIND))

    def load(self, interrupt_id: str) -> Interaction:
        found = self.core.store.find_interaction(interrupt_id) if interrupt_id else None
        if found is None or found.request.kind != KIND:
            raise not_found(interrupt_id)
        return self._seen(found)

    def current_for_decision(self, interrupt_id: str, verb: str | None = None) -> tuple[Interaction, FoundInteraction]:
        """The pointer, then one BatchGetItem of the interrupt, its wait and the run's decision-log head; its
        deadline applied (with `verb`: pending, else a 410/409 naming what settled it)."""
        found = self.core.store.find_for_decision(interrupt_id) if interrupt_id else None
        if found is None or found.interaction.request.kind != KIND:
            raise not_found(interrupt_id)
        i = self._expire_if_due(found.interaction)
        if verb is not None:
            require_pending(i, verb)
        return i, found

    def _after_deadline(self, ended: Interaction) -> Interaction:
        if ended.state.status == "answered":  # its default: sent (else the reconciler sends what is stored)
            with contextlib.suppress(SendFailedError):
                self._send(ended)
        self._settle_run(ended)
        return ended

    def _time_out(self, i: Interaction) -> Interaction:
        """Timed out with its event in one conditional write (ConflictError: it was decided first)."""
        timeout_ms = interrupt_request(i).timeout_ms
        event = InterruptTimedOut(interaction_id=i.interaction_id, node=i.request.node, timeout_ms=timeout_ms)
        timed_out = status_of(i.state, "timed_out", reason=TIMEOUT_REASON)
        return self.core.store.transition_interaction(i, timed_out, with_records=[self.core.new_event(i.run_id, event)])

    def _wait_at(self, i: Interaction, read: ParkedWait | None = None, *, parked: bool = True) -> ParkedWait | None:
        """The hosted interrupt's wait (`parked`: still parked), if it holds this interrupt (`read`: as read
        with the interrupt)."""
        gate = interrupt_request(i).gate
        if not gate:
            return None
        wait = read if read is not None and read.gate == gate else self.core.store.get_wait(i.run_id, gate)
        held = wait is not None and i.interaction_id in wait.interaction_ids and (wait.status == "parked" or not parked)
        return wait if held else None

    def _settle_run(self, i: Interaction) -> None:
        """An SDK waiter's interrupt settled by its winner: its own timer stops, and its session runs again
        once none of its interrupts is pending (read in its partition, consistently: not the by_status GSI)."""
        if not interrupt_request(i).hosted:
            stop_interaction_timer(self.core, i)  # (none while it is pending: a failed create)
            if not self.core.store.list_run_interactions(i.run_id, kind=KIND, status="pending"):
                self.core.set_run_status(i.run_id, "running", allowed_from={"paused_waiting_human"})

    def _send(self, settled: Interaction, *, token: str | None = None, wait: ParkedWait | None = None) -> bool:
        """Hosted: the parked token sent the resume (an SDK waiter's long-poll reads it), or failed with the
        cancel's who and why or the deadline error (the Catch takes it as Step Functions' own timeout)."""
        answered = settled.state.status == "answered"
        wait = self._wait_at(settled, wait)
        if wait is None:
            return answered and not interrupt_request(settled).hosted
        if answered:
            output = InterruptOutput.of(settled)
            return self.core.release_gate(settled.run_id, settled.request.node, output, token=token, wait=wait)
        if token is not None and wait.task_token != token:
            return False
        error = DEADLINE_ERROR if is_timed_out(settled) else CANCEL_ERROR
        try:
            self.core.tokens.send_failure(wait.task_token, error, failure_cause(settled))
        except TaskTokenError:
            self.core.release_unsent(wait)
            return False  # the execution already ended or timed out: nothing left to fail
        return self.core.release_unsent(wait)


class InterruptAnswers(InterruptPolicy[ResumeInterrupt, contracts.InterruptResumed]):
    """The resume's `AnswerPolicy`, carrying what it read (`found`) and the state `version` it was decided on."""

    version: str | None = None  # (the service's own: none; it decides with a policy of its own)

    def __init__(self, core: Core, *, found: FoundInteraction, version: str | None) -> None:
        self.core, self.version = core, version
        self.wait, self.audit_head = found.wait, found.audit_head

    @staticmethod
    def check(pause: Interaction, answer: ResumeInterrupt) -> None:
        """Pending: the state version and the resume as it would be stored. Cancelled: the 410 naming the
        cancel (not `decide`'s, which names a run's stop); otherwise `decide` says what settled it."""
        if pause.state.status == "cancelled":
            raise closed_interrupt(pause)
        if pause.state.status == "pending":
            refuse_other_version(pause, answer.stateVersion)
            accepted_resume(pause, answer)

    def refuse_if_ended(self, pause: Interaction, answer: ResumeInterrupt, caller: str) -> None:
        if is_timed_out(pause) or pause.state.outcome:  # past the deadline: a 410, the value kept as late
            late = {"input": answer.input, "state_edits": list(answer.stateEdits)}
            details = conflict_details(pause, settled=False)
            self.core.refuse_if_late(
                pause, late, caller=caller, deadline=pause.expires_at, reason=TIMEOUT_REASON, **details
            )
        if is_timed_out(pause):  # timed out before its stored deadline (the hosted task's own timeout)
            raise closed_interrupt(pause)

    @classmethod
    def is_repeat(cls, current: Interaction, answer: ResumeInterrupt, caller: str) -> bool:
        # Only this caller's own resume is repeated; the same value from another caller lost the race.
        return cls.quorum(current) is None and is_same_resume(current, answer, caller)

    def repeat(self, current: Interaction, answer: ResumeInterrupt, caller: str) -> contracts.InterruptResumed | None:
        """A repeat (the same caller, value and edits: a retry, a twin) gets the first one's result; a
        hosted one whose token send failed sends the stored answer again."""
        if not self.is_repeat(current, answer, caller):
            return None
        released, pending = send_or_pending(lambda: self._send(current))  # (an SDK waiter's: nothing to send)
        if released or pending:
            return self.view(current, released, pending=pending)
        wait = self._wait_at(current, parked=False)
        return self.view(current, wait is not None and wait.status == "released")  # its token sent with this answer

    def write(
        self, pause: Interaction, answer: ResumeInterrupt, caller: str, decided: Decided | None
    ) -> Write[contracts.InterruptResumed]:
        """The resume as stored (the edited state) and its event, chained after the head read with it."""
        core, stored = self.core, accepted_resume(pause, answer)
        event = core.new_event(pause.run_id, resumed_event(pause, stored["input"], stored["state_edits"], caller))
        return Write(core.now(), [event], self._released, audit_head=self.audit_head, stored=stored)

    def already(self, current: Interaction, *, racing: bool) -> ConflictError | GoneError:
        """Settled by another: a 410 (cancelled, timed out), or the 409 naming the resume that won (the state
        version's 409 first when this one was decided on another); only a claim changed it: send it again."""
        i = self._expire_if_due(current) if racing else current
        if i.state.status in ("cancelled", "timed_out"):
            return closed_interrupt(i)
        if i.state.status == "pending":
            return ConflictError(
                f"interrupt {i.interaction_id} changed while resuming; send the resume again",
                details=conflict_details(i),
            )
        refuse_other_version(i, self.version)
        return ConflictError(
            f"interrupt {i.interaction_id} was already resumed by {i.state.answered_by}", details=conflict_details(i)
        )

    @staticmethod
    def entry(pause: Interaction, policy: ApprovalPolicy, answer: ResumeInterrupt) -> Entry:
        return Entry(json.dumps(accepted_resume(pause, answer)), "approve", interrupt_request(pause).requested_by)

    def counted(
        self, pause: Interaction, approval: ApprovalView, released: bool | None, *, pending: bool
    ) -> contracts.InterruptResumed:
        current = self.reread(pause)
        resumed = bool(released) and current.state.status == "answered"
        return self.view(current, resumed, pending=pending, approval=approval)

    @staticmethod
    def view(
        answered: Interaction, resumed: bool, *, pending: bool = False, approval: ApprovalView | None = None
    ) -> contracts.InterruptResumed:
        delivery = delivery_of(resumed, pending=pending)
        view = InterruptView.of(answered)
        return contracts.InterruptResumed(interrupt=view, resumed=resumed, delivery=delivery, approval=approval)

    def resume(
        self, interrupt_id: str, command: ResumeInterrupt, *, caller: str, voter: Voter | None = None
    ) -> contracts.InterruptResumed:
        """Walked by `decide`; on a quorum interrupt, an approval by `voter` (the authenticated caller)."""
        i, found = self.current_for_decision(interrupt_id)
        policy = InterruptAnswers(self.core, found=found, version=command.stateVersion)
        who = voter if voter is not None and self.quorum(i) is not None else Voter(caller)
        return decide(self.core, policy, i, command, who)

    def cancel(
        self, interrupt_id: str, command: CancelInterrupt, *, caller: str, voter: Voter | None = None
    ) -> contracts.InterruptCancelled:
        """Walked by `decide` as a resume is (`InterruptCancels`); on a quorum interrupt, a rejection."""
        reason = command.reason.strip()
        if not reason:  # (the command's model holds its length)
            raise BadRequestError(f"reason must be 1-{MAX_REASON_CHARS} characters", details={"field": "reason"})
        while True:
            i, found = self.current_for_decision(interrupt_id)
            who = voter if voter is not None and self.quorum(i) is not None else Voter(caller)
            try:
                return decide(self.core, InterruptCancels(self.core, caller, found), i, reason, who)
            except ClaimChangedError:  # only a claim changed it under the write: read and decide again
                continue


class ClaimChangedError(ConflictError):
    """Only a claim changed the interrupt under the cancel's write: the cancel reads again."""


class InterruptCancels(InterruptPolicy[str, contracts.InterruptCancelled]):
    """The answer: its reason. A repeat is this caller's cancel with this reason whose task failure was not
    delivered (sent again); anyone else's meanwhile lost the race (a 410 naming the winner)."""

    def __init__(self, core: Core, caller: str, found: FoundInteraction) -> None:
        self.core, self.caller = core, caller
        self.wait, self.audit_head = found.wait, found.audit_head

    def check(self, pause: Interaction, reason: str) -> None:
        """Settled: only this caller's own cancel goes on (to `repeat`); anything else is refused here."""
        if pause.state.status != "pending" and not self.is_repeat(pause, reason, self.caller):
            raise settled_error(pause, "cancelled")

    def is_repeat(self, current: Interaction, reason: str, caller: str) -> bool:
        st = current.state
        return st.status == "cancelled" and (st.answered_by, st.reason) == (caller, reason)

    def repeat(self, current: Interaction, reason: str, caller: str) -> contracts.InterruptCancelled | None:
        """Its task failure sent again while its wait is still parked (undelivered), else the 410 naming it."""
        if not self.is_repeat(current, reason, caller):
            return None
        if (wait := self._wait_at(current)) is None:
            raise self.already(current, racing=True)
        return self.view(current, self._send(current, wait=wait))

    @staticmethod
    def entry(pause: Interaction, policy: ApprovalPolicy, reason: str) -> Entry:
        return Entry(reason, "reject", interrupt_request(pause).requested_by)

    def counted(
        self, pause: Interaction, approval: ApprovalView, released: bool | None, *, pending: bool
    ) -> contracts.InterruptCancelled:
        return self.view(self.reread(pause), bool(released), approval=approval)

    def write(
        self, pause: Interaction, reason: str, caller: str, decided: Decided | None
    ) -> Write[contracts.InterruptCancelled]:
        event = self.core.new_event(pause.run_id, cancelled_event(pause, reason, caller))
        return Write(
            self.core.now(), [event], self._released, audit_head=self.audit_head, status="cancelled", reason=reason
        )

    def already(self, current: Interaction, *, racing: bool) -> ConflictError | GoneError:
        i = self._expire_if_due(current)
        if i.state.status == "pending":
            return ClaimChangedError(f"interrupt {i.interaction_id} changed while cancelling")
        return settled_error(i, "cancelled")

    @staticmethod
    def view(
        i: Interaction, failed: bool, *, pending: bool = False, approval: ApprovalView | None = None
    ) -> contracts.InterruptCancelled:
        cancelled = i.state.status == "cancelled"
        return contracts.InterruptCancelled(
            interrupt=InterruptView.of(i), cancelled=cancelled, workflow_failed=failed, approval=approval
        )
