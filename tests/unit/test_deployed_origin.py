"""Deployed, the API and `/mcp` answer a web page only from their own origin or one the deployment allows
(`-c allowed_origins=...` -> BATON_ALLOWED_ORIGINS; issue 29 item 1): API Gateway events as it sends them,
with a good, a foreign and no `Origin`. And the inbox distribution's edge function that does the same for
`/api/*` under the distribution's name (infra/capabilities/inbox.py), run by node."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from baton.api import deps
from baton.domain.origins import normalized_origin
from baton.mcp.http import McpHttpHandler
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.runs import RunService
from infra.capabilities.inbox import API_ORIGIN_CHECK
from tests.unit.test_api_gateway_events import (
    AGENT_ROLE,
    AGENT_SESSION,
    IAM_USER,
    ROOT,
    LambdaContextStub,
    iam_identity,
    rest_event,
)

OWN = "https://abc123defg.execute-api.us-east-1.amazonaws.com"  # rest_event's requestContext.domainName
ALLOWED = "https://tools.example.com"
SETTINGS = {"BATON_TABLE_NAME": "t", "BATON_AGENT_ROLE_NAME": AGENT_ROLE, "BATON_ALLOWED_ORIGINS": f"{ALLOWED}/ , "}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@pytest.fixture
def services(core: Core) -> Iterator[Services]:
    settings = Settings.model_validate(SETTINGS)
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    yield services
    deps.set_services_provider(deps._default_provider)


@pytest.fixture
def api(services: Services) -> Any:
    spec = importlib.util.spec_from_file_location("api_handler_origin", ROOT / "functions" / "api" / "handler.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def call(origin: str | None) -> tuple[int, Any]:
        event = rest_event("GET", "/api/v1/interrupts", identity=iam_identity(IAM_USER, "AIDAEXAMPLEUSER00001"))
        if origin is not None:
            event["headers"]["Origin"] = origin
            event["multiValueHeaders"]["Origin"] = [origin]
        result = module.lambda_handler(event, LambdaContextStub())
        return result["statusCode"], json.loads(result["body"])

    return call


@pytest.mark.parametrize("origin", [None, OWN, OWN.upper(), ALLOWED], ids=["none", "own", "own-upper", "allowed"])
def test_a_request_without_origin_or_from_the_apis_own_or_an_allowed_one_is_answered(
    api: Any, origin: str | None
) -> None:
    status, body = api(origin)
    assert status == 200, body


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "http://abc123defg.execute-api.us-east-1.amazonaws.com", "null", ALLOWED + ":8443"],
)
def test_a_page_of_any_other_origin_is_a_403_before_any_work(api: Any, origin: str) -> None:
    status, body = api(origin)
    assert (status, body["error"], body["origin"]) == (403, "forbidden", origin), body
    assert "allowed_origins" in body["message"]


def test_mcp_checks_the_origin_the_same_way(services: Services) -> None:
    handler = McpHttpHandler(lambda: services)

    def post(origin: str | None) -> tuple[int, Any]:
        event = rest_event("POST", "/mcp", identity=iam_identity(AGENT_SESSION, "AROAEXAMPLE:run-r1"), body=INITIALIZE)
        if origin is not None:
            event["headers"]["Origin"] = origin
        result = handler(event, None)
        return result["statusCode"], json.loads(result["body"])

    assert post(None)[0] == 200
    assert post(OWN)[0] == 200
    assert post(ALLOWED)[0] == 200
    status, body = post("https://evil.example")
    assert status == 403 and body["error"]["data"]["error"] == "forbidden", body


def test_the_setting_is_a_comma_list_of_origins_and_refuses_anything_else() -> None:
    assert Settings.model_validate(SETTINGS).allowed_origins == (ALLOWED,)
    assert Settings.model_validate({"BATON_TABLE_NAME": "t"}).allowed_origins == ()
    assert normalized_origin(" HTTPS://Tools.Example.com:8443 ") == "https://tools.example.com:8443"
    assert normalized_origin("https://tools.example.com/") == "https://tools.example.com"
    for bad in ("tools.example.com", "https://tools.example.com/app", "ftp://x", "https://"):
        with pytest.raises(ValueError, match="not an origin"):
            normalized_origin(bad)


def _edge(headers: dict[str, str]) -> dict[str, Any]:
    """What the inbox distribution's viewer-request function makes of a request to `/api/*` (CloudFront
    Functions' event shape: lower-case header names, each `{value}`)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (scripts/bootstrap.sh needs it for the inbox)")
    event = {
        "request": {
            "method": "POST",
            "uri": "/api/v1/interrupts",
            "headers": {k: {"value": v} for k, v in headers.items()},
        }
    }
    script = f"{API_ORIGIN_CHECK}\nconsole.log(JSON.stringify(handler({json.dumps(event)})));"
    result = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=30, check=True)
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def test_the_inbox_edge_refuses_another_sites_origin_and_drops_its_own() -> None:
    host = "d111111abcdef8.cloudfront.net"
    own = _edge({"host": host, "origin": f"https://{host}", "authorization": "Bearer x"})
    assert own["headers"] == {"host": {"value": host}, "authorization": {"value": "Bearer x"}}  # on, without Origin
    assert _edge({"host": host})["headers"] == {"host": {"value": host}}
    assert _edge({"host": host, "origin": "https://evil.example"}) == {
        "statusCode": 403,
        "statusDescription": "Forbidden",
    }
