"""The question routes through the real resolver on in-memory services: codes, bodies, and no side effects
on bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from baton.api import deps
from baton.api.app import create_app
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

    def call(method: str, path: str, body: Any = None, raw: str | None = None) -> Any:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
        data = raw if raw is not None else (json.dumps(body) if body is not None else "")
        result = app.resolve(to_proxy_event(method, path, headers, data.encode(), "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def test_post_answer_drain_and_409(api: Any) -> None:
    status, body = api("POST", "/api/runs/r1/questions", {"node": "draft", "question": "DB?", "options": ["pg", "ddb"]})
    assert status == 201 and body["message"] == "question posted; keep working"
    iid = body["interaction_id"]
    status, body = api("GET", "/api/runs/r1/interactions/pending")
    assert status == 200 and [q["interaction_id"] for q in body["pending"]] == [iid]
    assert body["pending"][0]["request"]["options"] == ["pg", "ddb"]
    status, body = api("POST", f"/api/runs/r1/interactions/{iid}/answer", {"answer": "pg"})
    assert status == 200 and body["queued"] is True and body["resumed"] is False
    status, body = api("POST", f"/api/runs/r1/interactions/{iid}/answer", {"answer": "ddb"})
    assert status == 409 and body["error"] == "conflict" and body["answer"] == "pg"
    status, body = api("POST", "/api/runs/r1/nodes/draft/messages/drain")
    assert status == 200 and [m["text"] for m in body["messages"]] == [f'[Answer to question {iid}] Q: "DB?" — A: pg']
    status, body = api("POST", "/api/runs/r1/nodes/draft/messages/drain")
    assert status == 200 and body["messages"] == []


def test_bad_inputs_are_clear_4xx_and_change_nothing(api: Any, core: Core) -> None:
    status, body = api("POST", "/api/runs/r1/questions", {"node": "draft", "question": "Pick", "options": ["a", "b"]})
    iid = body["interaction_id"]
    events_before = len(core.store.list_events("r1"))
    cases = [
        ("POST", f"/api/runs/r1/interactions/{iid}/answer", {"answer": "c"}, 422, "one of the options"),
        ("POST", f"/api/runs/r1/interactions/{iid}/answer", {"answer": ""}, 422, "empty"),
        ("POST", f"/api/runs/r1/interactions/{iid}/answer", {}, 422, "answer"),
        ("POST", f"/api/runs/r1/interactions/{iid}/answer", {"answer": "a", "x": 1}, 422, "x"),
        ("POST", "/api/runs/r1/interactions/NOPE/answer", {"answer": "a"}, 404, "NOPE"),
        ("POST", f"/api/runs/ghost/interactions/{iid}/answer", {"answer": "a"}, 404, "ghost"),
        ("GET", "/api/runs/ghost/interactions/pending", None, 404, "ghost"),
        ("POST", "/api/runs/ghost/nodes/draft/messages/drain", None, 404, "ghost"),
        ("POST", "/api/runs/ghost/await", {"timeout_seconds": 5}, 404, "ghost"),
        ("POST", "/api/runs/r1/await", {}, 422, "timeout_seconds"),
        ("POST", "/api/runs/r1/await", {"timeout_seconds": 0}, 422, "timeout_seconds"),
        ("POST", "/api/runs/r1/questions", {"node": "draft", "question": "x" * 4001}, 413, "4000"),
        ("POST", "/api/runs/r1/questions", {"node": "draft", "question": ""}, 422, "empty"),
        ("POST", "/api/runs/r1/questions", {"question": "?"}, 422, "node"),
        ("POST", "/api/runs/r1/questions", {"node": "draft", "question": "?", "map_item": 2}, 422, "Map iteration"),
        ("POST", "/api/runs/r1/await", {"timeout_seconds": 5, "map_item": 0}, 422, "Map iteration"),
        ("POST", "/api/runs/bad run/questions", {"node": "draft", "question": "?"}, 400, "run_id"),
    ]
    for method, path, payload, code, words in cases:
        status, body = api(method, path, payload)
        assert status == code, (path, payload, body)
        assert words in body["message"], (path, body)
    status, body = api("POST", f"/api/runs/r1/interactions/{iid}/answer", raw='{"answer": ')
    assert status == 400
    assert len(core.store.list_events("r1")) == events_before
    assert [i.interaction_id for i in core.store.list_run_interactions("r1")] == [iid]
    assert core.store.get_interaction("r1", iid).state.status == "pending"  # type: ignore[union-attr]
    assert core.store.get_run("ghost") is None


def test_await_tool_202_then_200(api: Any, core: Core) -> None:
    status, body = api("POST", "/api/runs/r1/questions", {"node": "draft", "question": "Go?"})
    iid = body["interaction_id"]
    status, body = api("POST", "/api/runs/r1/await", {"timeout_seconds": 60, "from": "draft"})
    assert status == 202 and body["pending"] == [iid] and body["run_status"] == "paused_waiting_human"
    assert core.store.get_run("r1").status == "paused_waiting_human"  # type: ignore[union-attr]
    api("POST", f"/api/runs/r1/interactions/{iid}/answer", {"answer": "yes"})
    status, body = api("POST", "/api/runs/r1/await", {"timeout_seconds": 60, "from": "draft"})
    assert status == 200 and body["answers"] == [
        {"interaction_id": iid, "node": "draft", "question": "Go?", "answer": "yes"}
    ]
    assert core.store.get_run("r1").status == "running"  # type: ignore[union-attr]


def test_routes_are_in_the_openapi_document(api: Any) -> None:
    _status, body = api("GET", "/api/openapi.json")
    paths = body["paths"]
    for path in (
        "/api/runs/{run_id}/questions",
        "/api/runs/{run_id}/interactions/pending",
        "/api/runs/{run_id}/interactions/{interaction_id}/answer",
        "/api/runs/{run_id}/nodes/{node}/messages/drain",
        "/api/runs/{run_id}/await",
    ):
        assert path in paths, path
