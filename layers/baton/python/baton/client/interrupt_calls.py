"""The SDK's interrupt calls (`baton.Client` inherits them): create, read (long-poll), list, resume,
cancel, and the blocking `interrupt` / `interrupt_async` with their waiters (baton/client/interrupts.py).
The options (`InterruptOptions`) carry the ladder and the quorum as the REST body's own models."""

from __future__ import annotations

from typing import Any, Unpack

from baton.client.base import ClientBase
from baton.client.interrupts import InterruptOptions, InterruptResult, create_body, wait_for, wait_for_async
from baton.client.transport import seg
from baton.contracts import InterruptCancelled, InterruptPage, InterruptResumed, InterruptView
from baton.errors import InterruptValidationError, ValidationFailedError

PAGE_SIZE = 200  # the largest page GET /api/v1/interrupts serves
MAX_WAIT_SECONDS = 20.0  # the server's long-poll limit


class InterruptCalls(ClientBase):
    def create_interrupt(self, *, session_id: str, prompt: str, **options: Unpack[InterruptOptions]) -> InterruptView:
        """POST /api/v1/interrupts; options: schema, json_schema, state, notify, timeout_ms, workflow_id, key,
        ladder (`LadderFields`; or remind_after, escalate_after, escalate_to, on_timeout one by one),
        approval (`ApprovalPolicy`) and action (`GateAction`: the policy decides it at creation)."""
        body = create_body(session_id, prompt, options)
        return InterruptView.model_validate(self.request("POST", "/api/v1/interrupts", json_body=body))

    def get_interrupt(self, interrupt_id: str, *, wait_seconds: float = 0) -> InterruptView:
        """One interrupt; with wait_seconds (clamped to <= 20) the server holds the request until it settles."""
        wait_seconds = max(0.0, min(float(wait_seconds), MAX_WAIT_SECONDS))
        return InterruptView.model_validate(
            self._transport.poll(f"/api/v1/interrupts/{seg(interrupt_id)}", wait_seconds)
        )

    def list_interrupts(
        self, *, status: str | None = None, session_id: str | None = None, max_items: int | None = None
    ) -> list[InterruptView]:
        """Every matching interrupt (follows the `next` pages), or at most `max_items`."""
        params: dict[str, Any] = {k: v for k, v in (("status", status), ("sessionId", session_id)) if v is not None}
        params["limit"] = PAGE_SIZE
        found: list[InterruptView] = []
        while max_items is None or len(found) < max_items:
            page = InterruptPage.model_validate(self.request("GET", "/api/v1/interrupts", params=params))
            found.extend(page.interrupts)
            if not page.next:
                break
            params["next"] = page.next
        return found if max_items is None else found[:max_items]

    def resume_interrupt(
        self,
        interrupt_id: str,
        input: Any = None,
        state_edits: list[str] | None = None,
        *,
        operator: str | None = None,
        state_version: str | None = None,
    ) -> InterruptResumed:
        """Resume with a value and `path=value` state edits; InterruptValidationError (422) names the failing
        path and leaves the interrupt open for another try. `state_version`: the `InterruptView.state_version`
        the decision was made on (a ConflictError naming the current one when the state has changed since).
        `delivery == "pending"` (HTTP 202): stored, but its send to the workflow failed; the reconciler
        delivers it."""
        body: dict[str, Any] = {"input": input, "stateEdits": list(state_edits or [])}
        if state_version:
            body["stateVersion"] = state_version
        if operator:
            body["operator"] = operator
        try:
            resumed = self.request("POST", f"/api/v1/interrupts/{seg(interrupt_id)}/resume", json_body=body)
        except ValidationFailedError as err:
            raise InterruptValidationError(err.message, details=err.details) from err
        return InterruptResumed.model_validate(resumed)

    def cancel_interrupt(self, interrupt_id: str, reason: str, *, operator: str | None = None) -> InterruptCancelled:
        body: dict[str, Any] = {"reason": reason}
        if operator:
            body["operator"] = operator
        cancelled = self.request("POST", f"/api/v1/interrupts/{seg(interrupt_id)}/cancel", json_body=body)
        return InterruptCancelled.model_validate(cancelled)

    def wait_interrupt(self, interrupt_id: str, *, poll_seconds: float = 20.0) -> InterruptResult:
        """Block until the interrupt settles (long-poll, one idle request per ~poll_seconds). Returns an
        InterruptResult; raises InterruptTimeoutError / InterruptCancelledError. Works after a restart."""
        return wait_for(lambda wait: self.get_interrupt(interrupt_id, wait_seconds=wait), poll_seconds=poll_seconds)

    def interrupt(
        self, *, session_id: str, prompt: str, poll_seconds: float = 20.0, **options: Unpack[InterruptOptions]
    ) -> InterruptResult:
        """Pause: create an interrupt and block until an operator resumes it. Returns InterruptResult
        (.value, .state = the edited snapshot). With `key`, a restarted process calling this again gets
        the same interrupt (and its answer if it arrived meanwhile) instead of a new one. Without
        `timeout_ms` the server's default deadline applies (24 hours; then InterruptTimeoutError);
        `poll_seconds` is clamped to 5..20 s. Options as for `create_interrupt`."""
        record = self.create_interrupt(session_id=session_id, prompt=prompt, **options)
        return self.wait_interrupt(record.interrupt_id, poll_seconds=poll_seconds)

    async def wait_interrupt_async(self, interrupt_id: str, *, poll_seconds: float = 20.0) -> InterruptResult:
        """`wait_interrupt` for asyncio (the event loop stays free during the long-poll)."""
        async with self._transport.async_session() as session:

            async def poll(wait: float) -> InterruptView:
                return InterruptView.model_validate(await session.poll(f"/api/v1/interrupts/{seg(interrupt_id)}", wait))

            return await wait_for_async(poll, poll_seconds=poll_seconds)

    async def interrupt_async(
        self, *, session_id: str, prompt: str, poll_seconds: float = 20.0, **options: Unpack[InterruptOptions]
    ) -> InterruptResult:
        """`interrupt` for asyncio: `result = await client.interrupt_async(session_id=..., prompt=..., ...)`."""
        async with self._transport.async_session() as session:
            body = create_body(session_id, prompt, options)
            record = InterruptView.model_validate(await session.call("POST", "/api/v1/interrupts", json_body=body))
        return await self.wait_interrupt_async(record.interrupt_id, poll_seconds=poll_seconds)
