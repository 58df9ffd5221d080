"""Interrupts: typed pauses with a state snapshot an operator can inspect, edit and resume.

An interrupt is an `Interaction` of kind "interrupt" whose run is the session (`run_id = sessionId`,
created by its first interrupt); the store's `IID#<id>` pointer finds it by id alone. Its waiter is
either an SDK client long-polling `GET /api/v1/interrupts/{id}` (the deadline, `expires_at`, 24 h unless
`timeoutMs` says otherwise, is the store's: whoever reads it first past it times it out; the sweeper reads
the rest) or a hosted task (`statemachines/interrupt.asl.json`) whose token is parked at `WAIT#<node>`:
resume sends it, cancel fails it with `InterruptCancelled`, a timeout with `BatonDeadlinePassed`.

Statuses: pending -> answered | cancelled | timed_out; the API keeps the seed's words, a timed-out
interrupt shows as "cancelled" with reason "timeout" and `timedOut: true` (`InterruptView.of`).

Why one module of over 400 lines: every path (read, long-poll, list, resume, cancel, vote, sweep, the
hosted Catch) first runs the same store-backed deadline (`_expire_if_due`) and ends in the same release
(`_release`, `_fail_waiter`, `_settle_run`). Claims (advisory, leased) live in `baton.services.claims`.

Quorum (`approval` on its spec): each resume is one operator's approval, each cancel a rejection; the
vote that meets the quorum settles the interrupt with that approval's value (the rejection rule: cancels
it), written and delivered once by `baton.services.approvals` as for a pause. A vote after the decision
is a 409 naming the winner; a decider that died in between: the reconciler settles it (`settle_quorum`).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from baton import contracts
from baton.contracts import ApprovalView, InterruptView
from baton.contracts.interrupts import TIMEOUT_REASON, edge_status
from baton.domain.answer_schema import check_state_size, validate_answer
from baton.domain.deadline import OPEN_WAIT_STATUSES
from baton.domain.gate_payloads import InterruptFailResult
from baton.domain.interrupt_fields import MAX_REASON_CHARS
from baton.domain.interrupt_spec import DEFAULT_TIMEOUT_MS, InterruptSpec
from baton.domain.state_edits import apply_state_edits
from baton.errors import BadRequestError, ConflictError, GoneError, NotFoundError, TaskTokenError, winner
from baton.events import HumanInputRequested, InterruptCancelled, InterruptResumed, InterruptTimedOut, RunPaused
from baton.ids import iso, parse_iso
from baton.models import Interaction, InteractionState, InterruptRequest, ParkedWait, status_of
from baton.services.answer_outcomes import SendFailedError, delivery_of
from baton.services.approvals import ApprovalService, Voter
from baton.services.at_deadline import end_at_deadline
from baton.services.core import DEADLINE_ERROR
from baton.services.deadlines import answer_with_default, arm_interaction, park_wait
from baton.services.page_tokens import decode_page_token, encode_page_token, foreign_page_token, invalid_page_token

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts import Delivery
    from baton.contracts.interrupts import CancelInterrupt, ResumeInterrupt
    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.events import EventPayload
    from baton.models import InteractionStatus
    from baton.ports import FoundInteraction
    from baton.services.approvals import Ballot, Decided
    from baton.services.core import Core

__all__ = ["InterruptService", "InterruptSpec", "conflict_details", "key_interrupt_id"]

KIND: Final = "interrupt"
CANCEL_ERROR = "InterruptCancelled"  # the hosted task's failure on cancel (the ASL Catch names it)
STATUSES = ("pending", "answered", "cancelled")  # the API's words; timed_out shows as cancelled
# The domain statuses behind each API word (a listing of "cancelled" includes the timed-out ones).
DOMAIN_STATUSES: dict[str, tuple[InteractionState, ...]] = {
    "pending": ("pending",),
    "answered": ("answered",),
    "cancelled": ("cancelled", "timed_out"),
}
MAX_WAIT_SECONDS = 20  # API Gateway's integration limit is 29 s
POLL_INTERVAL_SECONDS = 0.5  # the long-poll's first re-read; then x1.5 per read up to 2.5 s
POLL_BACKOFF = 1.5
MAX_POLL_INTERVAL_SECONDS = 2.5
DEFAULT_PAGE_SIZE = 50  # GET /api/v1/interrupts ?limit= (max MAX_PAGE_SIZE) and ?next=
MAX_PAGE_SIZE = 200
OPEN_RUN_STATES = {"created", "running", "paused_waiting_human"}


def key_interrupt_id(session_id: str, key: str) -> str:
    """A deterministic id for (session, key): creating twice with one key returns the first interrupt."""
    digest = hashlib.sha256(f"{session_id}\x00{key}".encode()).digest()
    return "K" + base64.b32encode(digest).decode().rstrip("=")[:25]


def is_timed_out(i: Interaction) -> bool:
    return i.state.status == "timed_out"


def interrupt_request(i: Interaction) -> InterruptRequest:
    return i.request_as(InterruptRequest)


class StoredResume(TypedDict, total=False):
    """A resume as the interrupt stores it (`state.answer`)."""

    input: Any
    state: dict[str, Any]
    state_edits: list[str]


def _resume_of(i: Interaction) -> StoredResume:
    return cast("StoredResume", i.state.answer) if isinstance(i.state.answer, dict) else {}


def resumed_event(i: Interaction, value: Any, edits: list[str], by: str | None) -> InterruptResumed:
    return InterruptResumed(interaction_id=i.interaction_id, node=i.request.node, input=value, state_edits=edits, by=by)


def cancelled_event(i: Interaction, reason: str | None, by: str | None) -> InterruptCancelled:
    return InterruptCancelled(interaction_id=i.interaction_id, node=i.request.node, reason=reason, by=by)


@dataclass(frozen=True)
class Counted:
    """A vote counted: the interrupt after it, the count, whether this vote's decision released (or
    failed) the waiter, and whether that send is pending (stored: the reconciler sends it)."""

    current: Interaction
    approval: ApprovalView
    released: bool
    pending: bool


def conflict_details(i: Interaction, *, status: bool = False, settled: bool = True, **first: Any) -> dict[str, Any]:
    """An error's details (after `first`): the interrupt as the wire shows it, its API status when asked,
    and (`settled`) what settled or holds it: the resume's value, the cancel's reason, or the claim."""
    details = first | {"interrupt": InterruptView.of(i).model_dump(by_alias=True)}
    if status:
        details["status"] = edge_status(i)
    if not settled:
        return details
    st = i.state
    if st.status == "answered":
        won = winner(status="answered", value=_resume_of(i).get("input"), by=st.answered_by, at=st.answered_at)
    elif st.status in ("cancelled", "timed_out"):
        reason = TIMEOUT_REASON if is_timed_out(i) else st.reason
        won = winner(status="cancelled", value=reason, by=st.answered_by, at=st.answered_at)
    else:
        won = winner(status="claimed", value=st.claimed_by, by=st.claimed_by, at=st.claimed_at)
    return details | {"winner": won}


def _refuse_other_version(i: Interaction, given: str | None) -> None:
    """409 when the resume was decided on another state version than the current one."""
    current = InterruptView.of(i).state_version
    if given is None or given == current:
        return
    raise ConflictError(
        f"interrupt {i.interaction_id}: the resume was decided on state version {given}, but the state is at "
        f"{current}; read it again (its snapshot and any resume) and decide on the current state",
        details=conflict_details(i, reason="state_changed", stateVersion=current, given=given),
    )


def _not_found(interrupt_id: str) -> NotFoundError:
    return NotFoundError(f"interrupt {interrupt_id} not found", details={"interrupt_id": interrupt_id})


class PageCursor(BaseModel):
    """Where a listing goes on (its `next`): the store's position `k`, the filters `f` it was issued for,
    and which of the listing's stored statuses it is in, `p` (cancelled, then timed_out)."""

    model_config = ConfigDict(strict=True)

    k: dict[str, Any] | None
    f: list[str | None]
    p: StrictInt = Field(default=0, ge=0)


def _decode_page_token(token: str, scope: list[str | None]) -> PageCursor:
    cursor = decode_page_token(token, PageCursor)
    # A store position is a small object (the store checks its own shape before any query).
    if cursor.k is not None and (len(cursor.k) > 8 or len(json.dumps(cursor.k)) > 4096):
        raise invalid_page_token()
    if (cursor.k is None and not cursor.p) or cursor.f != scope:
        raise foreign_page_token("status and sessionId")
    return cursor


class InterruptService:
    def __init__(
        self,
        core: Core,
        *,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.core = core
        self._sleep = sleep
        self._monotonic = monotonic
        self.approvals = ApprovalService(core)

    # ---- create --------------------------------------------------------------------------------
    def create(
        self, spec: InterruptSpec, *, caller: str, token: str | None = None, entered_at: datetime | None = None
    ) -> tuple[Interaction, bool]:
        """Store, park (with the hosted task's `token`, its deadline the task's), notify. Returns
        (interrupt, created): False when `spec.key` named an existing one, or for a retried park of the
        same task (its id comes from the task), returned as it is with nothing recorded again."""
        core, hosted = self.core, token is not None
        request = spec.request(caller=caller, hosted=hosted)
        core.check_notify(request.notify)
        iid = self._new_id(spec, token, entered_at)
        retried = self._parked_before(spec, token, iid)
        if retried is not None:
            return retried, False
        existing = core.store.find_interaction(iid) if spec.key else None
        if existing is not None:
            return self._same_key(existing, spec.prompt), False

        run = core.ensure_run(spec.session_id)
        if spec.approval is not None:  # the requester (a hosted run's starter, else the creator) may not vote
            request.requested_by = run.started_by if run.hosted and run.started_by else caller
        now = core.clock.now()
        # A hosted task's deadline is its own (from its entry, before its timeout); an SDK waiter's is ours.
        timeout_ms = request.timeout_ms or DEFAULT_TIMEOUT_MS
        deadline = core.deadline_of(timeout_ms / 1000, entered_at) if hosted else None
        interaction = Interaction(
            interaction_id=iid,
            run_id=spec.session_id,
            created_at=iso(now),
            expires_at=deadline or iso(now + timedelta(milliseconds=timeout_ms)),
            request=request,
        )
        # The run is paused BEFORE the interrupt becomes visible: whoever sees it pending sees the run paused.
        core.set_run_status(spec.session_id, "paused_waiting_human", allowed_from=OPEN_RUN_STATES)
        try:
            core.store.put_interaction_indexed(interaction)
        except Exception as err:
            self._settle_run(interaction)  # nothing new is pending: an external session runs again if idle
            lost = core.store.find_interaction(iid) if (spec.key or hosted) and isinstance(err, ConflictError) else None
            if lost is None:  # (else it lost a creation race with the same key or task)
                raise
            if token is None:
                return self._same_key(lost, spec.prompt), False
            self._park_token(lost, token)
            return lost, False
        if token is not None:
            self._park_token(interaction, token)
        asked = HumanInputRequested(
            kind=KIND,
            interaction_id=iid,
            node=spec.node,
            prompt=spec.prompt,
            workflow_id=spec.workflow_id,
            timeout_ms=timeout_ms,
            hosted=hosted,
            by=caller,
        )
        core.record(spec.session_id, asked)
        if hosted:
            core.record(spec.session_id, RunPaused(gate=spec.node, kind=KIND))
        core.notify(interaction, "interrupt_created", session_id=spec.session_id, workflow_id=spec.workflow_id)
        if not hosted:  # an SDK waiter's interrupt: no gate is parked, its ladder gets its own timer
            arm_interaction(core, interaction)
        return interaction, True

    def _new_id(self, spec: InterruptSpec, token: str | None, entered_at: datetime | None) -> str:
        """From the key (one interrupt per key), from the hosted task (one per task), or new."""
        if spec.key:
            return key_interrupt_id(spec.session_id, spec.key)
        if token is not None:
            return self.core.park_id(token, entered_at)
        return self.core.ids.new_id()

    def _parked_before(self, spec: InterruptSpec, token: str | None, iid: str) -> Interaction | None:
        """A retried park of the same hosted task: the interrupt its earlier attempt made (its wait
        parked now if the attempt died before parking it), else None."""
        if token is None:
            return None
        wait = self.core.parked_again(spec.session_id, spec.node, token)
        existing = self.core.store.find_interaction(wait.interaction_ids[0] if wait and wait.interaction_ids else iid)
        if existing is None or existing.request.kind != KIND:
            return None
        self._park_token(existing, token)
        return existing

    def _park_token(self, interrupt: Interaction, token: str) -> None:
        """Park the hosted task's token at WAIT#<node>, never over a wait an earlier attempt parked."""
        node = interrupt.request.node
        if self.core.parked_again(interrupt.run_id, node, token) is not None:
            return
        wait = ParkedWait(
            run_id=interrupt.run_id,
            gate=node,
            task_token=token,
            kind=KIND,
            interaction_ids=[interrupt.interaction_id],
            parked_at=interrupt.created_at,
            deadline=interrupt.expires_at,
        )
        park_wait(self.core, wait, pause=interrupt.request)

    @staticmethod
    def _same_key(existing: Interaction, prompt: str) -> Interaction:
        if existing.request.kind != KIND or existing.request.prompt != prompt:
            raise ConflictError(
                "an interrupt with this key already exists with a different prompt",
                details=conflict_details(existing, settled=False),
            )
        return existing

    # ---- read ----------------------------------------------------------------------------------
    def load(self, interrupt_id: str) -> Interaction:
        found = self.core.store.find_interaction(interrupt_id) if interrupt_id else None
        if found is None or found.request.kind != KIND:
            raise _not_found(interrupt_id)
        return self._seen(found)

    def _seen(self, i: Interaction) -> Interaction:
        """The record as a reader sees it now: a claim past its lease is nobody's (`Core.clock`)."""
        state = i.state.without_lapsed_claim(self.core.now())
        return i if state is i.state else i.model_copy(update={"state": state})

    def _found_for_decision(self, interrupt_id: str) -> tuple[Interaction, FoundInteraction]:
        """The pointer, then one BatchGetItem of the interrupt, its node's wait and the run's decision-log
        head (a decision is chained in its own transaction); the interrupt as seen now, its deadline applied."""
        found = self.core.store.find_for_decision(interrupt_id) if interrupt_id else None
        if found is None or found.interaction.request.kind != KIND:
            raise _not_found(interrupt_id)
        return self._expire_if_due(self._seen(found.interaction)), found

    def current_for_decision(self, interrupt_id: str, verb: str) -> tuple[Interaction, FoundInteraction]:
        """`_found_for_decision`, pending: else a 410/409 naming what settled it (`verb`: what was wanted)."""
        i, found = self._found_for_decision(interrupt_id)
        self._require_pending(i, verb)
        return i, found

    def _interrupts_of(self, wait: ParkedWait) -> list[Interaction]:
        found = (self.core.store.get_interaction(wait.run_id, iid) for iid in wait.interaction_ids)
        return [i for i in found if i is not None and i.request.kind == KIND]

    def _seconds_left(self, i: Interaction) -> float | None:
        return (parse_iso(i.expires_at) - self.core.clock.now()).total_seconds() if i.expires_at else None

    def _expire_if_due(self, i: Interaction) -> Interaction:
        """The store-backed deadline: a pending interrupt past `expires_at` takes its declared default
        (baton.domain.ladder) or times out, by a conditional write; one that lost reads again."""
        while i.state.status == "pending":
            left = self._seconds_left(i)
            if left is None or left > 0:
                return i
            try:
                defaulted = answer_with_default(self.core, i, i.expires_at)
                settled = defaulted if defaulted is not None else self._time_out(i)
            except ConflictError:
                i = self.load(i.interaction_id)  # someone resumed/cancelled/expired it first
                continue
            if defaulted is not None:
                with contextlib.suppress(SendFailedError):  # the default is stored: the reconciler sends it
                    self._release(defaulted)
            self._settle_run(settled)
            return settled
        return i

    def _time_out(self, i: Interaction) -> Interaction:
        timed_out = self.core.store.transition_interaction(i, status_of(i.state, "timed_out", reason=TIMEOUT_REASON))
        timeout_ms = interrupt_request(i).timeout_ms
        self.core.record(
            i.run_id, InterruptTimedOut(interaction_id=i.interaction_id, node=i.request.node, timeout_ms=timeout_ms)
        )
        return timed_out

    def get(self, interrupt_id: str, *, wait_seconds: float = 0) -> Interaction:
        """One record; with `wait_seconds` (<= 20) a long-poll that returns once it is no longer pending.
        Re-reads are one consistent GetItem by (session, id), backing off from 0.5 s to 2.5 s, and
        exactly at its deadline."""
        deadline = self._monotonic() + max(0.0, min(float(wait_seconds), MAX_WAIT_SECONDS))
        i = self._expire_if_due(self.load(interrupt_id))
        interval = POLL_INTERVAL_SECONDS
        while True:
            remaining = deadline - self._monotonic()
            if i.state.status != "pending" or remaining <= 0:
                return i
            left = self._seconds_left(i)
            self._sleep(min(interval, remaining, max(left, 0.0) + 0.001 if left is not None else remaining))
            interval = min(interval * POLL_BACKOFF, MAX_POLL_INTERVAL_SECONDS)
            reread = self.core.store.get_interaction(i.run_id, i.interaction_id)
            i = self._expire_if_due(self._seen(reread) if reread is not None else self.load(interrupt_id))

    def list_page(
        self,
        *,
        status: str | None = None,
        session_id: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        next_token: str | None = None,
    ) -> tuple[list[Interaction], str | None]:
        """One page (Queries only, at most `limit` items), oldest first, and the token of the next (None
        on the last), bound to the filters. A pending one past its deadline is moved before it is listed."""
        if status is not None and status not in STATUSES:
            raise BadRequestError(
                f"status must be one of {', '.join(STATUSES)}", details={"field": "status", "status": status}
            )
        if status is None and session_id is None:
            status = "pending"
        scope = [status, session_id]
        cursor = _decode_page_token(next_token, scope) if next_token else PageCursor(k=None, f=scope)
        phase, start = cursor.p, cursor.k
        domains: tuple[str | None, ...] = DOMAIN_STATUSES[status] if status else (None,)
        if phase >= len(domains):
            raise invalid_page_token()
        found: list[Interaction] = []
        # A status may span two stored states (cancelled = cancelled + timed out): a page that has room
        # left goes on into the next one, so a first page is never empty while later ones are not.
        while True:
            page, last = self.core.store.page_interactions(
                KIND, status=domains[phase], run_id=session_id, limit=limit - len(found), start=start
            )
            found += page
            if not last:
                phase, last = phase + 1, None
            if phase >= len(domains):
                token = None
                break
            if last or len(found) >= limit:
                token = encode_page_token(PageCursor(k=last, f=scope, p=phase), sort_keys=True)
                break
            start = None
        settled = [self._expire_if_due(self._seen(i)) if i.state.status == "pending" else i for i in found]
        if status is not None:
            settled = [i for i in settled if edge_status(i) == status]
        return sorted(settled, key=lambda i: (i.created_at, i.interaction_id)), token

    # ---- resume --------------------------------------------------------------------------------
    def resume(
        self, interrupt_id: str, command: ResumeInterrupt, *, caller: str, voter: Voter | None = None
    ) -> contracts.InterruptResumed:
        """Apply the edits to the snapshot and validate the value before anything is written (a 422 names
        the failing path and leaves it pending), then store the answer (conditional write) and release the
        waiter. On a quorum interrupt it is an approval by `voter` (the authenticated caller). A resume
        decided on another `stateVersion` than the current one is a 409 naming it."""
        core = self.core
        value, edits = command.input, list(command.stateEdits)
        i, found = self._found_for_decision(interrupt_id)
        req = interrupt_request(i)
        if i.state.status == "pending":
            _refuse_other_version(i, command.stateVersion)
        else:
            if is_timed_out(i) or i.state.outcome:  # past the deadline: a 410, the value kept as late
                late = {"input": value, "state_edits": edits}
                view = conflict_details(i, settled=False)
                core.refuse_if_late(i, late, caller=caller, deadline=i.expires_at, reason=TIMEOUT_REASON, **view)
            if req.approval is None or i.state.status != "answered":  # (a quorum's: the vote says what counted)
                return self._resume_settled(i, command, caller=caller)
        edited = apply_state_edits(req.state or {}, edits)
        accepted = validate_answer(value, schema=req.schema_, json_schema=req.json_schema)
        check_state_size(edited)
        answer = StoredResume(input=accepted, state=edited, state_edits=edits)
        if req.approval is not None:  # settled: a counted voter's repeat is told so (200), any other a 409
            counted = self._vote(i, req.approval, json.dumps(answer), voter or Voter(caller), "approve")
            resumed = counted.released and counted.current.state.status == "answered"
            delivery = delivery_of(resumed, pending=counted.pending)
            return self._resumed(counted.current, resumed, delivery, approval=counted.approval)
        try:  # the answer and its event: one write
            answered = core.store.transition_interaction(
                i,
                status_of(i.state, "answered", answer=answer, by=caller, at=core.now()),
                with_records=[core.new_event(i.run_id, resumed_event(i, accepted, edits, caller))],
                audit_head=found.audit_head,
            )
        except ConflictError:  # lost the race: answer as if it had come second, from a consistent read
            return self._resume_settled(self._expire_if_due(self.load(interrupt_id)), command, caller=caller)
        try:
            resumed, pending = self._release(answered, wait=found.wait), False
        except SendFailedError:  # stored: the reconciler sends it
            resumed, pending = False, True
        self._settle_run(answered)
        return self._resumed(answered, resumed, delivery_of(resumed, pending=pending))

    @staticmethod
    def _resumed(
        i: Interaction, resumed: bool, delivery: Delivery | None, approval: ApprovalView | None = None
    ) -> contracts.InterruptResumed:
        view = InterruptView.of(i)
        return contracts.InterruptResumed(interrupt=view, resumed=resumed, delivery=delivery, approval=approval)

    def _resume_settled(self, i: Interaction, command: ResumeInterrupt, *, caller: str) -> contracts.InterruptResumed:
        """A resume that finds the interrupt settled (never a quorum one answered: the vote path has those).
        A repeat (the same caller, value and edits: a retry, a twin) gets the first one's result from the
        stored answer; another resume is a 409 naming the winner (and the current state version)."""
        if i.state.status in ("cancelled", "timed_out"):
            why = "timed out" if is_timed_out(i) else f"was cancelled ({i.state.reason})"
            raise GoneError(
                f"interrupt {i.interaction_id} {why}; nothing is waiting for a value",
                details=conflict_details(i, reason=i.state.reason),
            )
        if i.state.status == "pending":  # only a claim changed it: the resume may go ahead
            raise ConflictError(
                f"interrupt {i.interaction_id} changed while resuming; send the resume again",
                details=conflict_details(i),
            )
        stored = _resume_of(i)
        # Only this caller's own resume is repeated; the same value from another caller lost the race.
        same = stored.get("input") == command.input and stored.get("state_edits") == list(command.stateEdits)
        if not (same and i.state.answered_by == caller):
            _refuse_other_version(i, command.stateVersion)
            raise ConflictError(
                f"interrupt {i.interaction_id} was already resumed by {i.state.answered_by}",
                details=conflict_details(i),
            )
        if not interrupt_request(i).hosted:
            return self._resumed(i, True, "delivered")
        try:  # a hosted retry of a resume whose token send failed: the stored answer is sent again
            if self._release(i):
                return self._resumed(i, True, "delivered")
        except SendFailedError:  # still unsent: the reconciler sends it
            return self._resumed(i, False, "pending")
        wait = self._wait_at(i)
        delivered = wait is not None and wait.status == "released"  # its token was sent with this answer
        return self._resumed(i, delivered, delivery_of(delivered))

    def _wait_at(self, i: Interaction, read: ParkedWait | None = None) -> ParkedWait | None:
        """The hosted interrupt's wait, if it holds this interrupt (`read`: as read with the interrupt)."""
        gate = interrupt_request(i).gate
        if not gate:
            return None
        wait = read if read is not None and read.gate == gate else self.core.store.get_wait(i.run_id, gate)
        return wait if wait is not None and i.interaction_id in wait.interaction_ids else None

    def _parked_wait(self, i: Interaction, read: ParkedWait | None = None) -> ParkedWait | None:
        wait = self._wait_at(i, read)
        return wait if wait is not None and wait.status == "parked" else None

    def _release(self, answered: Interaction, *, token: str | None = None, wait: ParkedWait | None = None) -> bool:
        """Hosted: send the parked token with the value and the edited state. An SDK waiter needs nothing:
        its long-poll sees the answered record."""
        wait = self._parked_wait(answered, wait)
        if wait is None:
            return not interrupt_request(answered).hosted
        stored, st = _resume_of(answered), answered.state
        output = {
            "interrupt_id": answered.interaction_id,
            "input": stored.get("input"),
            "state": stored.get("state"),
            "state_edits": stored.get("state_edits"),
            "resolved_by": st.answered_by,
            "resolved_at": st.answered_at,
        }
        return self.core.release_gate(answered.run_id, answered.request.node, output, token=token, wait=wait)

    def _settle_run(self, i: Interaction) -> None:
        """An external session is running again once none of its interrupts is pending (read in the
        session's partition, consistently: the by_status GSI may still list this one as pending)."""
        if not interrupt_request(i).hosted and not self.core.store.list_run_interactions(
            i.run_id, kind=KIND, status="pending"
        ):
            self.core.set_run_status(i.run_id, "running", allowed_from={"paused_waiting_human"})

    # ---- cancel --------------------------------------------------------------------------------
    def cancel(
        self, interrupt_id: str, command: CancelInterrupt, *, caller: str, voter: Voter | None = None
    ) -> contracts.InterruptCancelled:
        """Cancel (hosted: fail the task); on a quorum interrupt, a rejection by `voter`."""
        reason = command.reason.strip()
        if not reason:  # (the command's model holds its length)
            raise BadRequestError(f"reason must be 1-{MAX_REASON_CHARS} characters", details={"field": "reason"})
        while True:
            i = self._expire_if_due(self.load(interrupt_id))
            st = i.state
            if st.status == "cancelled" and (st.answered_by, st.reason) == (caller, reason) and self._parked_wait(i):
                # A retry of this caller's cancel whose task failure was not delivered: sent again. Anyone
                # else's cancel meanwhile lost the race (a 410 naming the winner below).
                return self._cancelled(i, failed=self._fail_waiter(i))
            self._require_pending(i, "cancelled")
            policy = interrupt_request(i).approval
            if policy is not None:  # a quorum interrupt: the cancel is a rejection by the authenticated caller
                counted = self._vote(i, policy, reason, voter or Voter(caller), "reject")
                return self._cancelled(counted.current, failed=counted.released, approval=counted.approval)
            try:
                cancelled = self.core.store.transition_interaction(
                    i, status_of(st, "cancelled", by=caller, at=self.core.now(), reason=reason)
                )
            except ConflictError:  # settled by another: a 410/409 naming the winner; only a claim: again
                self._require_pending(self._expire_if_due(self.load(interrupt_id)), "cancelled")
                continue
            self.core.record(i.run_id, cancelled_event(i, reason, caller))
            failed = self._fail_waiter(cancelled)
            self._settle_run(cancelled)
            return self._cancelled(cancelled, failed=failed)

    @staticmethod
    def _cancelled(
        i: Interaction, *, failed: bool, approval: ApprovalView | None = None
    ) -> contracts.InterruptCancelled:
        cancelled = i.state.status == "cancelled"
        return contracts.InterruptCancelled(
            interrupt=InterruptView.of(i), cancelled=cancelled, workflow_failed=failed, approval=approval
        )

    @staticmethod
    def _require_pending(i: Interaction, verb: str) -> None:
        if i.state.status == "pending":
            return
        details = conflict_details(i, status=True)
        if i.state.status in ("cancelled", "timed_out"):
            raise GoneError(
                f"interrupt {i.interaction_id} is cancelled ({i.state.reason}) and cannot be {verb}", details=details
            )
        raise ConflictError(
            f"interrupt {i.interaction_id} was already resumed by {i.state.answered_by} and cannot be {verb}",
            details=details,
        )

    # ---- quorum (baton/services/approvals.py) ----------------------------------------------------
    def _vote(self, i: Interaction, policy: ApprovalPolicy, text: str, voter: Voter, vote: Vote) -> Counted:
        requested_by = interrupt_request(i).requested_by
        ballot = self.approvals.cast(i, policy, text, voter, requested_by=requested_by, vote=vote)
        released, pending = self.approvals.settle_if_met(ballot, lambda: self._settle(i.interaction_id, policy, ballot))
        current = self.load(i.interaction_id)
        if ballot.outcome == "closed":
            raise ConflictError(
                f"interrupt {i.interaction_id} is already {edge_status(current)}: the vote is not counted",
                details=conflict_details(current),
            )
        return Counted(current, ballot.view(policy), released, pending)

    def settle_quorum(self, i: Interaction) -> bool:
        """A pending quorum interrupt whose stored tally is met (its decider died before the release):
        settled as that vote would have."""
        policy = interrupt_request(i).approval
        ballot = self.approvals.standing(i, policy) if policy is not None else None
        if policy is None or ballot is None or ballot.decision is None:
            return False
        self._settle(i.interaction_id, policy, ballot)
        return self.load(i.interaction_id).state.status != "pending"

    def _settle(self, interrupt_id: str, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Settle a quorum interrupt whose tally is met: answered with the deciding approval's value, or
        cancelled. True if this call released (or failed) the waiter."""
        core = self.core

        def settled(i: Interaction, decided: Decided) -> tuple[InteractionStatus, EventPayload]:
            by, why = decided.by, decided.reason
            if ballot.decision == "approved":
                approving = [v for v in ballot.votes if v.vote == "approve"]
                answer = json.loads(approving[policy.approvals - 1].answer)
                new = status_of(i.state, "answered", answer=answer, by=by, at=core.now(), reason=why)
                return new, resumed_event(i, answer["input"], answer["state_edits"], by)
            new = status_of(i.state, "cancelled", by=by, at=core.now(), reason=why)
            return new, cancelled_event(i, why, by)

        return self.approvals.settle(lambda: self.load(interrupt_id), policy, ballot, settled, self.deliver)

    def deliver(self, settled: Interaction) -> bool:
        """A quorum's decision stored: release (or fail) the waiter and settle the session."""
        done = self._release(settled) if settled.state.status == "answered" else self._fail_waiter(settled)
        self._settle_run(settled)
        return done

    # ---- the hosted waiter's end: a failed task, the reconciler, the deadline, the Catch --------
    def _fail_waiter(self, cancelled: Interaction, *, token: str | None = None) -> bool:
        """Hosted: fail the parked token of a cancelled interrupt (the cause names who and why); a timeout
        fails it with the deadline error, which the hosted Catch takes as Step Functions' own timeout.
        True if this call failed the task; another send error leaves the wait parked for a retry."""
        wait = self._parked_wait(cancelled)
        if wait is None or (token is not None and wait.task_token != token):
            return False
        iid, st = cancelled.interaction_id, cancelled.state
        if is_timed_out(cancelled):
            error, cause = DEADLINE_ERROR, f"interrupt {iid} timed out"
        else:
            error, cause = CANCEL_ERROR, f"interrupt {iid} cancelled by {st.answered_by}: {st.reason}"
        try:
            self.core.tokens.send_failure(wait.task_token, error, cause)
        except TaskTokenError:
            self.core.store.release_wait(wait, "released")
            return False  # the execution already ended or timed out: nothing left to fail
        return self.core.store.release_wait(wait, "released")

    def reconcile_wait(self, wait: ParkedWait) -> bool:
        """The reconciler: a parked hosted interrupt no longer pending gets the resume (answered) or the
        task failure (cancelled, timed out) it should have had. True if sent."""
        for i in self._interrupts_of(wait):
            if i.state.status == "answered":
                return self._release(i, token=wait.task_token)
            if i.state.status in ("cancelled", "timed_out"):
                return self._fail_waiter(i, token=wait.task_token)
        return False

    def end_at_deadline(self, wait: ParkedWait) -> bool:
        """At a parked hosted interrupt's deadline, the one deadline path (baton.services.at_deadline).
        True if this call ended it."""
        return end_at_deadline(InterruptDeadline(self), wait) is not None

    def sweep(self) -> list[str]:
        """Time out every pending interrupt past its deadline: a Query on the sparse `due` index reads only
        those (`InteractionStore.list_due`)."""
        due = self.core.store.list_due(KIND, self.core.now())
        return [i.interaction_id for i in due if is_timed_out(self._expire_if_due(i))]

    def hosted_ended(self, run_id: str, node: str, outcome: str) -> InterruptFailResult:
        """The hosted interrupt's Catch (outcome "timeout" on States.Timeout, "cancelled" on
        InterruptCancelled): mark what is still pending, and the cause for the Fail state."""
        core = self.core

        def at_node() -> list[Interaction]:
            return [i for i in core.store.list_run_interactions(run_id, kind=KIND) if i.request.node == node]

        for i in at_node():
            if i.state.status == "pending" and outcome == "timeout":
                with contextlib.suppress(ConflictError):
                    self._time_out(i)
        latest = at_node()
        target = latest[-1] if latest else None
        wait = core.store.get_wait(run_id, node)
        if wait is not None and wait.status == "parked":
            core.store.release_wait(wait, "timed_out" if outcome == "timeout" else "released")
        if target is None:
            cause = f"interrupt at node '{node}' ended ({outcome}) but no interrupt was recorded"
        elif outcome == "timeout" or is_timed_out(target):
            cause = (
                f"interrupt {target.interaction_id} at node '{node}' timed out after {target.request.timeout_seconds}s "
                f"without a resume (prompt: {target.request.prompt!r}); it is cancelled with reason timeout"
            )
        else:
            st = target.state
            cause = f"interrupt {target.interaction_id} at node '{node}' was cancelled by {st.answered_by}: {st.reason}"
        core.set_run_status(run_id, "failed", allowed_from=OPEN_RUN_STATES, reason=cause)
        return InterruptFailResult(cause=cause, interrupt_id=target.interaction_id if target else None)


class InterruptDeadline:
    """A hosted interrupt's `DeadlinePolicy` (baton.services.at_deadline): closed by the conditional write
    that times it out (`_expire_if_due`); a stored resume or cancel is delivered as the reconciler
    delivers a lost send (`reconcile_wait`)."""

    def __init__(self, interrupts: InterruptService) -> None:
        self.interrupts = interrupts
        self.core = interrupts.core

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        return wait if wait.status in OPEN_WAIT_STATUSES else None

    def stored(self, wait: ParkedWait) -> Interaction | None:
        return next((i for i in self.interrupts._interrupts_of(wait) if i.state.status != "pending"), None)

    def release(self, wait: ParkedWait, stored: Interaction) -> bool:
        return self.interrupts.reconcile_wait(wait)

    def take_default(self, wait: ParkedWait) -> bool:
        taken = False
        for i in self.interrupts._interrupts_of(wait):
            try:
                taken = answer_with_default(self.core, i, i.expires_at or wait.deadline) is not None or taken
            except ConflictError:
                continue  # resumed or cancelled just in time: `stored` finds it
        return taken

    def time_out(self, wait: ParkedWait) -> bool:
        interrupts = self.interrupts
        for i in interrupts._interrupts_of(wait):
            if i.state.status == "pending" and is_timed_out(interrupts._expire_if_due(i)):
                return interrupts._fail_waiter(interrupts.load(i.interaction_id), token=wait.task_token)
        return False
