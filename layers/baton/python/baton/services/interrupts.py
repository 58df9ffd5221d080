"""Interrupts: typed pauses with a state snapshot an operator can inspect, edit and resume.

An interrupt is an `Interaction` of kind "interrupt" in its session's run, found by id alone through the
store's `IID#<id>` pointer. Its waiter is an SDK client long-polling `GET /api/v1/interrupts/{id}` (the
deadline is the store's `expires_at`: the first read past it times it out, the sweeper reads the rest) or
a hosted task (`statemachines/interrupt.asl.json`) parked at `WAIT#<node>`. Resume, cancel, vote and the
deadline: `baton.services.interrupt_answers`. A declared action is decided first by the policy in force
(`decide_gate`, `baton.domain.gate_ruling`); a policy that fails never passes the gate: a person is asked.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from baton.contracts.interrupts import (
    DEFAULT_PAGE_SIZE,
    DOMAIN_STATUSES,
    PAGE_FILTERS,
    STATUSES,
    ResumeInterrupt,
    edge_status,
)
from baton.contracts.page_tokens import (
    PageCursor,
    decode_store_page_token,
    invalid_page_token,
)
from baton.domain.approval import requester_of
from baton.domain.fields import OPEN_RUN_STATES
from baton.domain.gate_payloads import InterruptFailResult
from baton.domain.gate_ruling import apply_ruling, passed_with, ruling_of
from baton.domain.interrupt_rules import (
    KIND,
    asked_event,
    hosted_end_cause,
    is_timed_out,
    key_interrupt_id,
    same_key,
)
from baton.domain.interrupt_spec import DEFAULT_TIMEOUT_MS, InterruptSpec
from baton.errors import BadRequestError, ConflictError
from baton.events import PolicyDecided, RunPaused
from baton.policy.source import decide_or_ask
from baton.services.asks import LongPolled
from baton.services.at_deadline import ParkedInteractions, end_at_catch
from baton.services.deadlines import arm_interaction, interactions_of, park_interaction
from baton.services.interrupt_answers import InterruptAnswers

if TYPE_CHECKING:
    from datetime import datetime

    from baton.contracts.policy import PolicyDecision
    from baton.models import Interaction, ParkedWait, RunSummary
    from baton.services.core import Core

log = logging.getLogger("baton")


class InterruptService(LongPolled, InterruptAnswers):
    """Create, read, long-poll and list interrupts; resume, cancel and vote are its `InterruptAnswers`."""

    backoff = (1.5, 2.5)  # the long-poll's re-reads: 0.5 s, then x1.5 per read up to 2.5 s

    def create(
        self, spec: InterruptSpec, *, caller: str, token: str | None = None, entered_at: datetime | None = None
    ) -> tuple[Interaction, bool]:
        """Store, park (a hosted task's `token`: its deadline the task's), notify. (interrupt, created): False,
        nothing recorded again, when `spec.key` names an existing one or the same task's park is retried."""
        core, hosted = self.core, token is not None
        request = spec.request(caller=caller, hosted=hosted)
        core.check_notify(request.notify)
        iid = self._new_id(spec, token, entered_at)
        earlier = self._created_before(spec, token, iid)
        if earlier is not None:
            return earlier, False

        run = core.ensure_run(spec.session_id)
        decided = decide_gate(core, run, spec, caller=caller)  # (no declared action: the policy is not asked)
        ruling = ruling_of(decided)
        apply_ruling(request, ruling)
        if request.approval is not None:
            request.requested_by = requester_of(caller, hosted=run.hosted, started_by=run.started_by)
        # A hosted task's deadline is its own (from its entry, before its timeout); an SDK waiter's is ours.
        timeout_ms = request.timeout_ms or DEFAULT_TIMEOUT_MS
        deadline = core.deadline_of(timeout_ms / 1000, entered_at if hosted else None)
        interaction = core.new_interaction(spec.session_id, request, expires_at=deadline, interaction_id=iid)
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
                return same_key(lost, spec.prompt), False
            park_interaction(self.core, lost, token)
            return lost, False
        if token is not None:
            park_interaction(self.core, interaction, token)
        core.record(spec.session_id, asked_event(spec, iid, timeout_ms=timeout_ms, hosted=hosted, by=caller))
        if hosted:
            core.record(spec.session_id, RunPaused(gate=spec.node, kind=KIND))
        if decided is not None and spec.action is not None:
            core.record(
                spec.session_id,
                PolicyDecided.of(
                    decided, action="pass_gate", target=spec.action.name, interaction_id=iid, applied=decided.enforced
                ),
            )
        passed = passed_with(ruling, spec.action)
        if passed is not None and self._passed_by_rule(interaction, *passed):
            return core.store.get_interaction(spec.session_id, iid) or interaction, True
        core.notify(interaction, "interrupt_created", session_id=spec.session_id, workflow_id=spec.workflow_id)
        if not hosted:  # an SDK waiter's interrupt: no gate is parked, its ladder gets its own timer
            arm_interaction(core, interaction)
        return interaction, True

    def _passed_by_rule(self, interaction: Interaction, by: str, value: Any) -> bool:
        """A rule decided: nobody is asked, the gate passes with `value` as a person's resume would (a send
        that fails is the reconciler's). If the resume itself fails, a person is asked (logged)."""
        try:
            self.resume(interaction.interaction_id, ResumeInterrupt(input=value), caller=by)
        except Exception:
            log.exception("the policy's resume failed; a person decides", extra={"run_id": interaction.run_id})
            return False
        return True

    def _new_id(self, spec: InterruptSpec, token: str | None, entered_at: datetime | None) -> str:
        """One interrupt per key, one per hosted task, else new."""
        if spec.key:
            return key_interrupt_id(spec.session_id, spec.key)
        if token is not None:
            return self.core.park_id(token, entered_at)
        return self.core.ids.new_id()

    def _created_before(self, spec: InterruptSpec, token: str | None, iid: str) -> Interaction | None:
        """What an earlier create made: the interrupt `spec.key` names (when it asks the same, else the 409),
        or a retried park's (by its wait, else its id; parked now if that attempt died before parking it)."""
        if token is None:
            existing = self.core.store.find_interaction(iid) if spec.key else None
            return None if existing is None else same_key(existing, spec.prompt)
        wait = self.core.parked_again(spec.session_id, spec.node, token)
        existing = self.core.store.find_interaction(wait.interaction_ids[0] if wait else iid)
        if existing is None or existing.request.kind != KIND:
            return None
        park_interaction(self.core, existing, token)
        return existing

    def get(self, interrupt_id: str, *, wait_seconds: float = 0) -> Interaction:
        """One record; with `wait_seconds` (<= 20) a long-poll that returns once it is no longer pending:
        the id resolved once, then one consistent GetItem by (session, id) per re-read."""

        def read(seen: Interaction | None) -> Interaction:
            return self._expire_if_due(self.reread(seen) if seen else self.load(interrupt_id))

        return self._long_poll(read, wait_seconds)

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
        cursor = decode_store_page_token(next_token, scope, PAGE_FILTERS)
        domains: tuple[str | None, ...] = DOMAIN_STATUSES[status] if status else (None,)
        if cursor.p >= len(domains):
            raise invalid_page_token()
        found: list[Interaction] = []
        start = cursor.k
        # A status may span two stored states (cancelled = cancelled + timed out): a page that has room
        # left goes on into the next one, so a first page is never empty while later ones are not.
        for phase in range(cursor.p, len(domains)):  # (not empty: the token's phase is one of them)
            page, start = self.core.store.page_interactions(
                KIND, status=domains[phase], run_id=session_id, limit=limit - len(found), start=start
            )
            found += page
            if start or len(found) >= limit:
                break
        next_phase = phase if start else phase + 1
        token = PageCursor(k=start, f=scope, p=next_phase).token() if next_phase < len(domains) else None
        settled = [self._expire_if_due(i) if i.state.status == "pending" else i for i in found]
        if status is not None:
            settled = [i for i in settled if edge_status(i) == status]
        return sorted(settled, key=lambda i: (i.created_at, i.interaction_id)), token

    def sweep(self) -> list[str]:
        """Time out every pending interrupt past its deadline (a Query of the sparse `due` index)."""
        due = self.core.store.list_due(KIND, self.core.now())
        return [i.interaction_id for i in due if is_timed_out(self._expire_if_due(i))]

    def hosted_ended(self, run_id: str, node: str, outcome: str) -> InterruptFailResult:
        """The hosted interrupt's Catch (`end_at_catch`; outcome "timeout" on States.Timeout, "cancelled" on
        InterruptCancelled): time out what is still pending, and the cause for the Fail state."""
        core = self.core

        def time_out(i: Interaction) -> bool:
            with contextlib.suppress(ConflictError):  # resumed or cancelled at the last moment
                self._time_out(i)
                return True
            return False

        timing_out = outcome == "timeout"
        wait = core.store.get_wait(run_id, node)
        at_node = [i for i in core.store.list_run_interactions(run_id, kind=KIND) if i.request.node == node]
        end_at_catch(core, wait, at_node if timing_out else [], time_out, "timed_out" if timing_out else "released")
        target = at_node[-1] if at_node else None
        cause = hosted_end_cause(target, node, outcome)
        core.set_run_status(run_id, "failed", allowed_from=OPEN_RUN_STATES, reason=cause)
        return InterruptFailResult(cause=cause, interrupt_id=target.interaction_id if target else None)


def decide_gate(core: Core, run: RunSummary, spec: InterruptSpec, *, caller: str) -> PolicyDecision | None:
    """The policy's decision of the interrupt's declared action (None: no action, or no policy)."""
    if (action := spec.action) is None:
        return None
    return decide_or_ask(
        core.policy, lambda: spec.gate_query(action, run, caller=caller, at=core.now()), run_id=spec.session_id
    )


class InterruptDeadline(ParkedInteractions):
    """A hosted interrupt's `DeadlinePolicy`: closed and defaulted as any pause parking interactions,
    timed out by `_expire_if_due`, a stored resume or cancel delivered as the reconciler does."""

    def __init__(self, interrupts: InterruptService) -> None:
        super().__init__(interrupts.core)
        self.interrupts = interrupts

    def stored(self, wait: ParkedWait) -> Interaction | None:
        return next((i for i in interactions_of(self.core, wait) if i.state.status != "pending"), None)

    def release(self, wait: ParkedWait, stored: Interaction) -> bool:
        """The resume (answered) or the task failure (cancelled, timed out) it should have had."""
        return self.interrupts.deliver(stored, token=wait.task_token)

    def time_out(self, wait: ParkedWait) -> bool:
        pending = (i for i in interactions_of(self.core, wait) if i.state.status == "pending")
        expired = next((e for e in map(self.interrupts._expire_if_due, pending) if is_timed_out(e)), None)
        return expired is not None and self.interrupts._send(expired, token=wait.task_token)
