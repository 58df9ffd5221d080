"""The SDK side of interrupts: waiting for a resume without a busy loop.

`Client.interrupt(...)` creates the interrupt and then long-polls `GET /api/v1/interrupts/{id}?waitSeconds=20`:
the server holds each request until the interrupt is resumed, cancelled or timed out (or 20 s pass), so
an idle waiter costs one request every ~20 s and sees a resume within ~0.5 s. Transient failures (the
API unreachable, 5xx) back off 1 s, 2 s, 4 s … 30 s and retry: the interrupt is durable, so a waiter
that lost its connection, or a process restarted after a crash (`Client.wait_interrupt(id)`, or
`Client.interrupt(..., key=...)` again), gets the answer that arrived in the meantime.

`poll_seconds` is clamped to 5..20 s (the server's long-poll limit is 20 s), and an idle waiter never
sends more than one request per 5 s.

Deadline: `timeout_ms` is the interrupt's deadline; without it the server applies its default
(`baton.services.interrupts.DEFAULT_TIMEOUT_MS`, 24 hours), so every pause ends: after the deadline the
interrupt is cancelled with reason "timeout" and the waiter gets `InterruptTimeoutError`.

Outcomes: answered → `InterruptResult(value, state, ...)`; cancelled with reason "timeout" →
`InterruptTimeoutError`; cancelled by an operator → `InterruptCancelledError` (details carry the reason).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from baton.client.pauses import action_body, approval_body, ladder_fields
from baton.client.transport import ApiUnavailableError
from baton.contracts import InterruptView
from baton.errors import (
    BatonError,
    InterruptCancelledError,
    InterruptTimeoutError,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from baton.domain.approval import ApprovalPolicy
    from baton.domain.interrupt_fields import GateAction
    from baton.domain.ladder import LadderFields

DEFAULT_POLL_SECONDS = 20.0
Polled = TypeVar("Polled")  # what one long-poll request returns
Settled = TypeVar("Settled")  # what the waiter returns once it settles
MIN_POLL_SECONDS = 5.0  # poll_seconds is clamped to MIN..MAX_POLL_SECONDS (the server accepts waitSeconds <= 20)
MAX_POLL_SECONDS = 20.0
MIN_CYCLE_SECONDS = 5.0  # never more than one idle request per this many seconds, whatever the server does
MAX_BACKOFF_SECONDS = 30.0

Record = InterruptView | Mapping[str, Any]  # a poll may hand back the parsed view or its JSON object


class InterruptOptions(TypedDict, total=False):
    """What `Client.create_interrupt` / `Client.interrupt` take besides the session and the prompt."""

    schema: dict[str, Any] | None
    json_schema: dict[str, Any] | None
    state: dict[str, Any] | None
    notify: list[str] | None
    timeout_ms: int | None
    workflow_id: str | None
    key: str | None
    # The deadline ladder, as the REST body's own model (`LadderFields`, or its JSON object) ...
    ladder: LadderFields | dict[str, Any] | None
    # ... or field by field (not both):
    on_timeout: Any  # "fail" or {"default": <a valid value>}: taken at the deadline (timed_out_default)
    remind_after: int | None  # seconds after creation: one reminder (the interrupt's own timer)
    escalate_after: int | None  # seconds after creation: announced to escalate_to
    escalate_to: list[str] | None
    # A quorum (`ApprovalPolicy` or its JSON object): each resume approves, each cancel rejects.
    approval: ApprovalPolicy | dict[str, Any] | None
    # The action the interrupt gates (`GateAction` or its JSON object): the policy decides it at creation.
    action: GateAction | dict[str, Any] | None


_WIRE_NAMES = {
    "schema": "schema",
    "json_schema": "jsonSchema",
    "state": "state",
    "notify": "notify",
    "timeout_ms": "timeoutMs",
    "workflow_id": "workflowId",
    "key": "key",
    "on_timeout": "onTimeout",
    "remind_after": "remindAfter",
    "escalate_after": "escalateAfter",
    "escalate_to": "escalateTo",
}
# The options a `ladder` also sets (LadderFields' fields), under their wire names above.
_LADDER_OPTIONS = ("on_timeout", "remind_after", "escalate_after", "escalate_to")


def create_body(session_id: str, prompt: str, options: InterruptOptions) -> dict[str, Any]:
    """The POST /api/v1/interrupts body (baton/api/routes_interrupts.py CreateInterruptRequest): the
    ladder, the quorum and the gated action through the API's own models (`baton.client.pauses`)."""
    ladder, approval, action = options.get("ladder"), options.get("approval"), options.get("action")
    given: dict[str, Any] = {k: v for k, v in options.items() if k not in ("ladder", "approval", "action")}
    unknown = sorted(set(given) - set(_WIRE_NAMES))
    if unknown:
        raise TypeError(f"unknown interrupt option(s): {', '.join(unknown)}")
    body: dict[str, Any] = {"sessionId": session_id, "prompt": prompt}
    body.update({_WIRE_NAMES[k]: v for k, v in given.items() if v is not None})
    if ladder is not None:
        twice = sorted(k for k in _LADDER_OPTIONS if given.get(k) is not None)
        if twice:
            raise TypeError(f"the ladder is given twice: in `ladder` and as {', '.join(twice)}; give it once")
        body.update({_WIRE_NAMES[k]: v for k, v in ladder_fields(ladder).items()})
    return body | approval_body(approval) | action_body(action)


def clamp_poll_seconds(poll_seconds: float) -> float:
    """The long-poll window actually requested: within 5..20 s (a larger value would be a 422)."""
    return max(MIN_POLL_SECONDS, min(float(poll_seconds), MAX_POLL_SECONDS))


@dataclass(frozen=True)
class InterruptResult:
    """What a resumed interrupt gives its waiter: the validated value and the (edited) state."""

    interrupt_id: str
    session_id: str
    value: Any
    state: dict[str, Any] | None
    state_edits: list[str] = field(default_factory=list)
    resolved_by: str | None = None
    resolved_at: str | None = None
    record: InterruptView = field(default_factory=InterruptView, repr=False)


def settle(record: Record) -> InterruptResult | None:
    """None while pending; the result when answered; raises when cancelled or timed out."""
    view = record if isinstance(record, InterruptView) else InterruptView.model_validate(record)
    if view.status == "pending":
        return None
    if view.status == "answered":
        return InterruptResult(
            interrupt_id=view.interrupt_id,
            session_id=view.session_id,
            value=view.value,
            state=view.edited_state,
            state_edits=list(view.state_edits or []),
            resolved_by=view.resolved_by,
            resolved_at=view.resolved_at,
            record=view,
        )
    details = {"interrupt_id": view.interrupt_id, "reason": view.reason, "interrupt": view.wire()}
    if view.timed_out:
        raise InterruptTimeoutError(
            f"interrupt {view.interrupt_id} timed out after {view.timeout_ms} ms without a resume",
            details=details,
        )
    raise InterruptCancelledError(
        f"interrupt {view.interrupt_id} was cancelled by {view.resolved_by}: {view.reason}",
        details=details,
    )


def _transient(err: BatonError) -> bool:
    return isinstance(err, ApiUnavailableError) or err.http_status >= 500


def long_poll(
    poll: Callable[[float], Polled],
    settle: Callable[[Polled], Settled | None],
    *,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> Settled:
    """Loop on `poll(wait_seconds)` (one long-poll request) until `settle` gives a result (or raises):
    at most one request per MIN_CYCLE_SECONDS while idle, transient failures retried with backoff.
    The interrupt waiter and the blocking ask's (baton/client/asks.py) share it."""
    poll_seconds = clamp_poll_seconds(poll_seconds)
    backoff = 1.0
    while True:
        started = monotonic()
        try:
            polled = poll(poll_seconds)
        except BatonError as err:
            if not _transient(err):
                raise
            sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
            continue
        backoff = 1.0
        result = settle(polled)
        if result is not None:
            return result
        elapsed = monotonic() - started
        if elapsed < MIN_CYCLE_SECONDS:
            sleep(MIN_CYCLE_SECONDS - elapsed)


async def long_poll_async(
    poll: Callable[[float], Awaitable[Polled]],
    settle: Callable[[Polled], Settled | None],
    *,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
    monotonic: Callable[[], float] = time.monotonic,
) -> Settled:
    """`long_poll` for asyncio: the event loop stays free while the long-poll is outstanding."""
    poll_seconds = clamp_poll_seconds(poll_seconds)
    backoff = 1.0
    while True:
        started = monotonic()
        try:
            polled = await poll(poll_seconds)
        except BatonError as err:
            if not _transient(err):
                raise
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
            continue
        backoff = 1.0
        result = settle(polled)
        if result is not None:
            return result
        elapsed = monotonic() - started
        if elapsed < MIN_CYCLE_SECONDS:
            await asyncio.sleep(MIN_CYCLE_SECONDS - elapsed)


def wait_for(
    poll: Callable[[float], Record],
    *,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> InterruptResult:
    """Loop on `poll(wait_seconds)` (one long-poll request) until the interrupt settles."""
    return long_poll(poll, settle, poll_seconds=poll_seconds, sleep=sleep, monotonic=monotonic)


async def wait_for_async(
    poll: Callable[[float], Awaitable[Record]],
    *,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
    monotonic: Callable[[], float] = time.monotonic,
) -> InterruptResult:
    """`wait_for` for asyncio: the event loop stays free while the long-poll is outstanding."""
    return await long_poll_async(poll, settle, poll_seconds=poll_seconds, monotonic=monotonic)
