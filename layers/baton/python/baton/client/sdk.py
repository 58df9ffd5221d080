"""`baton.Client`: the SDK agents and the CLI use to talk to a Baton API (local stack or deployed).

Finds the API without flags: explicit arguments, then BATON_API_URL / BATON_TOKEN, then the local
stack's `.baton/local.json` (searched from the current directory upwards). Every call returns the
route's response model from `baton.contracts` (fields as attributes; `result["key"]` reads the wire
name too); an error answer raises the `baton.errors` class of its status."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Unpack

from baton.client.asks import AskCancelledError, AskTimeoutError, ladder_body, wait_for_ask, wait_for_ask_async
from baton.client.audit import AuditCalls
from baton.client.claims import ClaimCalls
from baton.client.interrupts import InterruptOptions, InterruptResult, create_body, wait_for, wait_for_async
from baton.client.transport import ApiUnavailableError, Transport, decode, find_local_state, resolve_endpoint, seg
from baton.contracts import (
    AnswerResult,
    AskResult,
    AwaitAnswered,
    AwaitPending,
    BlockingAsks,
    BlockingAskView,
    CollectedAnswer,
    DrainResult,
    EventPage,
    InterruptCancelled,
    InterruptPage,
    InterruptResumed,
    InterruptView,
    MessageView,
    PendingQuestions,
    QuestionView,
    ResumeResult,
    ReviewActionResult,
    ReviewView,
    RunView,
    StartedRun,
)
from baton.domain.approval import ApprovalPolicy
from baton.errors import BatonError, InterruptValidationError, ValidationFailedError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ApiUnavailableError",
    "AskCancelledError",
    "AskTimeoutError",
    "AwaitTimeoutError",
    "Client",
    "find_local_state",
    "resolve_endpoint",
]

PAGE_SIZE = 200  # the largest page GET /api/v1/interrupts serves
MAX_WAIT_SECONDS = 20.0  # the server's long-poll limit


class AwaitTimeoutError(BatonError):
    """`await_answers(timeout=...)` ran out of time; `details["pending"]` lists the unanswered question ids."""

    code = "await_timed_out"
    http_status = 408


def _await_timeout(run_id: str, timeout: float, pending: AwaitPending) -> AwaitTimeoutError:
    return AwaitTimeoutError(
        f"{len(pending.pending)} question(s) still unanswered after {timeout}s",
        details={"run_id": run_id, "pending": pending.pending},
    )


class Client(ClaimCalls, AuditCalls):
    def __init__(
        self,
        api_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._transport = Transport(
            api_url, token, timeout=timeout, transport=transport, async_transport=async_transport
        )
        self.api_url, self.token = self._transport.api_url, self._transport.token

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None) -> Any:
        """Any route, raw: the decoded JSON body (errors raise as for the typed calls)."""
        return self._transport.call(method, path, json_body=json_body, params=params)

    # ---- runs ----------------------------------------------------------------------------------
    def start_run(self, workflow: str, input: dict[str, Any] | None = None, *, run_id: str | None = None) -> StartedRun:
        body: dict[str, Any] = {"workflow": workflow, "input": input or {}}
        if run_id:
            body["run_id"] = run_id
        return StartedRun.model_validate(self.request("POST", "/api/runs", json_body=body))

    def get_run(self, run_id: str) -> RunView:
        return RunView.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}"))

    def stop_run(self, run_id: str, *, reason: str | None = None) -> RunView:
        """Stop a hosted run: it ends aborted, `run_aborted` recorded before this returns."""
        body = {"reason": reason} if reason else {}
        return RunView.model_validate(self.request("POST", f"/api/runs/{seg(run_id)}/stop", json_body=body))

    def events(self, run_id: str, *, after: str | None = None, limit: int = 100) -> EventPage:
        params: dict[str, Any] = {"limit": limit}
        if after:
            params["after"] = after
        return EventPage.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/events", params=params))

    def _resume(self, run_id: str, answers: dict[str, Any], node: str | None) -> Any:
        body: dict[str, Any] = {"answers": answers}
        if node:
            body["node"] = node
        return self.request("POST", f"/api/runs/{seg(run_id)}/resume", json_body=body)

    def resume(self, run_id: str, answers: dict[str, Any], *, node: str | None = None) -> ResumeResult:
        result = self._resume(run_id, answers, node)
        if isinstance(result, dict) and "action" in result:  # a review gate took it as an action
            return ReviewActionResult.model_validate(result)
        return ResumeResult.model_validate(result)

    # ---- async questions -----------------------------------------------------------------------
    def ask_async(  # noqa: PLR0913 - the API's AskRequest, field by field (as QuestionService.ask)
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        options: list[str] | None = None,
        allow_free_text: bool | None = None,
        map_item: int | str | None = None,
        approval: ApprovalPolicy | dict[str, Any] | None = None,
        timeout_seconds: int | None = None,
        ladder: dict[str, Any] | None = None,
    ) -> AskResult:
        """ask_user_async: post a question for `node` and return at once (its interaction_id, a message).
        `approval` makes it a quorum question (`{"approvals": 2, "approvers": ["alice", "group:release"]}`):
        each operator's answer is a vote; `answer` says `pending` with the count until it is met. A
        `ladder` ({"remind_after": 600, "on_timeout": {"default": "no"}}) needs its `timeout_seconds`."""
        given = {"options": options, "allow_free_text": allow_free_text, "map_item": map_item}
        body = ladder_body(ladder, node=node, question=question, timeout_seconds=timeout_seconds, **given)
        if approval is not None:
            body["approval"] = ApprovalPolicy.model_validate(approval).model_dump(exclude_defaults=True)
        return AskResult.model_validate(self.request("POST", f"/api/runs/{seg(run_id)}/questions", json_body=body))

    def pending_questions(self, run_id: str) -> list[QuestionView]:
        found = PendingQuestions.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/interactions/pending"))
        return found.pending

    def answer(self, run_id: str, interaction_id: str, answer: Any) -> AnswerResult:
        """Answer a question (queued, resumed, released); ConflictError (409) with the winning answer if answered."""
        path = f"/api/runs/{seg(run_id)}/interactions/{seg(interaction_id)}/answer"
        return AnswerResult.model_validate(self.request("POST", path, json_body={"answer": answer}))

    def drain_messages(self, run_id: str, node: str) -> list[MessageView]:
        """The node's queued messages (answers arrive as `[Answer to question <id>] Q: ... — A: ...`), once each."""
        drained = self.request("POST", f"/api/runs/{seg(run_id)}/nodes/{seg(node)}/messages/drain")
        return DrainResult.model_validate(drained).messages

    def await_once(
        self, run_id: str, *, timeout: float, from_node: str | None = None, ladder: dict[str, Any] | None = None
    ) -> AwaitAnswered | AwaitPending:
        """One call of the await tool: the answers (200) or the pending ids (202); never blocks (`ladder`: README)."""
        body = ladder_body(ladder, timeout_seconds=max(1, int(timeout + 0.999)), **{"from": from_node or None})
        resp = self._transport.send("POST", f"/api/runs/{seg(run_id)}/await", json_body=body)
        result = decode(resp)
        if resp.status_code == 200:
            return AwaitAnswered.model_validate(result)
        return AwaitPending.model_validate(result)

    def await_answers(
        self, run_id: str, *, timeout: float, from_node: str | None = None, poll_interval: float = 1.0
    ) -> list[CollectedAnswer]:
        """Block until no question in scope is pending; return its answers (interaction_id, node,
        question, answer). The timeout is mandatory; on expiry raises AwaitTimeoutError listing the pending ids."""
        deadline = time.monotonic() + timeout
        while True:
            outcome = self.await_once(run_id, timeout=timeout, from_node=from_node)
            if isinstance(outcome, AwaitAnswered):
                return outcome.answers
            left = deadline - time.monotonic()
            if left <= 0:
                raise _await_timeout(run_id, timeout, outcome)
            time.sleep(min(poll_interval, left))

    async def await_answers_async(
        self, run_id: str, *, timeout: float, from_node: str | None = None, poll_interval: float = 1.0
    ) -> list[CollectedAnswer]:
        """`await_answers` for asyncio code: the polling sleeps without blocking the event loop."""
        deadline = time.monotonic() + timeout
        while True:
            outcome = await asyncio.to_thread(self.await_once, run_id, timeout=timeout, from_node=from_node)
            if isinstance(outcome, AwaitAnswered):
                return outcome.answers
            left = deadline - time.monotonic()
            if left <= 0:
                raise _await_timeout(run_id, timeout, outcome)
            await asyncio.sleep(min(poll_interval, left))

    # ---- ask_user: the blocking ask (baton/services/asks.py, baton/client/asks.py) ---------------
    def create_ask(
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        timeout_seconds: int,
        options: list[str] | None = None,
        notify: list[str] | None = None,
        on_timeout: dict[str, Any] | None = None,
        ladder: dict[str, Any] | None = None,
    ) -> BlockingAskView:
        """Post a blocking ask (answered with `baton resume --run-id ...`; `on_timeout` as in `ask_user`)."""
        given = {"options": options, "notify": notify, "on_timeout": on_timeout, "timeout_seconds": timeout_seconds}
        body = ladder_body(ladder, node=node, question=question, **given)
        return BlockingAskView.model_validate(self.request("POST", f"/api/runs/{seg(run_id)}/asks", json_body=body))

    def get_ask(self, run_id: str, interaction_id: str, *, wait_seconds: float = 0) -> BlockingAskView:
        path = f"/api/runs/{seg(run_id)}/asks/{seg(interaction_id)}"
        return BlockingAskView.model_validate(self._transport.poll(path, wait_seconds))

    def pending_asks(self, run_id: str) -> list[BlockingAskView]:
        """The run's pending blocking asks (an agent's `ask_user`, a hosted run's pause)."""
        return BlockingAsks.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/asks")).asks

    def ask_user(
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        timeout_seconds: int,
        options: list[str] | None = None,
        notify: list[str] | None = None,
        poll_seconds: float = 20.0,
        on_timeout: dict[str, Any] | None = None,
    ) -> BlockingAskView:
        """The hard stop: ask and block until an operator answers (`.answers`, `.answered_by`). Bounded:
        at `timeout_seconds` raises AskTimeoutError, or with `on_timeout={"default": ...}` returns the
        default (`.outcome == "timed_out_default"`, `.answered_by` None). Long-polls like `interrupt`."""
        bounds: dict[str, Any] = {"timeout_seconds": timeout_seconds, "on_timeout": on_timeout}
        asked = self.create_ask(run_id, node, question, options=options, notify=notify, **bounds)
        return wait_for_ask(
            lambda wait: self.get_ask(run_id, asked.interaction_id, wait_seconds=wait), poll_seconds=poll_seconds
        )

    async def ask_user_asyncio(
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        timeout_seconds: int,
        options: list[str] | None = None,
        notify: list[str] | None = None,
        poll_seconds: float = 20.0,
        on_timeout: dict[str, Any] | None = None,
    ) -> BlockingAskView:
        """`ask_user` for asyncio code (the event loop stays free during the long-polls). Not to be confused
        with `ask_async`, the non-blocking question (`ask_user_async`)."""
        bounds: dict[str, Any] = {"timeout_seconds": timeout_seconds, "on_timeout": on_timeout}
        asked = await asyncio.to_thread(
            self.create_ask, run_id, node, question, options=options, notify=notify, **bounds
        )
        async with self._transport.async_session() as session:
            path = f"/api/runs/{seg(run_id)}/asks/{seg(asked.interaction_id)}"

            async def poll(wait: float) -> BlockingAskView:
                return BlockingAskView.model_validate(await session.poll(path, wait))

            return await wait_for_ask_async(poll, poll_seconds=poll_seconds)

    async def drain_messages_async(self, run_id: str, node: str) -> list[MessageView]:
        """`drain_messages` for asyncio code."""
        return await asyncio.to_thread(self.drain_messages, run_id, node)

    # ---- review gate ---------------------------------------------------------------------------
    def review(self, run_id: str, *, gate: str | None = None) -> ReviewView:
        """The run's review: thread, verdict, diff stats, review URL, merge status, allowed actions."""
        params = {"gate": gate} if gate else None
        return ReviewView.model_validate(self.request("GET", f"/api/runs/{seg(run_id)}/review", params=params))

    def review_action(
        self,
        run_id: str,
        action: str,
        *,
        reply: str | None = None,
        message: str | None = None,
        merge_strategy: str | None = None,
        gate: str | None = None,
    ) -> ReviewActionResult:
        """reply | approve_merge | force_merge | request_changes, sent as the reserved resume keys."""
        answers: dict[str, Any] = {"__review_action": action}
        for key, value in (
            ("__review_reply", reply),
            ("__review_message", message),
            ("__review_merge_strategy", merge_strategy),
        ):
            if value is not None:
                answers[key] = value
        return ReviewActionResult.model_validate(self._resume(run_id, answers, gate))

    # ---- interrupts (baton.client.interrupts) --------------------------------------------------
    def create_interrupt(self, *, session_id: str, prompt: str, **options: Unpack[InterruptOptions]) -> InterruptView:
        """POST /api/v1/interrupts; options: schema, json_schema, state, notify, timeout_ms, workflow_id, key."""
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
        self, interrupt_id: str, input: Any = None, state_edits: list[str] | None = None, *, operator: str | None = None
    ) -> InterruptResumed:
        """Resume with a value and `path=value` state edits; InterruptValidationError (422) names the failing
        path and leaves the interrupt open for another try."""
        body: dict[str, Any] = {"input": input, "stateEdits": list(state_edits or [])}
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
