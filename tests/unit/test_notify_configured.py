"""Item 6 of issue 10 (and issue 18's loose edge): a notify channel the team's stack does not wire is a
422 at creation, naming the field and the configured channels, for questions, blocking asks, interrupts
and hosted runs alike, through the one check (`Core.check_notify`, baton/domain/channels.py); nothing
is stored. The configured set comes from `BATON_NOTIFY_CHANNELS`."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from baton.api import deps
from baton.api.app import create_app
from baton.errors import ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.asks import AskService, BlockingAsk
from baton.services.core import Core
from baton.services.questions import QuestionService
from baton.services.runs import RunService
from baton.workflows.resources import WORKFLOW_DEFAULTS

TOKEN = "local-secret"
ROUTES = [
    ("/api/runs/r1/questions", {"node": "draft", "question": "DB?"}),
    ("/api/runs/r1/asks", {"node": "agent", "question": "drop it?", "timeout_seconds": 60}),
    ("/api/v1/interrupts", {"sessionId": "r1", "prompt": "Pick one"}),
    ("/api/runs", {"workflow": "human_pause", "input": {"prompt": "Ship?"}}),
]


@pytest.fixture
def app(core: Core) -> Iterator[Any]:
    core.channels = ("console", "webhook")  # a stack with the webhook wired, and no Slack
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core, input_defaults=WORKFLOW_DEFAULTS))
    deps.set_services_provider(lambda: services)
    yield create_app()
    deps.set_services_provider(deps._default_provider)


def _post(app: Any, path: str, body: Any) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    result = app.resolve(to_proxy_event("POST", path, headers, json.dumps(body).encode(), "127.0.0.1"), None)
    return result["statusCode"], json.loads(result["body"])


def _snapshot(core: Core) -> Any:
    store: Any = core.store
    return copy.deepcopy((store.runs, store.interactions, store.events, store.waits))


def _with_notify(path: str, body: dict[str, Any], notify: list[str]) -> dict[str, Any]:
    if path == "/api/runs":
        return {**body, "input": {**body["input"], "notify": notify}}
    return {**body, "notify": notify}


@pytest.mark.parametrize(("path", "body"), ROUTES, ids=["question", "ask", "interrupt", "hosted-run"])
def test_an_unwired_channel_is_a_422_naming_the_field_and_the_configured_ones(
    app: Any, core: Core, path: str, body: dict[str, Any]
) -> None:
    before = _snapshot(core)
    status, err = _post(app, path, _with_notify(path, body, ["console", "slack"]))
    assert (status, err["error"]) == (422, "validation_failed"), err
    field = "input.notify" if path == "/api/runs" else "notify"
    assert "'slack' is not configured" in err["message"] and "configured: console, webhook" in err["message"]
    assert err["field"] == field and err["path"] == f"{field}[1]"
    assert err["configured"] == ["console", "webhook"]
    assert _snapshot(core) == before
    assert core.workflows.started == []  # type: ignore[attr-defined]
    status, _ = _post(app, path, _with_notify(path, body, ["console", "webhook"]))
    assert status == 201  # a wired channel is accepted


def test_the_services_refuse_too_the_one_check_behind_every_door(core: Core) -> None:
    core.channels = ("console",)
    with pytest.raises(ValidationFailedError, match="'email' is not configured"):
        QuestionService(core).ask("r1", node="n", question="q?", caller="agent", notify=["email"])
    with pytest.raises(ValidationFailedError, match="'slack' is not configured"):
        AskService(core).ask(
            BlockingAsk("r1", node="n", question="q?", timeout_seconds=60, caller="agent", notify=["slack"])
        )
    assert core.store.get_run("r1") is None


def test_the_configured_channels_come_from_the_environment() -> None:
    settings = Settings.from_env({"BATON_TABLE_NAME": "t", "BATON_NOTIFY_CHANNELS": "console, slack"})
    assert settings.notify_channels == ("console", "slack")
    assert Settings.from_env({"BATON_TABLE_NAME": "t"}).notify_channels == ()  # unsaid: every known channel
