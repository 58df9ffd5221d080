"""The SDK's HTTP transport: where the API is, how a call is made and signed, and how an error
answer becomes the domain error of its status. `baton.client.sdk` and `baton.client.interrupts`
both build on it (and on nothing of each other's)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from baton.client.sigv4 import SigV4Auth, is_aws_api, region_of
from baton.errors import ERROR_BY_STATUS, BatonError

LONG_POLL_GRACE_SECONDS = 30  # the HTTP timeout of a long-poll: its window plus this


class ApiUnavailableError(BatonError):
    code = "api_unavailable"


def seg(value: str) -> str:
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


def gone_pid(state: dict[str, Any]) -> int | None:
    """The pid a local.json names when that process is gone (a stack killed before it could remove
    its file, e.g. by Ctrl-C under `make dev | tee`); None while it runs, or when none is named."""
    pid = state.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return pid
    except PermissionError:  # it exists, as another user's process
        return None
    return None


def not_running_message(pid: int) -> str:
    return f"the local stack is not running (pid {pid} gone): start it with `make dev`"


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
        pid = gone_pid(state)
        if pid is not None:
            raise ApiUnavailableError(not_running_message(pid))
        api_url, token = state["api_url"], token or state.get("token")
    return api_url.rstrip("/"), token


def decode(resp: httpx.Response) -> Any:
    """The JSON body of a success; the domain error of the status otherwise (details = the body's keys)."""
    try:
        body = resp.json() if resp.content else None
    except ValueError:
        body = {"message": resp.text}
    if resp.status_code < 400:
        return body
    message = (body or {}).get("message") if isinstance(body, dict) else None
    error_type = ERROR_BY_STATUS.get(resp.status_code, BatonError)
    details = {k: v for k, v in body.items() if k not in ("message",)} if isinstance(body, dict) else {}
    err = error_type(message or f"HTTP {resp.status_code}", details=details)
    err.http_status = resp.status_code
    raise err


class Transport:
    """One API endpoint: a bearer token, or SigV4 with the AWS credential chain for a deployed
    API Gateway URL without one."""

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
        self._auth: httpx.Auth | None = None
        if not self.token and is_aws_api(self.api_url):
            self._auth = SigV4Auth(region_of(self.api_url) or os.environ.get("AWS_REGION", "us-east-1"))
        self._http = httpx.Client(
            base_url=self.api_url, headers=self._headers(), timeout=timeout, transport=transport, auth=self._auth
        )
        self._async_transport = async_transport

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def close(self) -> None:
        self._http.close()

    def _unreachable(self, err: httpx.HTTPError) -> ApiUnavailableError:
        return ApiUnavailableError(f"cannot reach the Baton API at {self.api_url}: {err}")

    def send(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """The raw response (for routes whose status code carries meaning, e.g. 200 vs 202)."""
        extra: dict[str, Any] = {"timeout": timeout} if timeout is not None else {}
        try:
            return self._http.request(method, path, json=json_body, params=params, **extra)
        except httpx.HTTPError as err:
            raise self._unreachable(err) from err

    def call(self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None) -> Any:
        return decode(self.send(method, path, json_body=json_body, params=params))

    def poll(self, path: str, wait_seconds: float) -> Any:
        """One long-poll GET: the server holds it up to `wait_seconds`, so the HTTP timeout is longer."""
        params = {"waitSeconds": wait_seconds} if wait_seconds else None
        return decode(self.send("GET", path, params=params, timeout=wait_seconds + LONG_POLL_GRACE_SECONDS))

    def async_session(self) -> AsyncSession:
        return AsyncSession(self)


class AsyncSession:
    """`Transport` for asyncio code (`async with transport.async_session() as s: await s.call(...)`)."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._http = httpx.AsyncClient(
            base_url=transport.api_url,
            headers=transport._headers(),
            transport=transport._async_transport,
            auth=transport._auth,
        )

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()

    async def call(self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None) -> Any:
        try:
            resp = await self._http.request(method, path, json=json_body, params=params)
        except httpx.HTTPError as err:
            raise self._transport._unreachable(err) from err
        return decode(resp)

    async def poll(self, path: str, wait_seconds: float) -> Any:
        try:
            resp = await self._http.get(
                path, params={"waitSeconds": wait_seconds}, timeout=wait_seconds + LONG_POLL_GRACE_SECONDS
            )
        except httpx.HTTPError as err:
            raise self._transport._unreachable(err) from err
        return decode(resp)
