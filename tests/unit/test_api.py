"""The HTTP API through the real resolver, on in-memory services: status codes and error bodies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from baton.api import deps
from baton.api.app import create_app
from baton.domain.gate_payloads import ParkPayload
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.runs import RunService

TOKEN = "local-secret"


@pytest.fixture
def api(core: Core) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(method: str, path: str, body: Any = None, token: str | None = TOKEN, raw: str | None = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else (json.dumps(body) if body is not None else "")
        event = to_proxy_event(method, path, headers, data.encode(), "127.0.0.1")
        result = app.resolve(event, None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def test_no_token_is_401_and_wrong_token_is_401(api: Any, core: Core) -> None:
    status, body = api("POST", "/api/runs", {"workflow": "human_pause"}, token=None)
    assert status == 401 and body["error"] == "unauthorized"
    status, body = api("POST", "/api/runs", {"workflow": "human_pause"}, token="wrong")
    assert status == 401 and "not valid" in body["message"]
    assert core.workflows.started == []  # type: ignore[attr-defined]


def test_auth_comes_before_validation(api: Any) -> None:
    status, body = api("POST", "/api/runs", raw='{"workflow": ', token=None)
    assert status == 401 and body["error"] == "unauthorized"
    status, body = api("POST", "/api/runs/r1/resume", {"surprise": 1}, token="wrong")
    assert status == 401


def test_an_oversized_body_is_413_before_anything_else(api: Any, core: Core) -> None:
    status, body = api("POST", "/api/runs", raw='{"workflow": "human_pause", "input": {"x": "' + "y" * 300_000 + '"}}')
    assert status == 413 and body["error"] == "payload_too_large"
    assert core.workflows.started == []  # type: ignore[attr-defined]


def test_start_and_read_a_run(api: Any) -> None:
    status, body = api("POST", "/api/runs", {"workflow": "human_pause", "run_id": "r1", "input": {"prompt": "?"}})
    assert status == 201 and body["run_id"] == "r1" and body["status"] == "running"
    status, body = api("GET", "/api/runs/r1")
    assert status == 200 and body["workflow"] == "human_pause" and body["interactions"] == {}
    status, body = api("GET", "/api/runs/r1/events")
    assert status == 200 and [e["type"] for e in body["events"]] == ["run_started"]
    assert body["next"] == body["events"][-1]["event_id"]
    status, body = api("GET", f"/api/runs/r1/events?after={body['next']}")
    assert status == 200 and body["events"] == []


def test_malformed_json_is_400_and_changes_nothing(api: Any, core: Core) -> None:
    status, body = api("POST", "/api/runs", raw='{"workflow": ')
    assert status == 400 and body["error"] == "bad_request" and "JSON" in body["message"]
    assert core.workflows.started == []  # type: ignore[attr-defined]


def test_missing_or_unknown_fields_are_422(api: Any, core: Core) -> None:
    status, body = api("POST", "/api/runs", {"input": {}})
    assert status == 422 and body["error"] == "validation_failed" and "workflow" in body["message"]
    status, body = api("POST", "/api/runs", {"workflow": "human_pause", "surprise": 1})
    assert status == 422
    status, body = api("POST", "/api/runs/r1/resume", {})
    assert status == 422 and "answers" in body["message"]
    assert core.workflows.started == []  # type: ignore[attr-defined]


def test_unknown_run_and_unknown_workflow_are_404(api: Any) -> None:
    status, body = api("GET", "/api/runs/ghost")
    assert status == 404 and body == {"error": "not_found", "message": "run ghost not found", "run_id": "ghost"}
    status, body = api("POST", "/api/runs/ghost/resume", {"answers": {"a": 1}})
    assert status == 404
    status, body = api("POST", "/api/runs", {"workflow": "nope"})
    assert status == 404 and body["known"] == ["human_pause"]
    status, body = api("GET", "/api/nothing/here")
    assert status == 404 and body["error"] == "not_found"


def test_resume_then_second_resume_is_409_with_the_winner(api: Any, runs_in_core: None, core: Core) -> None:
    status, body = api("POST", "/api/runs/r1/resume", {"answers": {"ship": True}})
    assert status == 200 and body["resumed"] is True
    status, body = api("POST", "/api/runs/r1/resume", {"answers": {"ship": False}})
    assert status == 409 and body["error"] == "conflict" and body["interaction"]["answer"] == {"ship": True}
    assert "task_token" not in json.dumps(body) and "tok-1" not in json.dumps(body)


def test_openapi_and_docs_are_served(api: Any) -> None:
    status, body = api("GET", "/api/openapi.json", token=None)
    assert status == 200 and "/api/runs/{run_id}/resume" in body["paths"]


@pytest.fixture
def runs_in_core(core: Core) -> None:
    runs = RunService(core)
    runs.start("human_pause", {}, run_id="r1", caller="op")
    runs.park(ParkPayload(run_id="r1", node="approve", token="tok-1", prompt="Ship?", timeout_seconds=60))


def test_agent_token_is_scoped_to_its_run_and_cannot_act_as_operator(api: Any, runs_in_core: None) -> None:
    from baton.api.auth import agent_token

    agent = agent_token(TOKEN, "r1")
    status, _ = api("GET", "/api/runs/r1", token=agent)
    assert status == 200
    status, body = api("GET", "/api/runs/r2", token=agent)
    assert status == 403 and "scoped to run r1" in body["message"]
    status, body = api("POST", "/api/runs/r1/resume", {"answers": {"ship": True}}, token=agent)
    assert status == 403 and "operator action" in body["message"]
    status, body = api("POST", "/api/runs", {"workflow": "human_pause"}, token=agent)
    assert status == 403
    # A forged token for another run (wrong mac) is not an identity at all.
    status, _ = api("GET", "/api/runs/r2", token=agent.replace("agent.r1.", "agent.r2."))
    assert status == 401
    # The operator still can.
    status, body = api("POST", "/api/runs/r1/resume", {"answers": {"ship": True}})
    assert status == 200 and body["resumed"] is True


def test_iam_principals_matching_the_agent_pattern_are_agents() -> None:
    from baton.api.auth import resolve_caller

    event = {"requestContext": {"identity": {"userArn": "arn:aws:sts::1:assumed-role/team-agent-runner/x"}}}
    assert resolve_caller(event, "", r":assumed-role/[^/]*-agent-").role == "agent"
    assert resolve_caller(event, "", "").role == "operator"
    cognito = {
        "requestContext": {"authorizer": {"claims": {"email": "op@example.com", "email_verified": "true", "sub": "1"}}}
    }
    assert resolve_caller(cognito, "", r".*").role == "operator"


def test_openapi_describes_every_response_and_its_errors(api: Any) -> None:
    status, doc = api("GET", "/api/openapi.json", token=None)
    assert status == 200
    schemas = doc["components"]["schemas"]
    assert set(schemas["ErrorBody"]["required"]) == {"error", "message"}
    operations = [(path, method, op) for path, ops in doc["paths"].items() for method, op in ops.items()]
    assert (
        len(operations) == 55
    )  # 16, GET /api/inbox, GET /api/stats/waits, GET /api/me, the blocking ask: POST /asks, GET /asks, GET /asks/{id},
    # the claim's renew, release and reassign, GET /audit[/verify], POST /stop, GET /review/diff, the tool
    # approvals: POST, GET /{id}, POST /{id}/consume, GET /tool-grants, DELETE /tool-grants/{id}, their
    # claim: POST /{id}/claim, /claim/renew, /claim/release, /reassign, an agent's state: PUT, GET, DELETE
    # /agent-state/{key}, GET /api/tool-approvals (decided, across runs), the caller's away: PUT, GET, DELETE
    # /api/me/away, Web Push: GET /api/push/key,
    # POST, GET /api/me/push-subscriptions, DELETE /api/me/push-subscriptions/{id}, POST /api/push/answer,
    # passkeys: POST /api/me/webauthn/register/options, POST /register, GET, DELETE /credentials[/{id}], POST
    # /step-up/options
    for path, method, op in operations:
        codes = {int(code): response for code, response in op["responses"].items()}
        ok = [code for code in codes if 200 <= code < 300]
        assert ok, (method, path)
        for code in ok:
            schema = codes[code]["content"]["application/json"]["schema"]
            refs = [schema.get("$ref")] if "$ref" in schema else [s["$ref"] for s in schema["anyOf"]]
            for ref in refs:
                assert schemas[ref.rsplit("/", 1)[-1]]["properties"], (method, path, ref)
        errors = [code for code in codes if code >= 400]
        assert {401, 422} <= set(errors), (method, path)
        for code in errors:
            assert codes[code]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/runs/has%20space", None),
        ("GET", "/api/runs/has%20space/events", None),
        ("POST", "/api/runs/has%20space/resume", {"answers": {"a": 1}}),
        ("GET", "/api/runs/has%20space/review", None),
        ("POST", "/api/runs/has%20space/questions", {"node": "n", "question": "q?"}),
        ("GET", "/api/runs/has%20space/interactions/pending", None),
        ("POST", "/api/runs/has%20space/interactions/i1/answer", {"answer": "x"}),
        ("POST", "/api/runs/has%20space/nodes/n/messages/drain", None),
        ("POST", "/api/runs/has%20space/await", {"timeout_seconds": 5}),
        ("PUT", "/api/runs/has%20space/agent-state/k", {"state": "s"}),
        ("POST", "/api/v1/interrupts", {"sessionId": "has space", "prompt": "p"}),
    ],
)
def test_a_bad_run_id_is_the_same_400_on_every_route(api: Any, method: str, path: str, body: Any) -> None:
    status, err = api(method, path, body)
    assert (status, err["error"]) == (400, "bad_request"), err
    assert "run_id must be" in err["message"]


def test_a_run_id_over_the_limit_is_a_400_naming_it(api: Any) -> None:
    from baton.domain.fields import MAX_RUN_ID_LENGTH

    status, err = api("POST", "/api/runs", {"workflow": "human_pause", "run_id": "r" * (MAX_RUN_ID_LENGTH + 1)})
    assert (status, err["error"]) == (400, "bad_request"), err
    assert f"1-{MAX_RUN_ID_LENGTH} characters" in err["message"]
    status, _ = api("POST", "/api/runs", {"workflow": "human_pause", "run_id": "r" * MAX_RUN_ID_LENGTH})
    assert status == 201


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/runs", {"workflow": "human_pause", "surprise": 1}),
        ("POST", "/api/runs/r1/resume", {"answers": {}, "surprise": 1}),
        ("POST", "/api/runs/r1/questions", {"node": "n", "question": "q?", "surprise": 1}),
        ("POST", "/api/runs/r1/interactions/i1/answer", {"answer": "x", "surprise": 1}),
        ("POST", "/api/runs/r1/await", {"timeout_seconds": 5, "surprise": 1}),
        ("POST", "/api/v1/interrupts", {"sessionId": "s1", "prompt": "p", "surprise": 1}),
        ("POST", "/api/v1/interrupts/i1/claim", {"surprise": 1}),
        ("POST", "/api/v1/interrupts/i1/resume", {"input": 1, "surprise": 1}),
        ("POST", "/api/v1/interrupts/i1/cancel", {"reason": "r", "surprise": 1}),
        ("GET", "/api/runs/r1/events?limit=0", None),
        ("GET", "/api/v1/interrupts?limit=0", None),
        ("GET", "/api/v1/interrupts/i1?waitSeconds=-1", None),
    ],
)
def test_a_body_or_query_failing_its_model_is_the_same_422_on_every_route(
    api: Any, method: str, path: str, body: Any
) -> None:
    status, err = api(method, path, body)
    assert (status, err["error"]) == (422, "validation_failed"), err
    assert err["problems"] and err["message"].startswith("invalid request:")


def test_a_named_local_operator_acts_under_its_name_and_a_forged_one_is_refused(api: Any, runs_in_core: None) -> None:
    from baton.api.auth import operator_token

    alice = operator_token(TOKEN, "alice@example.com")
    status, body = api("POST", "/api/runs/r1/resume", {"answers": {"ship": True}}, token=alice)
    assert status == 200 and body["resumed"] is True
    status, events = api("GET", "/api/runs/r1/events")
    assert status == 200
    assert "alice@example.com" in json.dumps([e for e in events["events"] if e["type"] != "run_started"])
    # Another name with alice's mac is no identity; a name outside the pattern is refused when minted.
    status, _ = api("GET", "/api/runs/r1", token=alice.replace("operator.alice@", "operator.mallory@"))
    assert status == 401
    with pytest.raises(ValueError, match="operator name"):
        operator_token(TOKEN, "bad name")
