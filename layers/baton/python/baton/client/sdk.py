"""`baton.Client`: the SDK agents and the CLI use to talk to a Baton API (local stack or deployed).

Finds the API without flags: explicit arguments, then BATON_API_URL / BATON_TOKEN, then the local
stack's `.baton/local.json` (searched from the current directory upwards)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from baton.client.sigv4 import SigV4Auth, is_aws_api, region_of
from baton.errors import (
    BadRequestError,
    BatonError,
    ConflictError,
    ForbiddenError,
    GoneError,
    NotFoundError,
    PayloadTooLargeError,
    UnauthorizedError,
    ValidationFailedError,
)

_BY_STATUS: dict[int, type[BatonError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    413: PayloadTooLargeError,
    422: ValidationFailedError,
}


class ApiUnavailableError(BatonError):
    code = "api_unavailable"


class AwaitTimeoutError(BatonError):
    """`await_answers(timeout=...)` ran out of time; `details["pending"]` lists the unanswered question ids."""

    code = "await_timed_out"
    http_status = 408


def _seg(value: str) -> str:
    """One URL path segment: an id with '/', '?' or '#' must not change the route it names."""
    return quote(str(value), safe="")


def find_local_state(start: Path | None = None) -> dict[str, Any] | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / ".baton" / "local.json"
        if candidate.exists():
            data: dict[str, Any] = json.loads(candidate.read_text())
            return data
    return None


def resolve_endpoint(api_url: str | None = None, token: str | None = None) -> tuple[str, str | None]:
    api_url = api_url or os.environ.get("BATON_API_URL")
    token = token or os.environ.get("BATON_TOKEN")
    if not api_url:
        state = find_local_state()
        if state is None:
            raise ApiUnavailableError(
                "no Baton API configured: start the local stack with `baton dev` (it writes "
                ".baton/local.json), or set BATON_API_URL (a deployed API signs with your AWS credentials; "
                "set BATON_TOKEN for a bearer-token API)"
            )
        api_url, token = state["api_url"], token or state.get("token")
    return api_url.rstrip("/"), token


class Client:
    def __init__(
        self,
        api_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.api_url, self.token = resolve_endpoint(api_url, token)
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        # No bearer token and a deployed API Gateway URL: sign with the AWS credential chain (IAM auth).
        self._auth: httpx.Auth | None = None
        if not self.token and is_aws_api(self.api_url):
            self._auth = SigV4Auth(region_of(self.api_url) or os.environ.get("AWS_REGION", "us-east-1"))
        self._http = httpx.Client(
            base_url=self.api_url, headers=headers, timeout=timeout, transport=transport, auth=self._auth
        )
        self._async_transport = async_transport  # for the *_async interrupt waiters

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None) -> Any:
        try:
            resp = self._http.request(method, path, json=json_body, params=params)
        except httpx.HTTPError as err:
            raise ApiUnavailableError(f"cannot reach the Baton API at {self.api_url}: {err}") from err
        return _decode(resp)

    # ---- runs ----------------------------------------------------------------------------------
    def start_run(self, workflow: str, input: dict[str, Any] | None = None, *, run_id: str | None = None) -> Any:
        body: dict[str, Any] = {"workflow": workflow, "input": input or {}}
        if run_id:
            body["run_id"] = run_id
        return self.request("POST", "/api/runs", json_body=body)

    def get_run(self, run_id: str) -> Any:
        return self.request("GET", f"/api/runs/{_seg(run_id)}")

    def events(self, run_id: str, *, after: str | None = None, limit: int = 100) -> Any:
        params: dict[str, Any] = {"limit": limit}
        if after:
            params["after"] = after
        return self.request("GET", f"/api/runs/{_seg(run_id)}/events", params=params)

    def resume(self, run_id: str, answers: dict[str, Any], *, node: str | None = None) -> Any:
        body: dict[str, Any] = {"answers": answers}
        if node:
            body["node"] = node
        return self.request("POST", f"/api/runs/{_seg(run_id)}/resume", json_body=body)

    # ---- async questions -----------------------------------------------------------------------
    def ask_async(
        self,
        run_id: str,
        node: str,
        question: str,
        *,
        options: list[str] | None = None,
        allow_free_text: bool | None = None,
        map_item: int | str | None = None,
    ) -> Any:
        """ask_user_async: post a question for `node` and return at once ({interaction_id, message, ...})."""
        body: dict[str, Any] = {"node": node, "question": question}
        for key, value in (("options", options), ("allow_free_text", allow_free_text), ("map_item", map_item)):
            if value is not None:
                body[key] = value
        return self.request("POST", f"/api/runs/{_seg(run_id)}/questions", json_body=body)

    def pending_questions(self, run_id: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.request("GET", f"/api/runs/{_seg(run_id)}/interactions/pending")["pending"]
        return result

    def answer(self, run_id: str, interaction_id: str, answer: Any) -> Any:
        """Answer a question: {queued, resumed, ...}; ConflictError (409) with the winning answer if answered."""
        return self.request(
            "POST", f"/api/runs/{_seg(run_id)}/interactions/{_seg(interaction_id)}/answer", json_body={"answer": answer}
        )

    def drain_messages(self, run_id: str, node: str) -> list[dict[str, Any]]:
        """The node's queued messages (answers arrive as `[Answer to question <id>] Q: ... — A: ...`), once each."""
        result: list[dict[str, Any]] = self.request(
            "POST", f"/api/runs/{_seg(run_id)}/nodes/{_seg(node)}/messages/drain"
        )["messages"]
        return result

    def await_once(self, run_id: str, *, timeout: float, from_node: str | None = None) -> tuple[bool, Any]:
        """One call of the await tool: (True, answers) or (False, {pending: [...], ...}); never blocks."""
        body: dict[str, Any] = {"timeout_seconds": max(1, int(timeout + 0.999))}
        if from_node:
            body["from"] = from_node
        try:
            resp = self._http.post(f"/api/runs/{_seg(run_id)}/await", json=body)
        except httpx.HTTPError as err:
            raise ApiUnavailableError(f"cannot reach the Baton API at {self.api_url}: {err}") from err
        result = _decode(resp)
        return (resp.status_code == 200, result["answers"] if resp.status_code == 200 else result)

    def await_answers(
        self, run_id: str, *, timeout: float, from_node: str | None = None, poll_interval: float = 1.0
    ) -> list[dict[str, Any]]:
        """Block until no question in scope is pending; return [{interaction_id, node, question, answer}].
        The timeout is mandatory; on expiry raises AwaitTimeoutError listing the pending ids."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            done, result = self.await_once(run_id, timeout=timeout, from_node=from_node)
            if done:
                answers: list[dict[str, Any]] = result
                return answers
            left = deadline - time.monotonic()
            if left <= 0:
                raise AwaitTimeoutError(
                    f"{len(result['pending'])} question(s) still unanswered after {timeout}s",
                    details={"run_id": run_id, "pending": result["pending"]},
                )
            time.sleep(min(poll_interval, left))

    async def await_answers_async(
        self, run_id: str, *, timeout: float, from_node: str | None = None, poll_interval: float = 1.0
    ) -> list[dict[str, Any]]:
        """`await_answers` for asyncio code: the polling sleeps without blocking the event loop."""
        import asyncio
        import time

        deadline = time.monotonic() + timeout
        while True:
            done, result = await asyncio.to_thread(self.await_once, run_id, timeout=timeout, from_node=from_node)
            if done:
                answers: list[dict[str, Any]] = result
                return answers
            left = deadline - time.monotonic()
            if left <= 0:
                raise AwaitTimeoutError(
                    f"{len(result['pending'])} question(s) still unanswered after {timeout}s",
                    details={"run_id": run_id, "pending": result["pending"]},
                )
            await asyncio.sleep(min(poll_interval, left))

    async def drain_messages_async(self, run_id: str, node: str) -> list[dict[str, Any]]:
        """`drain_messages` for asyncio code."""
        import asyncio

        return await asyncio.to_thread(self.drain_messages, run_id, node)

    # ---- review gate ---------------------------------------------------------------------------
    def review(self, run_id: str, *, gate: str | None = None) -> Any:
        """The run's review: thread, verdict, diff stats, review URL, merge status, allowed actions."""
        return self.request("GET", f"/api/runs/{_seg(run_id)}/review", params={"gate": gate} if gate else None)

    def review_action(
        self,
        run_id: str,
        action: str,
        *,
        reply: str | None = None,
        message: str | None = None,
        merge_strategy: str | None = None,
        gate: str | None = None,
    ) -> Any:
        """reply | approve_merge | force_merge | request_changes, sent as the reserved resume keys."""
        answers: dict[str, Any] = {"__review_action": action}
        for key, value in (
            ("__review_reply", reply),
            ("__review_message", message),
            ("__review_merge_strategy", merge_strategy),
        ):
            if value is not None:
                answers[key] = value
        return self.resume(run_id, answers, node=gate)

    # ---- interrupts (baton.client.interrupts) ------------------------------------------------------
    def create_interrupt(self, *, session_id: str, prompt: str, **options: Any) -> dict[str, Any]:
        """POST /api/v1/interrupts; options: schema, json_schema, state, notify, timeout_ms, workflow_id, key."""
        from baton.client.interrupts import create_body

        record: dict[str, Any] = self.request(
            "POST", "/api/v1/interrupts", json_body=create_body(session_id=session_id, prompt=prompt, **options)
        )
        return record

    def get_interrupt(self, interrupt_id: str, *, wait_seconds: float = 0) -> dict[str, Any]:
        """One interrupt; with wait_seconds (clamped to <= 20) the server holds the request until it settles."""
        wait_seconds = max(0.0, min(float(wait_seconds), 20.0))
        params = {"waitSeconds": wait_seconds} if wait_seconds else None
        try:
            resp = self._http.get(f"/api/v1/interrupts/{_seg(interrupt_id)}", params=params, timeout=wait_seconds + 30)
        except httpx.HTTPError as err:
            raise ApiUnavailableError(f"cannot reach the Baton API at {self.api_url}: {err}") from err
        record: dict[str, Any] = _decode(resp)
        return record

    def list_interrupts(
        self, *, status: str | None = None, session_id: str | None = None, max_items: int | None = None
    ) -> list[dict[str, Any]]:
        """Every matching interrupt (follows the `next` pages), or at most `max_items`."""
        params: dict[str, Any] = {k: v for k, v in (("status", status), ("sessionId", session_id)) if v is not None}
        params["limit"] = 200
        found: list[dict[str, Any]] = []
        while max_items is None or len(found) < max_items:
            page = self.request("GET", "/api/v1/interrupts", params=params)
            found.extend(page["interrupts"])
            if not page.get("next"):
                break
            params["next"] = page["next"]
        return found if max_items is None else found[:max_items]

    def claim_interrupt(self, interrupt_id: str, *, force: bool = False, operator: str | None = None) -> Any:
        body: dict[str, Any] = {"force": force} if force else {}
        if operator:
            body["operator"] = operator
        return self.request("POST", f"/api/v1/interrupts/{_seg(interrupt_id)}/claim", json_body=body)

    def resume_interrupt(
        self, interrupt_id: str, input: Any = None, state_edits: list[str] | None = None, *, operator: str | None = None
    ) -> Any:
        """Resume with a value and `path=value` state edits; InterruptValidationError (422) names the failing
        path and leaves the interrupt open for another try."""
        from baton.errors import InterruptValidationError

        body: dict[str, Any] = {"input": input, "stateEdits": list(state_edits or [])}
        if operator:
            body["operator"] = operator
        try:
            return self.request("POST", f"/api/v1/interrupts/{_seg(interrupt_id)}/resume", json_body=body)
        except ValidationFailedError as err:
            raise InterruptValidationError(err.message, details=err.details) from err

    def cancel_interrupt(self, interrupt_id: str, reason: str, *, operator: str | None = None) -> Any:
        body: dict[str, Any] = {"reason": reason}
        if operator:
            body["operator"] = operator
        return self.request("POST", f"/api/v1/interrupts/{_seg(interrupt_id)}/cancel", json_body=body)

    def wait_interrupt(self, interrupt_id: str, *, poll_seconds: float = 20.0) -> Any:
        """Block until the interrupt settles (long-poll, one idle request per ~poll_seconds). Returns an
        InterruptResult; raises InterruptTimeoutError / InterruptCancelledError. Works after a restart."""
        from baton.client.interrupts import wait_for

        return wait_for(lambda wait: self.get_interrupt(interrupt_id, wait_seconds=wait), poll_seconds=poll_seconds)

    def interrupt(
        self,
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
        poll_seconds: float = 20.0,
    ) -> Any:
        """Pause: create an interrupt and block until an operator resumes it. Returns InterruptResult
        (.value, .state = the edited snapshot). With `key`, a restarted process calling this again gets
        the same interrupt (and its answer if it arrived meanwhile) instead of a new one. Without
        `timeout_ms` the server's default deadline applies (24 hours; then InterruptTimeoutError);
        `poll_seconds` is clamped to 5..20 s."""
        record = self.create_interrupt(
            session_id=session_id,
            prompt=prompt,
            schema=schema,
            json_schema=json_schema,
            state=state,
            notify=notify,
            timeout_ms=timeout_ms,
            workflow_id=workflow_id,
            key=key,
        )
        return self.wait_interrupt(record["id"], poll_seconds=poll_seconds)

    def _async_http(self) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.AsyncClient(
            base_url=self.api_url, headers=headers, transport=self._async_transport, auth=self._auth
        )

    async def wait_interrupt_async(self, interrupt_id: str, *, poll_seconds: float = 20.0) -> Any:
        """`wait_interrupt` for asyncio (the event loop stays free during the long-poll)."""
        from baton.client.interrupts import wait_for_async

        async with self._async_http() as http:

            async def poll(wait: float) -> dict[str, Any]:
                try:
                    resp = await http.get(
                        f"/api/v1/interrupts/{_seg(interrupt_id)}", params={"waitSeconds": wait}, timeout=wait + 30
                    )
                except httpx.HTTPError as err:
                    raise ApiUnavailableError(f"cannot reach the Baton API at {self.api_url}: {err}") from err
                record: dict[str, Any] = _decode(resp)
                return record

            return await wait_for_async(poll, poll_seconds=poll_seconds)

    async def interrupt_async(self, *, session_id: str, prompt: str, poll_seconds: float = 20.0, **options: Any) -> Any:
        """`interrupt` for asyncio: `result = await client.interrupt_async(session_id=..., prompt=..., ...)`."""
        from baton.client.interrupts import create_body

        async with self._async_http() as http:
            try:
                resp = await http.post(
                    "/api/v1/interrupts", json=create_body(session_id=session_id, prompt=prompt, **options)
                )
            except httpx.HTTPError as err:
                raise ApiUnavailableError(f"cannot reach the Baton API at {self.api_url}: {err}") from err
            record = _decode(resp)
        return await self.wait_interrupt_async(record["id"], poll_seconds=poll_seconds)


def _decode(resp: httpx.Response) -> Any:
    try:
        body = resp.json() if resp.content else None
    except ValueError:
        body = {"message": resp.text}
    if resp.status_code < 400:
        return body
    message = (body or {}).get("message") if isinstance(body, dict) else None
    error_type = _BY_STATUS.get(resp.status_code, BatonError)
    details = {k: v for k, v in body.items() if k not in ("message",)} if isinstance(body, dict) else {}
    err = error_type(message or f"HTTP {resp.status_code}", details=details)
    err.http_status = resp.status_code
    raise err
