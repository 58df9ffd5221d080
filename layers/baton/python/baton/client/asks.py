"""The SDK side of the blocking ask (`Client.create_ask`, `Client.ask_user`, baton/services/asks.py):
the calls (`AskCalls`, inherited by `baton.Client`) and waiting for the operator's answer the way
interrupts wait (baton/client/interrupts.py): long-polls of `GET /api/runs/{run}/asks/{id}?wait_seconds=
<5..20>`, at most one idle request per 5 s, transient failures retried with backoff (1 s, 2 s, … 30 s).
The ask's own deadline (`timeout_seconds`, mandatory) bounds the wait: after it the server marks the ask
timed_out (or takes its declared default) and the waiter raises AskTimeoutError (or returns the default).
The ask's ladder and quorum are the REST body's own models (`baton.client.pauses`)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from baton.client.base import ClientBase
from baton.client.interrupts import long_poll, long_poll_async
from baton.client.pauses import body_of, ladder_fields, request_of
from baton.client.transport import seg
from baton.contracts import BlockingAskRequest, BlockingAsks, BlockingAskView
from baton.errors import BatonError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from baton.client.pauses import ApprovalArg, LadderArg
    from baton.domain.ladder import OnTimeout


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


class AskCalls(ClientBase):
    def create_ask(  # noqa: PLR0913 - keyword form of post_ask: builds the API's BlockingAskRequest
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        timeout_seconds: int,
        options: list[str] | None = None,
        notify: list[str] | None = None,
        on_timeout: OnTimeout | dict[str, Any] | None = None,
        ladder: LadderArg = None,
        approval: ApprovalArg = None,
    ) -> BlockingAskView:
        """Post a blocking ask (answered with `baton resume --run-id ...`). `ladder` (`LadderFields`:
        remind_after, escalate_after + escalate_to, on_timeout) is walked by the ask's own timer;
        `on_timeout` may also be given on its own (`{"default": {answers}}`, as in `ask_user`). `approval`
        (`ApprovalPolicy` or its JSON object) needs a quorum: each resume votes under `answers.decision`."""
        given = {"options": options, "notify": notify, "timeout_seconds": timeout_seconds}
        ladder = ladder_fields(ladder, on_timeout=on_timeout)
        asked = request_of(BlockingAskRequest, ladder, approval, node=node, question=question, **given)
        return self.post_ask(run_id, asked)

    def post_ask(self, run_id: str, request: BlockingAskRequest) -> BlockingAskView:
        """`create_ask` with the API's own request model (`baton.contracts.BlockingAskRequest`)."""
        path = f"/api/runs/{seg(run_id)}/asks"
        return BlockingAskView.model_validate(self.request("POST", path, json_body=body_of(request)))

    def get_ask(self, run_id: str, interaction_id: str, *, wait_seconds: float = 0) -> BlockingAskView:
        path = f"/api/runs/{seg(run_id)}/asks/{seg(interaction_id)}"
        return BlockingAskView.model_validate(self._transport.poll(path, wait_seconds))

    def pending_asks(self, run_id: str) -> list[BlockingAskView]:
        """The run's pending blocking asks (an agent's `ask_user`, a hosted run's pause)."""
        return BlockingAsks.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/asks")).asks

    def ask_user(  # noqa: PLR0913 - create_ask's fields and the waiter's poll
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        timeout_seconds: int,
        options: list[str] | None = None,
        notify: list[str] | None = None,
        poll_seconds: float = 20.0,
        on_timeout: OnTimeout | dict[str, Any] | None = None,
        ladder: LadderArg = None,
        approval: ApprovalArg = None,
    ) -> BlockingAskView:
        """The hard stop: ask and block until an operator answers (`.answers`, `.answered_by`). Bounded:
        at `timeout_seconds` raises AskTimeoutError, or with `on_timeout={"default": ...}` returns the
        default (`.outcome == "timed_out_default"`, `.answered_by` None). Long-polls like `interrupt`.
        `ladder` and `approval` as in `create_ask`."""
        fields: dict[str, Any] = {"on_timeout": on_timeout, "ladder": ladder, "approval": approval}
        asked = self.create_ask(
            run_id, node, question, timeout_seconds=timeout_seconds, options=options, notify=notify, **fields
        )
        return wait_for_ask(
            lambda wait: self.get_ask(run_id, asked.interaction_id, wait_seconds=wait), poll_seconds=poll_seconds
        )

    async def ask_user_asyncio(  # noqa: PLR0913 - as ask_user
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        timeout_seconds: int,
        options: list[str] | None = None,
        notify: list[str] | None = None,
        poll_seconds: float = 20.0,
        on_timeout: OnTimeout | dict[str, Any] | None = None,
        ladder: LadderArg = None,
        approval: ApprovalArg = None,
    ) -> BlockingAskView:
        """`ask_user` for asyncio code (the event loop stays free during the long-polls). Not to be confused
        with `ask_async`, the non-blocking question (`ask_user_async`)."""
        fields: dict[str, Any] = {"on_timeout": on_timeout, "ladder": ladder, "approval": approval}
        asked = await asyncio.to_thread(
            self.create_ask,
            run_id,
            node,
            question,
            timeout_seconds=timeout_seconds,
            options=options,
            notify=notify,
            **fields,
        )
        async with self._transport.async_session() as session:
            path = f"/api/runs/{seg(run_id)}/asks/{seg(asked.interaction_id)}"

            async def poll(wait: float) -> BlockingAskView:
                return BlockingAskView.model_validate(await session.poll(path, wait))

            return await wait_for_ask_async(poll, poll_seconds=poll_seconds)
