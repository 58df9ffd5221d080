"""`GET /api/inbox` and `GET /api/me` through the real resolver on in-memory services: the items of
every kind across runs, the filters, the order, the pages and their tokens, what an item blocks, and
who may read it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.api.auth import agent_token, operator_token
from baton.domain.gate_payloads import ParkPayload
from baton.local.http_adapter import to_proxy_event
from baton.services.core import Core
from baton.services.questions import QuestionService
from baton.services.runs import RunService
from tests.conftest import FixedClock
from tests.unit.conftest import LOCAL_TOKEN

TOKEN = LOCAL_TOKEN  # the `app` fixture's (tests/unit/conftest.py)


@pytest.fixture
def api(app: Any) -> Any:
    def call(method: str, path: str, body: Any = None, token: str = TOKEN) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        data = json.dumps(body) if body is not None else ""
        result = app.resolve(to_proxy_event(method, path, headers, data.encode(), "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    return call


def _ask(api: Any, run: str, question: str, node: str = "draft", options: list[str] | None = None) -> str:
    status, body = api("POST", f"/api/runs/{run}/questions", {"node": node, "question": question, "options": options})
    assert status == 201, body
    return str(body["interaction_id"])


def _interrupt(api: Any, run: str, prompt: str = "Choose target") -> str:
    schema = {"type": "enum", "enum": ["staging", "production"]}
    status, body = api("POST", "/api/v1/interrupts", {"sessionId": run, "prompt": prompt, "schema": schema})
    assert status == 201, body
    return str(body["id"])


def _ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


def test_every_kind_across_runs_newest_first_with_what_the_ui_needs(api: Any, clock: FixedClock) -> None:
    q1 = _ask(api, "run-a", "Which database?", options=["postgres", "mysql"])
    clock.advance(10)
    i1 = _interrupt(api, "run-b")
    clock.advance(5)
    status, page = api("GET", "/api/inbox")
    assert status == 200, page
    assert _ids(page) == [i1, q1] and page["count"] == 2 and page["next"] is None
    interrupt, question = page["items"]
    assert question["kind"] == "question" and question["run_id"] == "run-a" and question["node"] == "draft"
    assert question["prompt"] == "Which database?" and question["options"] == ["postgres", "mysql"]
    assert question["allow_free_text"] is False and question["waited_s"] == 15
    assert question["blocks"] == {"gate": None, "run_id": "run-a"}  # nobody awaits it yet
    assert {"name": "answer", "method": "POST", "path": f"/api/runs/run-a/interactions/{q1}/answer"} in question[
        "actions"
    ]
    assert interrupt["kind"] == "interrupt" and interrupt["prompt"] == "Choose target"
    assert interrupt["answer_schema"] == {"type": "enum", "enum": ["staging", "production"]}
    assert interrupt["answer_schema_form"] == "light" and interrupt["waited_s"] == 5
    names = {a["name"]: a["path"] for a in interrupt["actions"]}
    assert names["claim"] == f"/api/v1/interrupts/{i1}/claim" and names["resume"] == f"/api/v1/interrupts/{i1}/resume"
    assert names["cancel"] == f"/api/v1/interrupts/{i1}/cancel"
    status, oldest = api("GET", "/api/inbox?order=oldest")
    assert _ids(oldest) == [q1, i1]


def test_filters_kind_run_node_claimed_and_age(api: Any, clock: FixedClock) -> None:
    q_old = _ask(api, "run-a", "old?", node="plan")
    clock.advance(120)
    q_new = _ask(api, "run-b", "new?")
    i1 = _interrupt(api, "run-a")
    clock.advance(1)
    assert _ids(api("GET", "/api/inbox?kind=question")[1]) == [q_new, q_old]
    assert _ids(api("GET", "/api/inbox?kind=question&kind=interrupt")[1]) == [i1, q_new, q_old]
    assert _ids(api("GET", "/api/inbox?kind=question,interrupt")[1]) == [i1, q_new, q_old]
    assert _ids(api("GET", "/api/inbox?kind=interrupt")[1]) == [i1]
    assert _ids(api("GET", "/api/inbox?run=run-a")[1]) == [i1, q_old]
    assert _ids(api("GET", "/api/inbox?node=plan")[1]) == [q_old]
    assert _ids(api("GET", "/api/inbox?min_age_s=60")[1]) == [q_old]
    status, claimed = api("POST", f"/api/v1/interrupts/{i1}/claim", {})
    assert status == 200, claimed
    assert _ids(api("GET", "/api/inbox?claimed=me")[1]) == [i1]
    assert _ids(api("GET", "/api/inbox?claimed=unclaimed")[1]) == [q_new, q_old]
    bob = operator_token(TOKEN, "bob")
    status, body = api("POST", f"/api/v1/interrupts/{i1}/claim", {"force": True, "reason": "away"}, token=bob)
    assert status == 200, body
    assert _ids(api("GET", "/api/inbox?claimed=me")[1]) == []
    page = api("GET", "/api/inbox?kind=interrupt")[1]
    assert page["items"][0]["claimed_by"] == "bob"


def test_an_answered_item_leaves_the_inbox(api: Any) -> None:
    q1 = _ask(api, "run-a", "Which?")
    q2 = _ask(api, "run-a", "And?")
    status, body = api("POST", f"/api/runs/run-a/interactions/{q1}/answer", {"answer": "this"})
    assert status == 200, body
    assert _ids(api("GET", "/api/inbox")[1]) == [q2]


def test_pages_follow_each_other_and_tokens_are_checked(api: Any, clock: FixedClock) -> None:
    asked = []
    for n in range(7):
        asked.append(_ask(api, f"run-{n % 3}", f"q{n}"))
        clock.advance(1)
    _interrupt(api, "run-x")
    seen: list[str] = []
    status, page = api("GET", "/api/inbox?limit=3&kind=question")
    while True:
        assert status == 200, page
        seen += _ids(page)
        if page["next"] is None:
            break
        status, page = api("GET", f"/api/inbox?limit=3&kind=question&next={page['next']}")
    assert seen == list(reversed(asked))
    first = api("GET", "/api/inbox?limit=3&kind=question")[1]
    status, body = api("GET", f"/api/inbox?limit=3&next={first['next']}")  # issued for kind=question only
    assert status == 400 and body["error"] == "bad_request" and body["field"] == "next"
    for forged in ("garbage", "eyJwIjoiMSIsImYiOltdfQ", "eyJwIjoxfQ"):
        status, body = api("GET", f"/api/inbox?kind=question&next={forged}")
        assert status == 400 and body["field"] == "next", body


@pytest.mark.parametrize(
    "query",
    ["kind=poll", "claimed=mine", "order=random", "limit=0", "limit=201", "min_age_s=-1", "run=has%20space"],
)
def test_bad_filters_are_422_or_400(api: Any, query: str) -> None:
    status, body = api("GET", f"/api/inbox?{query}")
    assert status in (400, 422) and body["error"] in ("bad_request", "validation_failed"), body


def test_blocks_names_the_parked_gate_and_no_token_leaves(api: Any, core: Core) -> None:
    q1 = _ask(api, "run-a", "Which?")
    QuestionService(core).park_gate(run_id="run-a", gate="await_answers", token="SECRET-TOKEN-1", timeout_seconds=300)
    q2 = _ask(api, "run-a", "Asked after the gate parked")  # in the gate's scope: it blocks it too
    RunService(core).park(
        ParkPayload(run_id="run-b", node="approve", token="SECRET-TOKEN-2", prompt="Ship?", timeout_seconds=60)
    )
    status, page = api("GET", "/api/inbox")
    assert status == 200
    by_id = {item["id"]: item for item in page["items"]}
    assert by_id[q1]["blocks"] == {"gate": "await_answers", "run_id": "run-a"}
    assert by_id[q2]["blocks"] == {"gate": "await_answers", "run_id": "run-a"}
    (pause,) = [item for item in page["items"] if item["kind"] == "ask"]
    assert pause["blocks"] == {"gate": "approve", "run_id": "run-b"} and pause["prompt"] == "Ship?"
    assert {"name": "resume", "method": "POST", "path": "/api/runs/run-b/resume"} in pause["actions"]
    assert "SECRET-TOKEN" not in json.dumps(page)


def test_agents_get_403_and_me_says_who_is_calling(api: Any) -> None:
    _ask(api, "run-a", "Which?")
    agent = agent_token(TOKEN, "run-a")
    status, body = api("GET", "/api/inbox", token=agent)
    assert status == 403 and body["error"] == "forbidden"
    assert api("GET", "/api/me")[1] == {
        "principal": "local-operator",
        "role": "operator",
        "via": "local-token",
        "run_id": None,
        "session": False,
        "passkeys": False,  # no relying party set: the inbox shows no Passkeys menu (and asks nothing)
    }
    status, me = api("GET", "/api/me", token=agent)
    assert status == 200 and me["role"] == "agent" and me["run_id"] == "run-a"
    status, body = api("GET", "/api/inbox", token="wrong")
    assert status == 401


def test_the_openapi_document_declares_the_inbox(api: Any) -> None:
    status, doc = api("GET", "/api/openapi.json")
    assert status == 200
    inbox = doc["paths"]["/api/inbox"]["get"]
    assert {"200", "400", "401", "403", "422"} <= set(inbox["responses"])
    assert "InboxPage" in json.dumps(inbox["responses"]["200"])
    params = {p["name"] for p in inbox["parameters"]}
    assert {"kind", "run", "node", "claimed", "min_age_s", "order", "limit", "next"} <= params
    assert "/api/me" in doc["paths"]
