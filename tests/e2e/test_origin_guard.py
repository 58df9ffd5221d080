"""Nothing reaches `baton dev` but its owner (issue 29, items 1 and 2): a web page, cross-origin or by DNS
rebinding (its own name resolving to 127.0.0.1), gets a 403 from the AWS emulator, the API, `/mcp` and the
inbox, and no `Access-Control-Allow-Origin`; the owner's loopback names on the stack's port still work."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.conftest import LocalStackProcess

pytestmark = pytest.mark.e2e
EVIL_ORIGIN = "https://evil.example"
# DynamoDB's wire form: what a page would send to Scan the table (every parked task token).
LIST_TABLES = {"X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0"}
SIGNED = {"Authorization": "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, Signature=x"}
MCP_PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def _port(url: str) -> int:
    return int(urlsplit(url).port or 0)


def _mcp(stack: LocalStackProcess, **headers: str) -> httpx.Response:
    sent = {"Authorization": f"Bearer {stack.token}", "X-Baton-Run": "origin-check", "Accept": "application/json"}
    return httpx.post(f"{stack.api_url}/mcp", json=MCP_PING, headers=sent | headers, timeout=30)


def test_the_emulator_refuses_another_origin_and_echoes_no_cors(local_stack: LocalStackProcess) -> None:
    moto_url = str(local_stack.state["moto_url"])
    scan = httpx.post(moto_url, headers=LIST_TABLES | SIGNED | {"Origin": EVIL_ORIGIN}, content=b"{}", timeout=30)
    assert scan.status_code == 403 and scan.json()["error"] == "forbidden_origin"
    preflight = httpx.options(
        moto_url,
        headers={"Origin": EVIL_ORIGIN, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x"},
        timeout=30,
    )
    assert preflight.status_code == 403
    for answer in (scan, preflight):
        assert not any(name.lower().startswith("access-control-") for name in answer.headers), answer.headers


def test_the_emulator_refuses_a_rebound_host_and_serves_its_own(local_stack: LocalStackProcess) -> None:
    moto_url = str(local_stack.state["moto_url"])
    rebound = httpx.post(
        moto_url, headers=LIST_TABLES | SIGNED | {"Host": f"evil.example:{_port(moto_url)}"}, content=b"{}", timeout=30
    )
    assert rebound.status_code == 403
    own = f"http://localhost:{_port(moto_url)}"
    listed = httpx.post(moto_url, headers=LIST_TABLES | SIGNED | {"Origin": own}, content=b"{}", timeout=30)
    assert listed.status_code == 200 and listed.json()["TableNames"], listed.text
    assert "access-control-allow-origin" not in listed.headers  # no CORS at all: the owner's programs need none


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "http://evil.example"}, {"Host": "evil.example"}, {"Origin": "null"}, {"Host": "127.0.0.1:1"}],
    ids=["foreign-origin", "rebound-host", "opaque-origin", "other-port"],
)
def test_mcp_api_and_inbox_refuse_a_foreign_origin_or_host(
    local_stack: LocalStackProcess, headers: dict[str, str]
) -> None:
    refused = _mcp(local_stack, **headers)
    assert refused.status_code == 403 and refused.json()["error"] == "forbidden_origin", refused.text
    with local_stack.http() as http:
        for path in ("/api/v1/interrupts", "/inbox/"):
            answer = http.get(path, headers=headers)
            assert answer.status_code == 403, (path, answer.text)
            assert "access-control-allow-origin" not in answer.headers


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_mcp_and_api_serve_the_loopback_names(local_stack: LocalStackProcess, name: str) -> None:
    own = f"{name}:{_port(local_stack.api_url)}"
    answer = _mcp(local_stack, Host=own, Origin=f"http://{own}")
    assert answer.status_code == 200 and answer.json()["result"] == {}, answer.text
    with local_stack.http() as http:
        assert http.get("/api/v1/interrupts", headers={"Host": own, "Origin": f"http://{own}"}).status_code == 200


def test_slack_through_a_tunnel_keeps_its_own_host_but_no_page_reaches_it(local_stack: LocalStackProcess) -> None:
    url = f"{local_stack.api_url}/slack/interactions"
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    # The route itself answers (Slack's signature decides there), not the guard: this stack has no Slack app.
    tunnelled = httpx.post(url, content=b"payload=%7B%7D", headers=form | {"Host": "abc.tunnel.example"}, timeout=30)
    assert tunnelled.status_code != 403 and "forbidden_origin" not in tunnelled.text, tunnelled.text
    from_a_page = httpx.post(url, content=b"payload=%7B%7D", headers=form | {"Origin": EVIL_ORIGIN}, timeout=30)
    assert from_a_page.status_code == 403 and from_a_page.json()["error"] == "forbidden_origin"
