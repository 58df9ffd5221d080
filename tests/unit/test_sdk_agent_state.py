"""The SDK's agent-state calls (baton/client/agent_state.py) through the real resolver on in-memory
services (an httpx MockTransport into it, as tests/unit/test_sdk_pauses.py): what goes on the wire, the
typed results, None for a state not kept, and a moved version raised as a ConflictError naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from baton.api import deps
from baton.api.app import create_app
from baton.api.auth import agent_token
from baton.client.sdk import Client
from baton.contracts.agent_state import AgentStateDeleted, AgentStateView, AgentStateWritten
from baton.errors import ConflictError, ForbiddenError
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.runs import RunService

if TYPE_CHECKING:
    from baton.services.core import Core

TOKEN = "local-secret"
RUN = "sdk-run"


@pytest.fixture
def sent() -> list[tuple[str, str, Any]]:
    return []


@pytest.fixture
def handle(core: Core, sent: list[tuple[str, str, Any]]) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        sent.append((request.method, path, json.loads(request.content) if request.content else None))
        event = to_proxy_event(request.method, path, dict(request.headers), request.content, "127.0.0.1")
        result = app.resolve(event, None)
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())

    core.ensure_run(RUN)
    yield answer
    deps.set_services_provider(deps._default_provider)


def _client(handle: Any, run: str = RUN) -> Client:
    return Client("http://baton.test", agent_token(TOKEN, run), transport=httpx.MockTransport(handle))


def test_put_get_delete_round_trip_as_the_runs_agent(handle: Any, sent: list[tuple[str, str, Any]]) -> None:
    client = _client(handle)
    assert client.get_agent_state(RUN, "k.1") is None
    written = client.put_agent_state(RUN, "k.1", '{"a": 1}')
    assert isinstance(written, AgentStateWritten) and written.version == 1
    assert sent[-1] == ("PUT", f"/api/runs/{RUN}/agent-state/k.1", {"state": '{"a": 1}'})  # no version: unconditional
    assert client.put_agent_state(RUN, "k.1", "two", version=1).version == 2
    assert sent[-1][2] == {"state": "two", "version": 1}
    kept = client.get_agent_state(RUN, "k.1")
    assert isinstance(kept, AgentStateView) and (kept.state, kept.version) == ("two", 2)
    assert client.delete_agent_state(RUN, "k.1") == AgentStateDeleted(run_id=RUN, key="k.1", deleted=True)
    assert client.get_agent_state(RUN, "k.1") is None


def test_a_moved_version_raises_a_conflict_naming_the_current_one(handle: Any) -> None:
    client = _client(handle)
    client.put_agent_state(RUN, "k", "one", version=0)
    with pytest.raises(ConflictError) as moved:
        client.put_agent_state(RUN, "k", "again", version=0)
    assert moved.value.details["version"] == 1
    assert client.get_agent_state(RUN, "k") is not None


def test_another_runs_agent_is_refused_not_told_none(handle: Any) -> None:
    _client(handle).put_agent_state(RUN, "k", "mine")
    with pytest.raises(ForbiddenError):
        _client(handle, "other-run").get_agent_state(RUN, "k")
