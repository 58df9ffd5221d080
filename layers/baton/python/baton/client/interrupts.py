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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from baton.errors import (
    BatonError,
    InterruptCancelledError,
    InterruptTimeoutError,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

DEFAULT_POLL_SECONDS = 20.0
MIN_POLL_SECONDS = 5.0  # poll_seconds is clamped to MIN..MAX_POLL_SECONDS (the server accepts waitSeconds <= 20)
MAX_POLL_SECONDS = 20.0
MIN_CYCLE_SECONDS = 5.0  # never more than one idle request per this many seconds, whatever the server does
MAX_BACKOFF_SECONDS = 30.0


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
    record: dict[str, Any] = field(default_factory=dict, repr=False)


def settle(record: dict[str, Any]) -> InterruptResult | None:
    """None while pending; the result when answered; raises when cancelled or timed out."""
    status = record.get("status")
    if status == "pending":
        return None
    if status == "answered":
        return InterruptResult(
            interrupt_id=record["id"],
            session_id=record["sessionId"],
            value=record.get("value"),
            state=record.get("editedState"),
            state_edits=list(record.get("stateEdits") or []),
            resolved_by=record.get("resolvedBy"),
            resolved_at=record.get("resolvedAt"),
            record=record,
        )
    details = {"interrupt_id": record.get("id"), "reason": record.get("reason"), "interrupt": record}
    if record.get("timedOut"):
        raise InterruptTimeoutError(
            f"interrupt {record.get('id')} timed out after {record.get('timeoutMs')} ms without a resume",
            details=details,
        )
    raise InterruptCancelledError(
        f"interrupt {record.get('id')} was cancelled by {record.get('resolvedBy')}: {record.get('reason')}",
        details=details,
    )


def _transient(err: BatonError) -> bool:
    from baton.client.sdk import ApiUnavailableError

    return isinstance(err, ApiUnavailableError) or err.http_status >= 500


def wait_for(
    poll: Callable[[float], dict[str, Any]],
    *,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> InterruptResult:
    """Loop on `poll(wait_seconds)` (one long-poll request) until the interrupt settles."""
    poll_seconds = clamp_poll_seconds(poll_seconds)
    backoff = 1.0
    while True:
        started = monotonic()
        try:
            record = poll(poll_seconds)
        except BatonError as err:
            if not _transient(err):
                raise
            sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
            continue
        backoff = 1.0
        result = settle(record)
        if result is not None:
            return result
        elapsed = monotonic() - started
        if elapsed < MIN_CYCLE_SECONDS:
            sleep(MIN_CYCLE_SECONDS - elapsed)


async def wait_for_async(
    poll: Callable[[float], Awaitable[dict[str, Any]]],
    *,
    poll_seconds: float = DEFAULT_POLL_SECONDS,
    monotonic: Callable[[], float] = time.monotonic,
) -> InterruptResult:
    """`wait_for` for asyncio: the event loop stays free while the long-poll is outstanding."""
    poll_seconds = clamp_poll_seconds(poll_seconds)
    backoff = 1.0
    while True:
        started = monotonic()
        try:
            record = await poll(poll_seconds)
        except BatonError as err:
            if not _transient(err):
                raise
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
            continue
        backoff = 1.0
        result = settle(record)
        if result is not None:
            return result
        elapsed = monotonic() - started
        if elapsed < MIN_CYCLE_SECONDS:
            await asyncio.sleep(MIN_CYCLE_SECONDS - elapsed)


def create_body(
    *,
    session_id: str,
    prompt: str,
    schema: dict[str, Any] | None = None,
    json_schema: dict[str, Any] | None = None,
    state: dict[str, Any] | None = None,
    notify: list[str] | None = None,
    timeout_ms: int | None = None,
    workflow_id: str | None = None,
    key: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"sessionId": session_id, "prompt": prompt}
    optional = {
        "schema": schema,
        "jsonSchema": json_schema,
        "state": state,
        "notify": notify,
        "timeoutMs": timeout_ms,
        "workflowId": workflow_id,
        "key": key,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    return body
