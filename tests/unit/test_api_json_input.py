"""Text that is not valid Unicode and numbers Baton cannot keep are refused at the API's door (a 422
naming the field) on every route, through the real resolver: stored, they broke every read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from baton.api import deps
from baton.api.app import create_app
from baton.domain.json_input import MAX_INTEGER_DIGITS, load_json_input
from baton.errors import ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.runs import RunService

TOKEN = "local-secret"
HUGE = "1" * 5000  # past Python's int-from-string limit (4300 digits): a ValueError at parse


@pytest.fixture
def api(core: Core) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(method: str, path: str, raw: str = "") -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
        result = app.resolve(to_proxy_event(method, path, headers, raw.encode(), "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def _refused(status: int, body: Any, path: str, words: str) -> None:
    assert status == 422 and body["error"] == "validation_failed", body
    assert [p["path"] for p in body["problems"]] == [path] and words in body["problems"][0]["problem"], body


def test_a_lone_surrogate_question_is_refused_by_field_and_the_inbox_still_lists(api: Any, core: Core) -> None:
    # json.dumps writes the lone surrogate as the escape `\ud800`: the body on the wire is ASCII
    status, body = api("POST", "/api/runs/r1/questions", json.dumps({"node": "draft", "question": "q\ud800"}))
    _refused(status, body, "question", "lone surrogate U+D800")
    assert core.store.list_run_interactions("r1") == []
    status, body = api("POST", "/api/runs/r1/questions", json.dumps({"node": "draft", "question": "ok 😀 \u00e9"}))
    assert status == 201, body  # a valid pair (an emoji) is text like any other
    iid = body["interaction_id"]
    status, body = api("GET", "/api/inbox")
    assert status == 200 and [i["id"] for i in body["items"]] == [iid], body
    status, body = api("POST", f"/api/runs/r1/interactions/{iid}/answer", json.dumps({"answer": "a\udfff"}))
    _refused(status, body, "answer", "U+DFFF")
    status, body = api("POST", "/api/runs/r1/questions", json.dumps({"node": "draft", "question": "q", "\ud800": 1}))
    assert status == 422 and "key" in body["problems"][0]["problem"]
    assert "\\ud800" in body["problems"][0]["path"]  # shown back escaped: the error body is valid text too


def _routes(api: Any) -> dict[str, tuple[str, str]]:
    """Ask, answer, run start input, interrupt resume: each with a `%s` where the bad number goes."""
    status, body = api("POST", "/api/runs/r1/questions", json.dumps({"node": "draft", "question": "q"}))
    assert status == 201, body
    question = body["interaction_id"]
    schema = {"type": "number"}
    status, body = api("POST", "/api/v1/interrupts", json.dumps({"sessionId": "r1", "prompt": "p", "schema": schema}))
    assert status == 201, body
    return {
        "options": ("/api/runs/r1/questions", '{"node": "draft", "question": "q", "options": ["a"], "map_item": %s}'),
        "answer": (f"/api/runs/r1/interactions/{question}/answer", '{"answer": %s}'),
        "input.n": ("/api/runs", '{"workflow": "human_pause", "run_id": "r2", "input": {"n": %s}}'),
        "input": (f"/api/v1/interrupts/{body['id']}/resume", '{"input": %s}'),
    }


@pytest.mark.parametrize(
    ("number", "words"),
    [(HUGE, "5000 digits"), ("-" + HUGE, "5000 digits"), ("NaN", "NaN"), ("Infinity", "Infinity"), ("1e400", "range")],
)
def test_numbers_out_of_range_are_refused_by_field_on_every_route(
    api: Any, core: Core, number: str, words: str
) -> None:
    for field, (path, template) in _routes(api).items():
        where = "map_item" if field == "options" else field
        status, body = api("POST", path, template % number)
        _refused(status, body, where, words)
    assert core.store.get_run("r2") is None  # no hosted run started with it
    for field, (path, template) in _routes(api).items():
        if field != "options":  # the same bodies with a number in range are taken (an ask's map_item needs a Map)
            status, body = api("POST", path, template % "7")
            assert status in (200, 201), (field, body)


def test_the_door_keeps_what_dynamodb_keeps() -> None:
    top = "9" * MAX_INTEGER_DIGITS
    assert load_json_input(f'{{"a": [{top}, -{top}, 1.5e125, 2e-130, "é😀"]}}') == {
        "a": [int(top), -int(top), 1.5e125, 2e-130, "é😀"]
    }
    with pytest.raises(ValidationFailedError) as refused:
        load_json_input(f'{{"a": [1, {{"b": {top}9}}], "c": -Infinity, "d": 1e126, "e": 1e-131}}')
    assert [p["path"] for p in refused.value.details["problems"]] == ["a.1.b", "c", "d", "e"]
    with pytest.raises(json.JSONDecodeError):
        load_json_input('{"a": ')  # a syntax error is each door's to word
