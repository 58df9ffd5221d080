"""The SDK side of the blocking ask (`Client.ask_user`, baton/services/asks.py): waiting for the
operator's answer the way interrupts wait (baton/client/interrupts.py): long-polls of
`GET /api/runs/{run}/asks/{id}?wait_seconds=<5..20>`, at most one idle request per 5 s, transient
failures retried with backoff (1 s, 2 s, … 30 s). The ask's own deadline (`timeout_seconds`, mandatory)
bounds the wait: after it the server marks the ask timed_out and the waiter raises AskTimeoutError."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from baton.client.interrupts import long_poll, long_poll_async
from baton.domain.ladder import LadderFields
from baton.errors import BatonError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from baton.contracts import BlockingAskView


class AskTimeoutError(BatonError):
    """The blocking ask reached its deadline unanswered; `details["ask"]` is its record."""

    code = "ask_timed_out"
    http_status = 408


class AskCancelledError(BatonError):
    """The blocking ask was cancelled (its run was closed)."""

    code = "ask_cancelled"
    http_status = 410


def settle(view: BlockingAskView) -> BlockingAskView | None:
    """None while pending; the answered record; raises when it timed out or was cancelled."""
    if view.status == "pending":
        return None
    if view.status == "answered":
        return view
    details = {"ask": view.model_dump(mode="json")}
    if view.status == "timed_out":
        raise AskTimeoutError(
            f"ask {view.interaction_id} timed out at {view.expires_at} without an answer", details=details
        )
    raise AskCancelledError(f"ask {view.interaction_id} was {view.status}", details=details)


def wait_for_ask(
    poll: Callable[[float], BlockingAskView],
    *,
    poll_seconds: float = 20.0,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> BlockingAskView:
    return long_poll(poll, settle, poll_seconds=poll_seconds, sleep=sleep, monotonic=monotonic)


async def wait_for_ask_async(
    poll: Callable[[float], Awaitable[BlockingAskView]],
    *,
    poll_seconds: float = 20.0,
    monotonic: Callable[[], float] = time.monotonic,
) -> BlockingAskView:
    return await long_poll_async(poll, settle, poll_seconds=poll_seconds, monotonic=monotonic)


def ladder_body(ladder: LadderFields | dict[str, Any] | None, **fields: Any) -> dict[str, Any]:
    """A request body: the ladder's wire fields (remind_after, escalate_after, escalate_to, on_timeout,
    checked here first: a malformed one raises pydantic's ValidationError before any request), then each
    of `fields` that is not None."""
    body = {} if ladder is None else LadderFields.model_validate(ladder).model_dump(mode="json", exclude_defaults=True)
    return body | {k: v for k, v in fields.items() if v is not None}
