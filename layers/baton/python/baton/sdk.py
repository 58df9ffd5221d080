"""`baton.Client`: the SDK agents and the CLI use to talk to a Baton API (local stack or deployed).

Finds the API without flags: explicit arguments, then BATON_API_URL / BATON_TOKEN, then the local
stack's `.baton/local.json` (searched from the current directory upwards)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx

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
                ".baton/local.json), or set BATON_API_URL and BATON_TOKEN"
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
    ) -> None:
        self.api_url, self.token = resolve_endpoint(api_url, token)
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self._http = httpx.Client(base_url=self.api_url, headers=headers, timeout=timeout, transport=transport)

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
        return self.request("GET", f"/api/runs/{run_id}")

    def events(self, run_id: str, *, after: str | None = None, limit: int = 100) -> Any:
        params: dict[str, Any] = {"limit": limit}
        if after:
            params["after"] = after
        return self.request("GET", f"/api/runs/{run_id}/events", params=params)

    def resume(self, run_id: str, answers: dict[str, Any], *, node: str | None = None) -> Any:
        body: dict[str, Any] = {"answers": answers}
        if node:
            body["node"] = node
        return self.request("POST", f"/api/runs/{run_id}/resume", json_body=body)


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
