"""The MCP endpoint as a Lambda behind API Gateway (`POST /mcp`): Streamable HTTP, stateless, JSON
responses (no SSE stream, no session id: every POST carries one JSON-RPC message and gets its answer).

Who calls is resolved exactly as the HTTP API does (`baton.api.auth.resolve_caller`, then `admit`):
deployed, the IAM identity API Gateway verified (an agent is a `run-<id>` session of the agent role);
locally, the stack's bearer token or an agent token `agent.<run>.<mac>`. The run comes from the
credentials: an agent's token or session names it; an operator (such as `baton mcp --run ID` with the
CLI's credentials) names it with the `X-Baton-Run` header or `?run=`. A run named there that disagrees
with an agent's credentials is refused (403), and no tool takes a run argument.

HTTP-level refusals (401, 403, 400, 405, 413, 415) come before any work, with a JSON-RPC error body; a
page of another origin gets a 403, as from the API (baton/domain/origins.py).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR

from baton.api.auth import Caller, admit, resolve_caller
from baton.domain.fields import MAX_JSON_DEPTH, check_run_id, json_text_depth
from baton.domain.json_input import load_json_input
from baton.domain.origins import check_origin
from baton.errors import BadRequestError, BatonError, ForbiddenError, PayloadTooLargeError, UnsupportedMediaTypeError
from baton.mcp.agent import AgentTools, WaitPolicy
from baton.mcp.server import McpServer

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from baton.runtime.wiring import Services

MAX_BODY_BYTES = 256 * 1024  # the HTTP API's limit too
RUN_HEADER = "x-baton-run"
RUN_QUERY = "run"


class HttpRefusal(Exception):
    def __init__(self, status: int, message: str, *, code: int = INVALID_REQUEST, data: Any = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.data = status, message, code, data


def _headers(event: Mapping[str, Any]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}


def _result(status: int, body: dict[str, Any] | None, extra: dict[str, str] | None = None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", **(extra or {})}
    return {
        "statusCode": status,
        "headers": headers,
        "body": json.dumps(body) if body is not None else "",
        "isBase64Encoded": False,
    }


def _refusal(err: HttpRefusal) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": err.code, "message": err.message, "data": err.data}}
    extra = {"Allow": "POST"} if err.status == 405 else None
    return _result(err.status, body, extra)


def _from_baton(err: BatonError) -> HttpRefusal:
    return HttpRefusal(err.http_status, err.message, data={"error": err.code, **err.details})


def _text_body(event: Mapping[str, Any]) -> str:
    body = str(event.get("body") or "")
    if len(body) > MAX_BODY_BYTES:
        raise _from_baton(PayloadTooLargeError(f"request body is {len(body)} bytes; the limit is {MAX_BODY_BYTES}"))
    if not event.get("isBase64Encoded"):
        return body
    try:
        return base64.b64decode(body, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise _from_baton(UnsupportedMediaTypeError("the request body is not UTF-8 JSON")) from None


def bound_run(event: Mapping[str, Any], caller: Caller) -> str:
    """The run this connection acts on: the agent's own, or the one an operator names."""
    query = event.get("queryStringParameters") or {}
    named = _headers(event).get(RUN_HEADER) or str(query.get(RUN_QUERY) or "") or None
    if caller.role == "agent":
        own = str(caller.run_id)
        if named is not None and named != own:
            raise ForbiddenError(
                f"this agent identity is scoped to run {own}; it cannot act on run {named}",
                details={"principal": caller.principal, "run_id": named},
            )
        return own
    if named is None:
        raise BadRequestError(
            "which run? send the X-Baton-Run header (or ?run=<run id>), or connect with an agent token "
            "scoped to the run (baton agent-token <run>)",
            details={"field": "X-Baton-Run"},
        )
    return check_run_id(named)


def _parse(event: Mapping[str, Any], text: str) -> Any:
    content_type = _headers(event).get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise _from_baton(UnsupportedMediaTypeError(f"an MCP message is application/json, got {content_type[:100]!r}"))
    if json_text_depth(text) > MAX_JSON_DEPTH:
        raise HttpRefusal(400, f"the message is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return load_json_input(text)  # a lone surrogate or an out-of-range number: a 422 naming its path
    except ValueError:
        raise HttpRefusal(400, "the body is not valid JSON", code=PARSE_ERROR) from None


@dataclass
class McpHttpHandler:
    """Proxy event in, proxy result out. `services` is the same wiring the API Lambda uses."""

    services: Callable[[], Services]
    policy: WaitPolicy | None = None
    version: str = "0"

    def __call__(self, event: Mapping[str, Any], context: Any = None) -> dict[str, Any]:
        try:
            return self._handle(event, context)
        except HttpRefusal as err:
            return _refusal(err)
        except BatonError as err:
            return _refusal(_from_baton(err))

    def _handle(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        method = str(event.get("httpMethod") or "").upper()
        if method != "POST":
            raise HttpRefusal(
                405, f"{method or 'this method'} is not offered: this MCP endpoint is stateless, POST only"
            )
        text = _text_body(event)
        services = self.services()
        settings = services.settings
        if not settings.local_api_token:  # locally the HTTP adapter checked Host and Origin (origin_guard.py)
            check_origin(event, settings.allowed_origins)
        caller = admit(
            resolve_caller(event, settings.local_api_token, settings.agent_principal_pattern, settings.agent_role_name)
        )
        run_id = bound_run(event, caller)
        message = _parse(event, text)
        tools = AgentTools(services, run_id, caller, self._policy(context))
        answer = McpServer(tools, version=self.version).handle(message)
        return _result(202, None) if answer is None else _result(200, answer)

    def _policy(self, context: Any) -> WaitPolicy:
        base = self.policy or WaitPolicy()
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        if remaining is None:
            return base
        return WaitPolicy(
            max_call_seconds=base.max_call_seconds,
            sleep=base.sleep,
            monotonic=base.monotonic,
            remaining_seconds=lambda: remaining() / 1000,
        )
