"""The OpenAPI document tells the truth about what the server enforces (issue 29, item 8): the query
constraints, object bodies where objects are meant, 405 with `Allow` for a method a known path lacks."""

from __future__ import annotations

import json
from typing import Any

from baton.local.http_adapter import to_proxy_event
from tests.unit.conftest import LOCAL_TOKEN


def _call(app: Any, method: str, path: str, body: bytes = b"") -> tuple[int, dict[str, str], Any]:
    headers = {"Authorization": f"Bearer {LOCAL_TOKEN}", "Content-Type": "application/json"}
    result = app.resolve(to_proxy_event(method, path, headers, body, "127.0.0.1"), None)
    answered = dict(result.get("headers") or {})
    answered.update({k: ", ".join(v) for k, v in (result.get("multiValueHeaders") or {}).items()})
    return result["statusCode"], answered, json.loads(result["body"] or "null")


def test_a_method_a_known_path_lacks_is_405_naming_the_methods_it_has(app: Any) -> None:
    status, headers, body = _call(app, "TRACE", "/api/runs")
    assert status == 405, body
    assert headers["Allow"] == "POST" and body["error"] == "method_not_allowed" and body["allow"] == ["POST"]
    status, headers, body = _call(app, "DELETE", "/api/v1/interrupts/i-1")
    assert status == 405 and headers["Allow"] == "GET", body
    status, _, body = _call(app, "PUT", "/api/v1/interrupts")
    assert status == 405 and body["allow"] == ["GET", "POST"], body


def test_a_path_no_route_has_is_still_404(app: Any) -> None:
    status, headers, body = _call(app, "TRACE", "/api/nowhere")
    assert status == 404 and "Allow" not in headers and body["error"] == "not_found", body


def _query_parameters(app: Any, path: str) -> dict[str, dict[str, Any]]:
    status, _, spec = _call(app, "GET", "/api/openapi.json")
    assert status == 200
    operation = spec["paths"][path]["get"]
    return {p["name"]: p["schema"] for p in operation["parameters"] if p["in"] == "query"}


def test_the_document_declares_the_query_constraints_the_server_enforces(app: Any) -> None:
    inbox = _query_parameters(app, "/api/inbox")
    assert inbox["limit"]["minimum"] == 1 and inbox["limit"]["maximum"] == 200
    assert inbox["claimed"]["enum"] == ["me", "unclaimed", "any"]
    assert inbox["order"]["enum"] == ["newest", "oldest"]
    assert inbox["min_age_s"]["type"] == "integer" and inbox["min_age_s"]["minimum"] == 0
    assert inbox["kind"]["type"] == "array" and "interrupt" in inbox["kind"]["items"]["enum"]
    assert inbox["run"]["pattern"].startswith("^[A-Za-z0-9]")
    interrupts = _query_parameters(app, "/api/v1/interrupts")
    assert interrupts["sessionId"]["maxLength"] == 60 and "pattern" in interrupts["sessionId"]
    assert interrupts["status"]["enum"] == ["pending", "answered", "cancelled"]
    wait = _query_parameters(app, "/api/v1/interrupts/{interrupt_id}")["waitSeconds"]
    assert wait["type"] == "number" and wait["minimum"] == 0 and wait["maximum"] == 20
    events = _query_parameters(app, "/api/runs/{run_id}/events")
    assert events["limit"]["minimum"] == 1 and events["limit"]["maximum"] == 500 and events["after"]["type"] == "string"
    audit = _query_parameters(app, "/api/runs/{run_id}/audit")
    assert audit["after"]["minimum"] == 0
    decided = _query_parameters(app, "/api/tool-approvals")
    assert decided["status"]["const"] == "answered" and decided["since"]["format"] == "date-time"
    assert decided["limit"]["minimum"] == 1 and decided["limit"]["maximum"] == 200
    assert decided["next"]["maxLength"] == 4096


def test_what_the_document_declares_is_what_the_server_refuses(app: Any) -> None:
    """Just outside each declared bound is a 4xx; at the bound, not."""
    assert _call(app, "GET", "/api/inbox?limit=201")[0] == 422
    assert _call(app, "GET", "/api/inbox?limit=200")[0] == 200
    assert _call(app, "GET", "/api/inbox?claimed=mine")[0] == 422
    assert _call(app, "GET", "/api/inbox?order=sideways")[0] == 422
    assert _call(app, "GET", "/api/inbox?min_age_s=-1")[0] == 422
    assert _call(app, "GET", "/api/v1/interrupts?status=done")[0] == 400
    assert _call(app, "GET", "/api/v1/interrupts?sessionId=-bad")[0] in (400, 422)
    assert _call(app, "GET", "/api/v1/interrupts/i-1?waitSeconds=21")[0] == 422
    assert _call(app, "GET", "/api/tool-approvals?limit=201")[0] == 422
    assert _call(app, "GET", "/api/tool-approvals?limit=200")[0] == 200
    assert _call(app, "GET", "/api/tool-approvals?status=pending")[0] == 422
    assert _call(app, "GET", "/api/tool-approvals?since=yesterday")[0] == 422
    assert _call(app, "GET", "/api/tool-approvals?since=0001-01-01T00:00:00%2B01:00")[0] == 422  # before year 1
    assert _call(app, "GET", "/api/tool-approvals?since=2026-12-01T00:00:00")[0] == 200  # no zone: UTC
    assert _call(app, "GET", "/api/tool-approvals?next=not-a-token")[0] == 400


def test_an_object_body_route_refuses_an_array_and_the_document_says_object(app: Any) -> None:
    """Powertools takes a one-item array's item as a body model (`[{}]` was a claim); `null` is no object
    either. No body at all still claims with the defaults (the interrupt or tool approval is unknown here:
    404)."""
    claimable = ("/api/v1/interrupts/i-1", "/api/runs/r1/tool-approvals/t-1")
    for prefix in claimable:
        for path in ("claim", "claim/renew", "claim/release"):
            for refused in (b"[]", b"[{}]", b'[{"force": false}]', b"null", b'"x"'):
                status, _, body = _call(app, "POST", f"{prefix}/{path}", refused)
                assert status == 422 and body["problems"][0]["path"] == "$", (path, refused, status, body)
            assert _call(app, "POST", f"{prefix}/{path}")[0] == 404
            assert _call(app, "POST", f"{prefix}/{path}", b"{}")[0] == 404
    assert _call(app, "POST", "/api/runs/r1/questions", b'[{"node": "n", "question": "q"}]')[0] == 422
    _, _, spec = _call(app, "GET", "/api/openapi.json")
    documented = ("/api/v1/interrupts/{interrupt_id}", "/api/runs/{run_id}/tool-approvals/{interaction_id}")
    for prefix, path in ((p, v) for p in documented for v in ("claim", "claim/renew", "claim/release")):
        schema = spec["paths"][f"{prefix}/{path}"]["post"]["requestBody"]["content"]
        declared = schema["application/json"]["schema"]
        assert "anyOf" not in declared and declared["$ref"].startswith("#/components/schemas/"), (path, declared)
        assert spec["components"]["schemas"][declared["$ref"].rsplit("/", 1)[1]]["type"] == "object"


def test_path_parameters_are_percent_decoded_as_api_gateway_decodes_them(app: Any) -> None:
    """A REST API's `path` keeps its encoding; a client encodes what the document allows (':' in a node,
    any character in an id), so the route must see the decoded value, not `i%2D1`."""
    status, _, body = _call(app, "GET", "/api/v1/interrupts/i%2D1")
    assert status == 404 and body["interrupt_id"] == "i-1", body
    status, _, body = _call(app, "GET", "/api/runs/r%2D1/events")
    assert status == 404 and body["run_id"] == "r-1", body


def test_a_whole_number_of_lease_seconds_is_an_integer_as_the_document_says(app: Any) -> None:
    """JSON Schema's "integer" holds 120.0: the server takes it; 120.5, "120" and true are refused."""
    for valid in (b'{"leaseSeconds": 120.0}', b'{"leaseSeconds": null}', b'{"leaseSeconds": 120}'):
        assert _call(app, "POST", "/api/v1/interrupts/i-1/claim", valid)[0] == 404, valid  # valid: no such interrupt
        assert _call(app, "POST", "/api/runs/r1/tool-approvals/t-1/claim", valid)[0] == 404, valid
    for refused in (b'{"leaseSeconds": 120.5}', b'{"leaseSeconds": "120"}', b'{"leaseSeconds": true}'):
        assert _call(app, "POST", "/api/v1/interrupts/i-1/claim", refused)[0] == 422, refused
        assert _call(app, "POST", "/api/runs/r1/tool-approvals/t-1/claim", refused)[0] == 422, refused
    _, _, spec = _call(app, "GET", "/api/openapi.json")
    lease = spec["components"]["schemas"]["ClaimInterruptRequest"]["properties"]["leaseSeconds"]["anyOf"][0]
    assert lease == {"type": "integer", "minimum": 60, "maximum": 28800}, lease


def test_a_flag_is_a_json_boolean_as_the_document_says(app: Any) -> None:
    """`force: 0` was read as false (pydantic's lax bool) although the document says boolean."""
    for refused in (b'{"force": 0}', b'{"force": "false"}', b'{"force": 1, "reason": "r"}'):
        assert _call(app, "POST", "/api/v1/interrupts/i-1/claim", refused)[0] == 422, refused
    assert _call(app, "POST", "/api/v1/interrupts/i-1/claim", b'{"force": false}')[0] == 404
    status, _, body = _call(
        app, "POST", "/api/runs/r1/questions", b'{"node": "n", "question": "q", "allow_free_text": 1}'
    )
    assert status == 422, body


def test_a_reason_of_only_spaces_is_refused_and_the_document_says_so(app: Any) -> None:
    """Schemathesis found it (ST202): a cancel's reason " " met the document (minLength 1) but got a 400
    from the service, which strips it. The document now says a reason needs a non-space character."""
    status, _, spec = _call(app, "GET", "/api/openapi.json")
    assert status == 200
    body = spec["paths"]["/api/v1/interrupts/{interrupt_id}/cancel"]["post"]["requestBody"]["content"]
    ref = body["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert spec["components"]["schemas"][ref]["properties"]["reason"]["pattern"] == r"\S"
    status, _, refused = _call(app, "POST", "/api/v1/interrupts/i-1/cancel", b'{"reason": " "}')
    assert status == 400 and refused["field"] == "reason", refused


def test_the_agent_state_key_is_declared_bounded_and_refused_outside_it(app: Any) -> None:
    """The key's pattern is one character class with a bound (linear to match); a key outside it is 400."""
    _, _, spec = _call(app, "GET", "/api/openapi.json")
    operations = spec["paths"]["/api/runs/{run_id}/agent-state/{key}"]
    assert set(operations) == {"put", "get", "delete"}
    [key] = [p["schema"] for p in operations["get"]["parameters"] if p["name"] == "key"]
    assert key["pattern"] == "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$", key
    assert set(operations["put"]["responses"]) >= {"200", "403", "404", "409", "413"}
    assert _call(app, "GET", "/api/runs/r1/agent-state/" + "k" * 129)[0] == 400
    assert _call(app, "GET", "/api/runs/r1/agent-state/" + "k" * 128)[0] == 404


def test_the_wait_statistics_are_documented_with_their_read_bounds(app: Any) -> None:
    """`GET /api/stats/waits` answers the shape the document gives it, and both halves say how much they
    read (`sampled`, `truncated`): the read is bounded, never a scan."""
    _, _, spec = _call(app, "GET", "/api/openapi.json")
    ok = spec["paths"]["/api/stats/waits"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/WaitStats"}
    schemas = spec["components"]["schemas"]
    assert set(schemas["WaitStats"]["required"]) == {"as_of", "pending", "answers"}
    for half in ("PendingWaits", "AnswerTimes"):
        assert {"sampled", "truncated"} <= set(schemas[half]["required"]), half
    assert schemas["AnswerWindow"]["properties"]["window"]["enum"] == ["day", "week"]
    status, _, body = _call(app, "GET", "/api/stats/waits")
    assert status == 200, body
    assert [k["kind"] for k in body["pending"]["by_kind"]] == [
        "question",
        "ask",
        "await",
        "interrupt",
        "review",
        "tool_approval",
    ]
    assert [w["window"] for w in body["answers"]["windows"]] == ["day", "week"]
