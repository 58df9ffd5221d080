"""`baton mcp`'s relay (baton/cli/mcp.py `forward`): each stdio message is POSTed to <api>/mcp with the
CLI's credentials and the run, and every answer is one a JSON-RPC client can match to its request."""

from __future__ import annotations

import json
from typing import Any

import httpx

from baton.cli.mcp import forward
from baton.client.transport import Transport


def relay(handler: Any) -> Transport:
    return Transport("http://127.0.0.1:9", "tok", transport=httpx.MockTransport(handler))


def test_a_request_goes_to_mcp_with_the_token_and_the_run() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {}})

    result = forward(relay(answer), "run-a", {"jsonrpc": "2.0", "id": 7, "method": "ping"})
    assert result == {"jsonrpc": "2.0", "id": 7, "result": {}}
    (request,) = seen
    assert request.url.path == "/mcp" and request.url.params["run"] == "run-a"
    assert request.headers["authorization"] == "Bearer tok"


def test_a_notification_gets_no_answer() -> None:
    def accepted(_: httpx.Request) -> httpx.Response:
        return httpx.Response(202)

    assert forward(relay(accepted), "run-a", {"jsonrpc": "2.0", "method": "notifications/initialized"}) is None


def test_an_http_refusal_answers_the_request_it_refused() -> None:
    def forbidden(_: httpx.Request) -> httpx.Response:
        error = {"code": -32600, "message": "this agent identity is scoped to run run-a"}
        return httpx.Response(403, json={"jsonrpc": "2.0", "id": None, "error": error})

    result = forward(relay(forbidden), "run-b", {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert result is not None and result["id"] == 3 and "scoped to run run-a" in result["error"]["message"]


def test_an_unreachable_api_is_an_error_answer_not_a_crash() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    result = forward(relay(down), "run-a", {"jsonrpc": "2.0", "id": "x", "method": "tools/list"})
    assert result is not None and result["id"] == "x" and "cannot reach the Baton API" in result["error"]["message"]
    html = forward(
        relay(lambda _: httpx.Response(502, text="<html>")), None, {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    )
    assert html is not None and "HTTP 502" in html["error"]["message"]
