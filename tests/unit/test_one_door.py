"""Validation at one door: the same bad input gets the same status code on every route that takes it."""

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

    def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
        data = json.dumps(body).encode() if body is not None else b""
        result = app.resolve(to_proxy_event(method, path, headers, data, "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


BAD_RUN_ID = "bad run"  # a space: not an execution name
ROUTES_TAKING_A_RUN_ID: list[tuple[str, str, Any]] = [
    ("POST", "/api/runs", {"workflow": "human_pause", "run_id": BAD_RUN_ID}),
    ("GET", f"/api/runs/{BAD_RUN_ID}", None),
    ("GET", f"/api/runs/{BAD_RUN_ID}/events", None),
    ("POST", f"/api/runs/{BAD_RUN_ID}/resume", {"answers": {"ok": True}}),
    ("POST", f"/api/runs/{BAD_RUN_ID}/questions", {"node": "draft", "question": "?"}),
    ("GET", f"/api/runs/{BAD_RUN_ID}/interactions/pending", None),
    ("POST", f"/api/runs/{BAD_RUN_ID}/await", {"timeout_seconds": 5}),
    ("POST", f"/api/runs/{BAD_RUN_ID}/nodes/draft/messages/drain", None),
    ("POST", "/api/v1/interrupts", {"sessionId": BAD_RUN_ID, "prompt": "?"}),
    ("GET", f"/api/v1/interrupts?sessionId={BAD_RUN_ID}", None),
]


@pytest.mark.parametrize(
    ("method", "path", "body"), ROUTES_TAKING_A_RUN_ID, ids=[p for _, p, _ in ROUTES_TAKING_A_RUN_ID]
)
def test_a_bad_run_id_is_400_on_every_route(api: Any, method: str, path: str, body: Any) -> None:
    status, error = api(method, path.replace(" ", "%20"), body)
    assert status == 400 and "run_id" in error["message"], (status, error)


def test_a_bad_node_name_is_422_on_every_route(api: Any) -> None:
    for method, path, body in [
        ("POST", "/api/runs/r1/questions", {"node": "bad node!", "question": "?"}),
        ("POST", "/api/runs/r1/nodes/bad!node/messages/drain", None),
        ("POST", "/api/runs/r1/await", {"from": "bad node!", "timeout_seconds": 5}),
        ("POST", "/api/runs/r1/resume", {"answers": {"ok": True}, "node": "bad node!"}),
    ]:
        status, error = api(method, path, body)
        assert status == 422 and "node" in error["message"], (path, status, error)


def test_an_unbounded_wait_or_an_empty_prompt_is_422_on_every_route(api: Any) -> None:
    for body_path, body in [
        ("/api/runs/r1/await", {"timeout_seconds": 0}),
        ("/api/v1/interrupts", {"sessionId": "s1", "prompt": "x", "timeoutMs": 0}),
        ("/api/v1/interrupts", {"sessionId": "s1", "prompt": "   "}),
        ("/api/runs/r1/questions", {"node": "draft", "question": "   "}),
    ]:
        status, _ = api("POST", body_path, body)
        assert status == 422, (body_path, body, status)
