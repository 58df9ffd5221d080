"""Interrupts: typed pauses with a state snapshot an operator can inspect, edit and resume.

An interrupt is an `Interaction` of kind "interrupt" whose run is the session (`run_id = sessionId`;
external sessions come into being with their first interrupt). Its id is the interaction id; the
store keeps an `IID#<id>` pointer so `/api/v1/interrupts/{id}` needs no session.

Two kinds of waiter:

* **SDK (external)**: agent code anywhere creates the interrupt over HTTP and long-polls
  `GET /api/v1/interrupts/{id}?waitSeconds=20`. There is no Step Functions timer, so the deadline
  (`expires_at`, from `timeoutMs`; DEFAULT_TIMEOUT_MS = 24 h when omitted, so every pause ends) is
  enforced by the store: any read, long-poll, claim, resume or
  cancel after it first moves the interrupt (conditional write) to cancelled with reason "timeout" and
  records `interrupt_timed_out`; the sweeper Lambda does the same for interrupts nobody reads.
* **Hosted**: `statemachines/interrupt.asl.json` parks a task token (`WAIT#<node>`) through the
  `interrupt_park` Lambda. Resume sends the token with `{input, state}`; cancel sends a task failure
  with error `InterruptCancelled`; Step Functions' own timer (TimeoutSecondsPath) raises
  States.Timeout, and the `interrupt_fail` Lambda marks the interrupt and returns the Fail cause. A
  timeout Baton's own clock decides first fails the task with `BatonDeadlinePassed`, caught the same way.

Statuses: pending → answered (resumed) | cancelled (reason: the operator's) | timed_out (the deadline
passed). The API and the SDK keep the seed's words: a timed-out interrupt shows as status "cancelled" with
reason "timeout" and `timedOut: true` (`public_view`, `edge_status`); items stored with those words
before load as timed_out (`baton.models.Interaction`).

Validation happens at the door: `InterruptSpec` (`baton.domain.interrupt_spec`, built by the API route
and the hosted task's Lambda) checks every field with the shared field types, so `create` starts at the
work.

Why one module of over 400 lines: every path of an interrupt's life (read, long-poll, list, resume, claim,
cancel, sweep, the hosted Catch) first runs the same store-backed deadline (`_expire_if_due`) and ends
in the same release (`_release`, `_fail_waiter`, `_settle_run`); split apart, each part would need
them all.

Claims are advisory (they show who is working on it) and leased: claim, renew, release, take-over and
reassign live in `baton.services.claims`; every read here (`_load`) shows a claim past its lease as
unclaimed. Resume and cancel are allowed to any operator.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from baton.contracts.interrupts import InterruptView
from baton.domain.answer_schema import check_state_size, validate_answer
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.state_edits import apply_state_edits, state_version
from baton.errors import (
    BadRequestError,
    ConflictError,
    GoneError,
    NotFoundError,
    TaskTokenError,
    winner,
)
from baton.events import (
    HumanInputRequested,
    InterruptCancelled,
    InterruptResumed,
    InterruptTimedOut,
    RunPaused,
)
from baton.ids import iso, parse_iso
from baton.models import Interaction, InteractionState, InterruptRequest, ParkedWait, status_of
from baton.ports import GuardFailedError
from baton.services.answer_outcomes import SendFailedError, delivery_of
from baton.services.approvals import ApprovalService, Voter
from baton.services.at_deadline import OPEN, end_at_deadline
from baton.services.core import DEADLINE_ERROR
from baton.services.deadlines import answer_with_default, arm_interaction, park_wait

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.domain.approval import ApprovalPolicy, Vote
    from baton.domain.audit import AuditHead
    from baton.events import EventPayload
    from baton.services.approvals import Ballot
    from baton.services.core import Core

__all__ = ["InterruptService", "InterruptSpec", "edge_status", "is_timed_out", "key_interrupt_id", "public_view"]

KIND: Final = "interrupt"
TIMEOUT_REASON = "timeout"
CANCEL_ERROR = "InterruptCancelled"  # the hosted task's failure on cancel (the ASL Catch names it)
STATUSES = ("pending", "answered", "cancelled")  # the API's words; timed_out shows as cancelled
# The domain statuses behind each API word (a listing of "cancelled" includes the timed-out ones).
DOMAIN_STATUSES: dict[str, tuple[InteractionState, ...]] = {
    "pending": ("pending",),
    "answered": ("answered",),
    "cancelled": ("cancelled", "timed_out"),
}
DEFAULT_TIMEOUT_MS = 86400 * 1000  # an SDK interrupt created without timeoutMs: every pause has a deadline
MAX_WAIT_SECONDS = 20  # API Gateway's integration limit is 29 s
POLL_INTERVAL_SECONDS = 0.5  # the long-poll's first re-read; then x1.5 per read up to 2.5 s
POLL_BACKOFF = 1.5
MAX_POLL_INTERVAL_SECONDS = 2.5
DEFAULT_PAGE_SIZE = 50  # GET /api/v1/interrupts ?limit= (max MAX_PAGE_SIZE) and ?next=
MAX_PAGE_SIZE = 200
MAX_REASON_CHARS = 1000
OPEN_RUN_STATES = {"created", "running", "paused_waiting_human"}


def key_interrupt_id(session_id: str, key: str) -> str:
    """A deterministic id for (session, key): creating twice with one key returns the first interrupt."""
    digest = hashlib.sha256(f"{session_id}\x00{key}".encode()).digest()
    return "K" + base64.b32encode(digest).decode().rstrip("=")[:25]


def is_timed_out(i: Interaction) -> bool:
    return i.state.status == "timed_out"


def edge_status(i: Interaction) -> str:
    """The status in the API's (the seed's) words: a timed-out interrupt is "cancelled"."""
    return "cancelled" if i.state.status == "timed_out" else i.state.status


def interrupt_request(i: Interaction) -> InterruptRequest:
    return i.request_as(InterruptRequest)


def interrupt_view(i: Interaction) -> InterruptView:
    """The API shape of an interrupt (baton/contracts/interrupts.py), built from the stored record; a
    timed-out interrupt is shown in the seed's words (status "cancelled", reason "timeout")."""
    req, st = interrupt_request(i), i.state
    answer = st.answer if isinstance(st.answer, dict) else {}
    return InterruptView(
        interrupt_id=i.interaction_id,
        session_id=i.run_id,
        workflow_id=req.workflow_id,
        node=req.node,
        prompt=req.prompt,
        schema_=req.schema_,
        json_schema=req.json_schema,
        state=req.state,
        notify=req.notify,
        timeout_ms=req.timeout_ms,
        hosted=req.hosted,
        key=req.key,
        status=edge_status(i),
        created_at=i.created_at,
        created_by=req.created_by,
        expires_at=i.expires_at,
        claimed_by=st.claimed_by,
        claimed_at=st.claimed_at,
        lease_expires_at=st.lease_expires_at,
        resolved_by=st.answered_by,
        resolved_at=st.answered_at,
        value=answer.get("input"),
        edited_state=answer.get("state"),
        state_edits=answer.get("state_edits"),
        reason=TIMEOUT_REASON if is_timed_out(i) else st.reason,
        timed_out=is_timed_out(i),
        version=st.version,
        state_version=current_state_version(i),
        outcome=st.outcome,
    )


def current_state_version(i: Interaction) -> str:
    """The version of the state a resume of `i` applies to: its snapshot while pending, the edited state
    once resumed (`baton.domain.state_edits.state_version`)."""
    answer = i.state.answer if isinstance(i.state.answer, dict) else {}
    if i.state.status == "answered" and isinstance(answer.get("state"), dict):
        return state_version(answer["state"])
    return state_version(interrupt_request(i).state)


def _refuse_other_version(i: Interaction, given: str | None, seen: str) -> None:
    """409 when the resume was decided on another state version than `seen` (what it would apply to)."""
    if given is None or given == seen:
        return
    current = current_state_version(i)
    raise ConflictError(
        f"interrupt {i.interaction_id}: the resume was decided on state version {given}, but the state is at "
        f"{current}; read it again (its snapshot and any resume) and decide on the current state",
        details={
            "reason": "state_changed",
            "stateVersion": current,
            "given": given,
            "interrupt": public_view(i),
            "winner": interrupt_winner(i),
        },
    )


def interrupt_winner(i: Interaction) -> dict[str, Any]:
    """What settled (or holds) the interrupt: the resume's value, the cancel's reason, or the claim."""
    st = i.state
    if st.status == "answered":
        answer = st.answer if isinstance(st.answer, dict) else {}
        return winner(status="answered", value=answer.get("input"), by=st.answered_by, at=st.answered_at)
    if st.status in ("cancelled", "timed_out"):
        reason = TIMEOUT_REASON if is_timed_out(i) else st.reason
        return winner(status="cancelled", value=reason, by=st.answered_by, at=st.answered_at)
    return winner(status="claimed", value=st.claimed_by, by=st.claimed_by, at=st.claimed_at)


def public_view(i: Interaction) -> dict[str, Any]:
    """`interrupt_view` as the JSON object of the wire (error details and service results carry it)."""
    return interrupt_view(i).model_dump(by_alias=True)


def _encode_page_token(last: dict[str, Any] | None, scope: list[str | None], phase: int = 0) -> str:
    """`phase` is which of the listing's domain statuses the page is in (cancelled, then timed_out)."""
    token: dict[str, Any] = {"k": last, "f": scope} | ({"p": phase} if phase else {})
    raw = json.dumps(token, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_page_token(token: str, scope: list[str | None]) -> tuple[int, dict[str, Any] | None]:
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        start = decoded["k"]
        same = decoded["f"] == scope
        phase = decoded.get("p", 0)
    except (ValueError, TypeError, KeyError, AttributeError):
        raise BadRequestError("next is not a valid page token", details={"field": "next"}) from None
    if not _is_start_key(start) or not isinstance(phase, int) or phase < 0:
        raise BadRequestError("next is not a valid page token", details={"field": "next"})
    if not (isinstance(start, dict) or (start is None and phase)) or not same:
        raise BadRequestError(
            "next is a page token for another listing (use it with the same status and sessionId)",
            details={"field": "next"},
        )
    return phase, start


def _is_start_key(start: Any) -> bool:
    """A store position is a small object (the store checks its own shape before any query)."""
    if start is None:
        return True
    return isinstance(start, dict) and len(start) <= 8 and len(json.dumps(start)) <= 4096


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
        """Store, park, notify: `spec` was validated when it was built, so bad input never gets here.

        Returns (interrupt, created); `created` is False when `spec.key` named an existing one, or when
        this is a retried park of the same task (`token`): its id comes from the task, it is returned as
        it is and nothing is recorded or notified again.
        With `token` (the hosted task), the token is parked at WAIT#<node>, and the deadline is the task's
        (`Core.deadline_of`, from `entered_at`).
        """
        core = self.core
        session_id, prompt = spec.session_id, spec.prompt
        timeout_ms = spec.timeout_ms or DEFAULT_TIMEOUT_MS
        notify = list(spec.notify) if spec.notify else ["console"]
        core.check_notify(notify)

        iid = self._new_id(spec, token, entered_at)
        retried = self._parked_before(session_id, spec.node, token, iid)
        if retried is not None:
            return retried, False
        if spec.key:
            existing = core.store.find_interaction(iid)
            if existing is not None:
                return self._same_key(existing, prompt), False

        run = core.ensure_run(session_id)
        now_dt = core.clock.now()
        # A hosted task's deadline is its own (from its entry, before its timeout); an SDK waiter's is ours.
        hosted_deadline = core.deadline_of(timeout_ms / 1000, entered_at) if token is not None else None
        expires_at = hosted_deadline or iso(now_dt + timedelta(milliseconds=timeout_ms))
        interaction = Interaction(
            interaction_id=iid,
            run_id=session_id,
            created_at=iso(now_dt),
            expires_at=expires_at,
            request=self._request(spec, notify=notify, timeout_ms=timeout_ms, caller=caller, hosted=token is not None),
        )
        if spec.approval is not None:  # the requester (a hosted run's starter, else the creator) may not vote
            requester = run.started_by if run.hosted and run.started_by else caller
            interaction.request = interaction.request.model_copy(
                update={"approval": spec.approval, "requested_by": requester}
            )
        # The run is paused BEFORE the interrupt becomes visible: whoever sees it pending sees the run paused.
        core.set_run_status(session_id, "paused_waiting_human", allowed_from=OPEN_RUN_STATES)
        try:
            core.store.put_interaction_indexed(interaction)
        except Exception as err:
            self._settle_run(interaction)  # nothing new is pending: an external session runs again if idle
            if not (spec.key or token is not None) or not isinstance(err, ConflictError):
                raise
            existing = core.store.find_interaction(iid)  # lost a creation race with the same key or task
            if existing is None:
                raise
            if token is not None:
                self._park_token(existing, token)
                return existing, False
            return self._same_key(existing, prompt), False
        if token is not None:
            self._park_token(interaction, token)
        core.record(
            session_id,
            HumanInputRequested(
                kind=KIND,
                interaction_id=iid,
                node=spec.node,
                prompt=prompt,
                workflow_id=spec.workflow_id,
                timeout_ms=timeout_ms,
                hosted=token is not None,
                by=caller,
            ),
        )
        if token is not None:
            core.record(session_id, RunPaused(gate=spec.node, kind=KIND))
        core.notify(interaction, "interrupt_created", session_id=session_id, workflow_id=spec.workflow_id)
        if token is None:  # an SDK waiter's interrupt: no gate is parked, its ladder gets its own timer
            arm_interaction(core, interaction)
        return interaction, True

    def _new_id(self, spec: InterruptSpec, token: str | None, entered_at: datetime | None) -> str:
        """From the key (one interrupt per key), from the hosted task (one per task), or new."""
        if spec.key:
            return key_interrupt_id(spec.session_id, spec.key)
        if token is not None:
            return self.core.park_id(token, entered_at)
        return self.core.ids.new_id()

    def _parked_before(self, session_id: str, node: str, token: str | None, iid: str) -> Interaction | None:
        """A retried park of the same hosted task: the interrupt its earlier attempt made (its wait
        parked now if the attempt died before parking it), else None."""
        if token is None:
            return None
        wait = self.core.parked_again(session_id, node, token)
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
        park_wait(
            self.core,
            ParkedWait(
                run_id=interrupt.run_id,
                gate=node,
                task_token=token,
                kind=KIND,
                interaction_ids=[interrupt.interaction_id],
                parked_at=interrupt.created_at,
                deadline=interrupt.expires_at,
            ),
            pause=interrupt.request,
        )

    @staticmethod
    def _request(
        spec: InterruptSpec, *, notify: list[str], timeout_ms: int, caller: str, hosted: bool
    ) -> InterruptRequest:
        schema = spec.schema_
        enum = schema.get("enum") if isinstance(schema, dict) and spec.json_schema is None else None
        return InterruptRequest(
            node=spec.node,
            prompt=spec.prompt,
            options=[v if isinstance(v, str) else json.dumps(v) for v in enum] if isinstance(enum, list) else None,
            schema_=schema,
            json_schema=spec.json_schema,
            state=spec.state,
            timeout_seconds=math.ceil(timeout_ms / 1000),
            notify=notify,
            workflow_id=spec.workflow_id,
            created_by=caller,
            timeout_ms=timeout_ms,
            gate=spec.node if hosted else None,
            key=spec.key or None,
            ladder=spec.ladder,
        )

    @staticmethod
    def _same_key(existing: Interaction, prompt: str) -> Interaction:
        if existing.request.kind != KIND or existing.request.prompt != prompt:
            raise ConflictError(
                "an interrupt with this key already exists with a different prompt",
                details={"interrupt": public_view(existing)},
            )
        return existing

    # ---- read ----------------------------------------------------------------------------------
    def _load(self, interrupt_id: str) -> Interaction:
        found = self.core.store.find_interaction(interrupt_id) if interrupt_id else None
        if found is None or found.request.kind != KIND:
            raise NotFoundError(f"interrupt {interrupt_id} not found", details={"interrupt_id": interrupt_id})
        return self._seen(found)

    def _seen(self, i: Interaction) -> Interaction:
        """The record as a reader sees it now: a claim past its lease is nobody's (`Core.clock`)."""
        state = i.state.without_lapsed_claim(self.core.now())
        return i if state is i.state else i.model_copy(update={"state": state})

    def current(self, interrupt_id: str, verb: str) -> Interaction:
        """The pending interrupt as it is now (its deadline applied, a lapsed claim cleared); 410/409
        naming what settled it when it is no longer pending (`verb`: what the caller wanted to do)."""
        i = self._expire_if_due(self._load(interrupt_id))
        self._require_pending(i, verb)
        return i

    def current_for_decision(self, interrupt_id: str, verb: str) -> tuple[Interaction, AuditHead]:
        """`current`, with the run's decision-log head read with it (`find_for_decision`: the pointer,
        then one BatchGetItem), for a change whose event is a decision written in the same transaction."""
        found = self.core.store.find_for_decision(interrupt_id) if interrupt_id else None
        if found is None or found.interaction.request.kind != KIND:
            raise NotFoundError(f"interrupt {interrupt_id} not found", details={"interrupt_id": interrupt_id})
        i = self._expire_if_due(self._seen(found.interaction))
        self._require_pending(i, verb)
        return i, found.audit_head

    def _seconds_left(self, i: Interaction) -> float | None:
        if not i.expires_at:
            return None
        return (parse_iso(i.expires_at) - self.core.clock.now()).total_seconds()

    def _expire_if_due(self, i: Interaction) -> Interaction:
        """The store-backed deadline: a pending interrupt past `expires_at` becomes cancelled/timeout."""
        while i.state.status == "pending":
            left = self._seconds_left(i)
            if left is None or left > 0:
                return i
            try:  # a declared default is taken at the deadline, never a timeout (baton.domain.ladder)
                defaulted = answer_with_default(self.core, i, i.expires_at)
            except ConflictError:
                i = self._load(i.interaction_id)
                continue
            if defaulted is not None:
                with contextlib.suppress(SendFailedError):  # the default is stored: the reconciler sends it
                    self._release(defaulted)
                self._settle_run(defaulted)
                return defaulted
            try:
                updated = self.core.store.transition_interaction(
                    i, status_of(i.state, "timed_out", reason=TIMEOUT_REASON)
                )
            except ConflictError:
                i = self._load(i.interaction_id)  # someone resumed/cancelled/expired it first
                continue
            self.core.record(
                i.run_id,
                InterruptTimedOut(
                    interaction_id=i.interaction_id, node=i.request.node, timeout_ms=interrupt_request(i).timeout_ms
                ),
            )
            self._settle_run(updated)
            return updated
        return i

    def get(self, interrupt_id: str, *, wait_seconds: float = 0) -> Interaction:
        """One record; with `wait_seconds` (≤ 20) a long-poll that returns as soon as it is no longer
        pending. The first read resolves the id (pointer + item); re-reads are one consistent GetItem
        by (session, id), backing off from 0.5 s to 2.5 s between reads, and exactly at its deadline."""
        wait = max(0.0, min(float(wait_seconds), MAX_WAIT_SECONDS))
        deadline = self._monotonic() + wait
        i = self._expire_if_due(self._load(interrupt_id))
        interval = POLL_INTERVAL_SECONDS
        while True:
            remaining = deadline - self._monotonic()
            if i.state.status != "pending" or remaining <= 0:
                return i
            step = min(interval, remaining)
            left = self._seconds_left(i)
            if left is not None:
                step = min(step, max(left, 0.0) + 0.001)
            self._sleep(step)
            interval = min(interval * POLL_BACKOFF, MAX_POLL_INTERVAL_SECONDS)
            reread = self.core.store.get_interaction(i.run_id, i.interaction_id)
            i = self._expire_if_due(self._seen(reread) if reread is not None else self._load(interrupt_id))

    def _settled(self, found: list[Interaction], status: str | None) -> list[Interaction]:
        """Expired pending ones are moved now, so a listing never shows a pending interrupt past its
        deadline; then only those (still) in `status` (the API's word), oldest first."""
        settled = [self._expire_if_due(self._seen(i)) if i.state.status == "pending" else i for i in found]
        if status is not None:
            settled = [i for i in settled if edge_status(i) == status]
        return sorted(settled, key=lambda i: (i.created_at, i.interaction_id))

    def list_page(
        self,
        *,
        status: str | None = None,
        session_id: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        next_token: str | None = None,
    ) -> tuple[list[Interaction], str | None]:
        """One page of `list_interrupts` (Queries only, at most `limit` ≤ 200 items) and an opaque token
        for the next page (None on the last). A token is bound to the filters it was issued for."""
        if status is not None and status not in STATUSES:
            raise BadRequestError(
                f"status must be one of {', '.join(STATUSES)}", details={"field": "status", "status": status}
            )
        # session_id and limit were checked by the route's query types (RunId, 1..MAX_PAGE_SIZE).
        if status is None and session_id is None:
            status = "pending"
        scope = [status, session_id]
        phase, start = _decode_page_token(next_token, scope) if next_token else (0, None)
        domains: tuple[str | None, ...] = DOMAIN_STATUSES[status] if status else (None,)
        if phase >= len(domains):
            raise BadRequestError("next is not a valid page token", details={"field": "next"})
        found: list[Interaction] = []
        token: str | None = None
        # A status may span two stored states (cancelled = cancelled + timed out): a page that has room
        # left goes on into the next one, so a first page is never empty while later ones are not.
        while True:
            page, last = self.core.store.page_interactions(
                KIND, status=domains[phase], run_id=session_id, limit=limit - len(found), start=start
            )
            found += page
            if last:
                token = _encode_page_token(last, scope, phase)
                break
            phase, start = phase + 1, None
            if phase >= len(domains):
                break
            if len(found) >= limit:
                token = _encode_page_token(None, scope, phase)
                break
        return self._settled(found, status), token

    # ---- resume --------------------------------------------------------------------------------
    def resume(
        self,
        interrupt_id: str,
        value: Any,
        state_edits: list[str],
        *,
        caller: str,
        voter: Voter | None = None,
        state_version: str | None = None,
    ) -> dict[str, Any]:
        """Apply the edits to the stored snapshot and validate the value, all before anything is
        written (a 422 names the failing path and leaves the interrupt pending); then store the answer
        (conditional write) and release the waiter. On a quorum interrupt the resume is an approval by
        `voter` (the authenticated caller): the waiter is released by the one that meets the quorum.

        `state_version`: the state version the resume was decided on (`InterruptView.state_version`); a
        resume against another is a 409 naming the current one, never applied to a state the operator did
        not see. None (clients before it): the current one, taken at the door."""
        core = self.core
        # One read of the id's pointer, then the interrupt, its node's wait and the run's decision-log
        # head together (the resume is a decision, chained in its transaction; the wait is read once).
        found = core.store.find_for_decision(interrupt_id) if interrupt_id else None
        if found is None or found.interaction.request.kind != KIND:
            raise NotFoundError(f"interrupt {interrupt_id} not found", details={"interrupt_id": interrupt_id})
        i = self._expire_if_due(self._seen(found.interaction))
        if i.state.status != "pending":
            if is_timed_out(i) or i.state.outcome:  # past the deadline: a 410, the value kept as late
                late = {"input": value, "state_edits": list(state_edits)}
                core.refuse_if_late(
                    i, late, caller=caller, deadline=i.expires_at, reason=TIMEOUT_REASON, interrupt=public_view(i)
                )
            if interrupt_request(i).approval is None or i.state.status != "answered":
                return self._resume_settled(i, value, state_edits, caller=caller, state_version=state_version)
        req = interrupt_request(i)
        if i.state.status == "pending":  # (a settled quorum interrupt: the vote path says what counted)
            _refuse_other_version(i, state_version, current_state_version(i))
        edited = apply_state_edits(req.state or {}, state_edits)
        accepted = validate_answer(value, schema=req.schema_, json_schema=req.json_schema)
        check_state_size(edited)
        answer = {"input": accepted, "state": edited, "state_edits": list(state_edits)}
        if req.approval is not None:  # settled: a counted voter's repeat is told so (200), any other a 409
            return self._vote(i, req.approval, json.dumps(answer), voter or Voter(caller), "approve")
        resumed_event = core.new_event(
            i.run_id,
            InterruptResumed(
                interaction_id=i.interaction_id,
                node=i.request.node,
                input=accepted,
                state_edits=list(state_edits),
                by=caller,
            ),
        )
        try:  # the answer and its event: one write
            answered = core.store.transition_interaction(
                i,
                status_of(i.state, "answered", answer=answer, by=caller, at=core.now()),
                with_records=[resumed_event],
                audit_head=found.audit_head,
            )
        except ConflictError:  # lost the race: answer as if it had come second, from a consistent read
            current = self._expire_if_due(self._load(interrupt_id))
            return self._resume_settled(current, value, state_edits, caller=caller, state_version=state_version)
        try:
            resumed, pending = self._release(answered, wait=found.wait), False
        except SendFailedError:  # stored: the reconciler sends it
            resumed, pending = False, True
        self._settle_run(answered)
        delivery = delivery_of(resumed, pending=pending)
        return {"interrupt": public_view(answered), "resumed": resumed, "delivery": delivery}

    def _resume_settled(
        self, i: Interaction, value: Any, state_edits: list[str], *, caller: str, state_version: str | None = None
    ) -> dict[str, Any]:
        """A resume that finds the interrupt settled: gone, changed, a repeat, or a 409 naming the winner.
        A repeat (the same caller, the same value and edits: a client's retry, a twin request) is answered
        as the first one was, from the stored answer: what idempotency needs, with no record of its own.
        Any other resume that names the state version it was decided on is told the current one (the
        state the winner's edits made)."""
        if i.state.status in ("cancelled", "timed_out"):
            why = "timed out" if is_timed_out(i) else f"was cancelled ({i.state.reason})"
            raise GoneError(
                f"interrupt {i.interaction_id} {why}; nothing is waiting for a value",
                details={"reason": i.state.reason, "interrupt": public_view(i), "winner": interrupt_winner(i)},
            )
        if i.state.status == "pending":  # only a claim changed it: the resume may go ahead
            raise ConflictError(
                f"interrupt {i.interaction_id} changed while resuming; send the resume again",
                details={"interrupt": public_view(i), "winner": interrupt_winner(i)},
            )
        answer = i.state.answer if isinstance(i.state.answer, dict) else {}
        # Only this caller's own resume is repeated; the same value from another caller lost the race.
        same = answer.get("input") == value and answer.get("state_edits") == list(state_edits)
        same = same and i.state.answered_by == caller
        if not same:  # decided on the snapshot the winner's resume replaced: a 409 naming the current version
            _refuse_other_version(i, state_version, current_state_version(i))
        hosted = interrupt_request(i).hosted
        # A hosted retry of a resume whose token send failed: the stored answer is sent again.
        try:
            if same and hosted and self._release(i):
                return {"interrupt": public_view(i), "resumed": True, "delivery": "delivered"}
        except SendFailedError:  # still unsent: the reconciler sends it
            if interrupt_request(i).approval is None:
                return {"interrupt": public_view(i), "resumed": False, "delivery": "pending"}
        if same and interrupt_request(i).approval is None:
            resumed = not hosted or self._delivered(i)
            return {"interrupt": public_view(i), "resumed": resumed, "delivery": delivery_of(resumed)}
        raise ConflictError(
            f"interrupt {i.interaction_id} was already resumed by {i.state.answered_by}",
            details={"interrupt": public_view(i), "winner": interrupt_winner(i)},
        )

    def _wait_of(self, i: Interaction, read: ParkedWait | None = None) -> ParkedWait | None:
        """The hosted interrupt's parked wait: `read` when the caller read it with the interrupt."""
        gate = interrupt_request(i).gate
        if not gate:
            return None
        wait = read if read is not None and read.gate == gate else self.core.store.get_wait(i.run_id, gate)
        if wait is None or wait.status != "parked" or i.interaction_id not in wait.interaction_ids:
            return None
        return wait

    def _delivered(self, answered: Interaction) -> bool:
        """The hosted interrupt's wait was released with this answer (its token sent)."""
        gate = interrupt_request(answered).gate
        wait = self.core.store.get_wait(answered.run_id, gate) if gate else None
        return wait is not None and wait.status == "released" and answered.interaction_id in wait.interaction_ids

    def _release(self, answered: Interaction, *, token: str | None = None, wait: ParkedWait | None = None) -> bool:
        """Hosted: send the parked token with the value and the edited state (the wait read once: `wait`,
        when read with the interrupt). SDK waiters need nothing: their long-poll sees the answered record."""
        wait = self._wait_of(answered, wait)
        if wait is None:
            return not interrupt_request(answered).hosted
        answer = answered.state.answer or {}
        output = {
            "interrupt_id": answered.interaction_id,
            "input": answer.get("input"),
            "state": answer.get("state"),
            "state_edits": answer.get("state_edits"),
            "resolved_by": answered.state.answered_by,
            "resolved_at": answered.state.answered_at,
        }
        return self.core.release_gate(answered.run_id, answered.request.node, output, token=token, wait=wait)

    def _settle_run(self, i: Interaction) -> None:
        """An external session is running again once none of its interrupts is pending."""
        if interrupt_request(i).hosted:
            return
        # The session's partition, read consistently (the by_status GSI may still list this one as pending).
        if not self.core.store.list_run_interactions(i.run_id, kind=KIND, status="pending"):
            self.core.set_run_status(i.run_id, "running", allowed_from={"paused_waiting_human"})

    # ---- cancel (claims: baton.services.claims) -----------------------------------------------
    def cancel(self, interrupt_id: str, reason: str, *, caller: str, voter: Voter | None = None) -> dict[str, Any]:
        core = self.core
        reason = (reason or "").strip()
        if not reason or len(reason) > MAX_REASON_CHARS:
            raise BadRequestError(f"reason must be 1-{MAX_REASON_CHARS} characters", details={"field": "reason"})
        i = self._expire_if_due(self._load(interrupt_id))
        if self._is_own_cancel(i, reason, caller) and self._wait_of(i) is not None:
            # A retry of this caller's cancel whose task failure was not delivered: the stored cancel is
            # sent again. Anyone else's cancel meanwhile lost the race (a 410 naming the winner below).
            failed = self._fail_waiter(i)
            return {"interrupt": public_view(i), "cancelled": True, "workflowFailed": failed}
        self._require_pending(i, "cancelled")
        policy = interrupt_request(i).approval
        if policy is not None:  # a quorum interrupt: the cancel is a rejection by the authenticated caller
            return self._vote(i, policy, reason, voter or Voter(caller), "reject")
        try:
            cancelled = core.store.transition_interaction(
                i,
                status_of(i.state, "cancelled", by=caller, at=core.now(), reason=reason),
            )
        except ConflictError:
            current = self._expire_if_due(self._load(interrupt_id))
            self._require_pending(current, "cancelled")  # settled by another: 410/409 naming the winner
            return self.cancel(interrupt_id, reason, caller=caller)  # only a claim changed it: again
        core.record(
            i.run_id, InterruptCancelled(interaction_id=interrupt_id, node=i.request.node, reason=reason, by=caller)
        )
        failed = self._fail_waiter(cancelled)
        self._settle_run(cancelled)
        return {"interrupt": public_view(cancelled), "cancelled": True, "workflowFailed": failed}

    @staticmethod
    def _is_own_cancel(i: Interaction, reason: str, caller: str) -> bool:
        """The stored cancel is this very request's (the same caller, the same reason): its retry."""
        st = i.state
        return st.status == "cancelled" and st.answered_by == caller and st.reason == reason

    # ---- quorum -----------------------------------------------------------------------------------
    def _vote(self, i: Interaction, policy: ApprovalPolicy, text: str, voter: Voter, vote: Vote) -> dict[str, Any]:
        """One vote on a quorum interrupt (`baton/services/approvals.py`): 403 for the requester or a
        non-approver, counted once per operator; the vote that meets the quorum resumes it with that
        vote's value (the rejection rule: cancels it), exactly once; a vote after the decision is a 409."""
        ballot = self.approvals.cast(i, policy, text, voter, requested_by=interrupt_request(i).requested_by, vote=vote)
        try:
            released = self._decide(i.interaction_id, policy, ballot) if ballot.decision else False
            pending = False
        except SendFailedError:  # the decision is stored: the reconciler sends it
            released, pending = False, True
        current = self._load(i.interaction_id)
        if ballot.outcome == "closed":
            raise ConflictError(
                f"interrupt {i.interaction_id} is already {edge_status(current)}: the vote is not counted",
                details={"interrupt": public_view(current), "winner": interrupt_winner(current)},
            )
        view = {"interrupt": public_view(current), "approval": ballot.view(policy).model_dump(exclude_unset=True)}
        if vote == "approve":
            resumed = released and current.state.status == "answered"
            return view | {"resumed": resumed, "delivery": delivery_of(resumed, pending=pending)}
        return view | {"cancelled": current.state.status == "cancelled", "workflowFailed": released}

    def settle_quorum(self, i: Interaction) -> bool:
        """A pending quorum interrupt whose stored tally is met (its decider died before the release):
        settle it as that vote would have (the reconciler, baton/services/approvals.py settle_met_quorums)."""
        policy = interrupt_request(i).approval
        if policy is None:
            return False
        ballot = self.approvals.standing(i, policy)
        if ballot.decision is None:
            return False
        self._decide(i.interaction_id, policy, ballot)  # its result says whether a waiter was sent to
        return self._load(i.interaction_id).state.status != "pending"

    def _decide(self, interrupt_id: str, policy: ApprovalPolicy, ballot: Ballot) -> bool:
        """Settle a quorum interrupt whose tally is met (guarded by it; a claim in between: read again).
        True if this call released (or failed) the waiter."""
        core = self.core
        for _attempt in range(3):
            i = self._load(interrupt_id)
            if i.state.status != "pending":
                return False
            decided = self.approvals.decided(i, policy, ballot)
            approving = [v for v in ballot.votes if v.vote == "approve"]
            if ballot.decision == "approved":
                answer = json.loads(approving[policy.approvals - 1].answer)
                new = status_of(i.state, "answered", answer=answer, by=decided.by, at=core.now(), reason=decided.reason)
                first: EventPayload = InterruptResumed(
                    interaction_id=interrupt_id,
                    node=i.request.node,
                    input=answer["input"],
                    state_edits=answer["state_edits"],
                    by=decided.by,
                )
            else:
                new = status_of(i.state, "cancelled", by=decided.by, at=core.now(), reason=decided.reason)
                first = InterruptCancelled(
                    interaction_id=interrupt_id, node=i.request.node, reason=decided.reason, by=decided.by
                )
            records = [core.new_event(i.run_id, first), core.new_event(i.run_id, decided.event)]
            try:
                settled = core.store.transition_interaction(i, new, with_records=records, guards=[decided.guard])
            except (ConflictError, GuardFailedError):
                continue
            done = self._release(settled) if settled.state.status == "answered" else self._fail_waiter(settled)
            self._settle_run(settled)
            return done
        return False

    def _fail_waiter(self, cancelled: Interaction, *, token: str | None = None) -> bool:
        """Hosted: fail the parked token of a cancelled interrupt with `InterruptCancelled` (the cause
        names who cancelled it and why). True if this call failed the task. A send that errors for
        another reason leaves the wait parked: a retried cancel or the reconciler sends it again."""
        wait = self._wait_of(cancelled)
        if wait is None or (token is not None and wait.task_token != token):
            return False
        st = cancelled.state
        # A timeout fails the task with the deadline error, which the hosted Catch takes as Step
        # Functions' own timeout: the run ends InterruptTimedOut whichever clock path got there first.
        if is_timed_out(cancelled):
            error, cause = DEADLINE_ERROR, f"interrupt {cancelled.interaction_id} timed out"
        else:
            error = CANCEL_ERROR
            cause = f"interrupt {cancelled.interaction_id} cancelled by {st.answered_by}: {st.reason}"
        try:
            self.core.tokens.send_failure(wait.task_token, error, cause)
        except TaskTokenError:
            self.core.store.release_wait(wait, "released")
            return False  # the execution already ended or timed out: nothing left to fail
        return self.core.store.release_wait(wait, "released")

    def reconcile_wait(self, wait: ParkedWait) -> bool:
        """The reconciler: a parked hosted interrupt whose interrupt is no longer pending gets the resume
        (answered) or the task failure (cancelled, incl. timed out) it should have had. True if sent."""
        for iid in wait.interaction_ids:
            i = self.core.store.get_interaction(wait.run_id, iid)
            if i is None or i.request.kind != KIND:
                continue
            if i.state.status == "answered":
                return self._release(i, token=wait.task_token)
            if i.state.status in ("cancelled", "timed_out"):
                return self._fail_waiter(i, token=wait.task_token)
        return False

    def end_at_deadline(self, wait: ParkedWait) -> bool:
        """At a parked hosted interrupt's deadline, the one deadline path (baton.services.at_deadline):
        a resume (or cancel) stored in time is delivered; only a pending interrupt times out (its
        declared default, or the task failed as a timed-out interrupt). True if this call ended it."""
        return end_at_deadline(InterruptDeadline(self), wait) is not None

    @staticmethod
    def _require_pending(i: Interaction, verb: str) -> None:
        if i.state.status == "pending":
            return
        details = {"interrupt": public_view(i), "status": edge_status(i), "winner": interrupt_winner(i)}
        if i.state.status in ("cancelled", "timed_out"):
            raise GoneError(
                f"interrupt {i.interaction_id} is cancelled ({i.state.reason}) and cannot be {verb}", details=details
            )
        raise ConflictError(
            f"interrupt {i.interaction_id} was already resumed by {i.state.answered_by} and cannot be {verb}",
            details=details,
        )

    # ---- timeouts: the sweeper and the hosted Catch --------------------------------------------
    def sweep(self) -> list[str]:
        """Time out every pending interrupt past its deadline: a Query on the sparse `due` index reads only
        those (`InteractionStore.list_due`), never every pending interrupt."""
        expired = []
        for i in self.core.store.list_due(KIND, self.core.now()):
            left = self._seconds_left(i)
            if left is not None and left <= 0 and is_timed_out(self._expire_if_due(i)):
                expired.append(i.interaction_id)
        return expired

    def hosted_ended(self, run_id: str, node: str, outcome: str) -> dict[str, Any]:
        """The hosted interrupt's Catch lands here (outcome "timeout" on States.Timeout, "cancelled" on
        InterruptCancelled): mark what is still pending and return the cause for the Fail state."""
        core = self.core
        mine = [i for i in core.store.list_run_interactions(run_id, kind=KIND) if i.request.node == node]
        for i in mine:
            if i.state.status == "pending" and outcome == "timeout":
                try:
                    core.store.transition_interaction(i, status_of(i.state, "timed_out", reason=TIMEOUT_REASON))
                except ConflictError:
                    continue
                core.record(
                    run_id,
                    InterruptTimedOut(
                        interaction_id=i.interaction_id, node=node, timeout_ms=interrupt_request(i).timeout_ms
                    ),
                )
        latest = core.store.list_run_interactions(run_id, kind=KIND)
        latest = [i for i in latest if i.request.node == node]
        target = latest[-1] if latest else None
        wait = core.store.get_wait(run_id, node)
        if wait is not None and wait.status == "parked":
            core.store.release_wait(wait, "timed_out" if outcome == "timeout" else "released")
        if target is None:
            cause = f"interrupt at node '{node}' ended ({outcome}) but no interrupt was recorded"
        elif outcome == "timeout" or is_timed_out(target):
            seconds = target.request.timeout_seconds
            cause = (
                f"interrupt {target.interaction_id} at node '{node}' timed out after {seconds}s without a "
                f"resume (prompt: {target.request.prompt!r}); it is cancelled with reason timeout"
            )
        else:
            cause = (
                f"interrupt {target.interaction_id} at node '{node}' was cancelled by "
                f"{target.state.answered_by}: {target.state.reason}"
            )
        core.set_run_status(run_id, "failed", allowed_from=OPEN_RUN_STATES, reason=cause)
        return {"cause": cause, "interrupt_id": target.interaction_id if target else None}


class InterruptDeadline:
    """A hosted interrupt's `DeadlinePolicy` (baton.services.at_deadline): closed by the conditional write
    that times it out (`_expire_if_due`); what was stored is a resume (sent) or a cancel (the task fails
    as on cancel), delivered as the reconciler delivers a lost send (`reconcile_wait`)."""

    def __init__(self, interrupts: InterruptService) -> None:
        self.interrupts = interrupts
        self.core = interrupts.core

    def _interrupts(self, wait: ParkedWait) -> list[Interaction]:
        found = (self.core.store.get_interaction(wait.run_id, iid) for iid in wait.interaction_ids)
        return [i for i in found if i is not None and i.request.kind == KIND]

    def close(self, wait: ParkedWait) -> ParkedWait | None:
        return wait if wait.status in OPEN else None

    def stored(self, wait: ParkedWait) -> Interaction | None:
        return next((i for i in self._interrupts(wait) if i.state.status != "pending"), None)

    def release(self, wait: ParkedWait, stored: Interaction) -> bool:
        return self.interrupts.reconcile_wait(wait)

    def take_default(self, wait: ParkedWait) -> bool:
        taken = False
        for i in self._interrupts(wait):
            try:
                taken = answer_with_default(self.core, i, i.expires_at or wait.deadline) is not None or taken
            except ConflictError:
                continue  # resumed or cancelled just in time: `stored` finds it
        return taken

    def time_out(self, wait: ParkedWait) -> bool:
        for i in self._interrupts(wait):
            if i.state.status == "pending" and is_timed_out(self.interrupts._expire_if_due(i)):
                return self.interrupts._fail_waiter(self.interrupts._load(i.interaction_id), token=wait.task_token)
        return False
