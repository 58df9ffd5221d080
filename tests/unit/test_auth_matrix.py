"""The authorization matrix: every route x every kind of identity, through the real resolver.

Two doors, the same matrix: the local stack's bearer tokens, and the deployed IAM path (API Gateway
proxy events carrying `requestContext.identity.userArn`, as the machines' API sends them, with the
agent role's sessions named `run-<run_id>`). For each route and identity the expected answer is:

| identity                         | agent route (on its run) | operator route |
|----------------------------------|--------------------------|----------------|
| none                             | 401                      | 401            |
| wrong (unknown token / no run)   | 401 local, 403 IAM       | same           |
| forged (bad mac / run-less user) | 401 local, 403 IAM       | same           |
| agent A on run B                 | 403                      | 403            |
| agent A on its own run           | allowed                  | 403            |
| operator                         | allowed                  | allowed        |

"allowed" is any answer the route gives past authorization (2xx, or a domain 404/409/410), never
401/403/5xx. A credential route (`POST /api/push/answer`: the signed one-tap credential in its body is the
authority) answers every identity alike: a forged credential is the same 400 with or without a caller.
The route list is read from the served OpenAPI document, so a new route fails here until it is classified.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from baton.api import deps
from baton.api.app import create_app
from baton.api.auth import agent_token
from baton.channels.push.answers import PushAnswers
from baton.channels.push.web_push import VapidKeys
from baton.contracts import AskRequest
from baton.domain.interrupt_spec import InterruptSpec
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.questions import QuestionService
from baton.services.runs import RunService
from tests.fakes.links import MemoryAnswerLinks
from tests.fakes.memory import MemoryPushSubscriptions
from tests.fakes.passkeys import MemoryPasskeys

TOKEN = "local-secret"
ACCOUNT = "123456789012"
AGENT_ROLE = "baton-alpha-agent"
RUN_A, RUN_B = "run-a", "run-b"
VAPID_KEYS = VapidKeys.generate()
TOMORROW = (datetime.now(UTC) + timedelta(days=1)).isoformat()  # an away within its bounds


def _agent_arn(session: str) -> str:
    return f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE}/{session}"


@dataclass(frozen=True)
class Route:
    method: str
    template: str  # {run}, {question}, {interrupt} are filled with the target run's ids
    body: Any = None
    operator_only: bool = False
    runless: bool = False  # about the caller, not a run: any admitted identity may call it
    credential: bool = False  # its body's credential is the authority: no identity is read


ROUTES = [
    Route("POST", "/api/runs", {"workflow": "human_pause", "input": {"prompt": "?"}}, operator_only=True),
    Route("GET", "/api/runs/{run}"),
    Route("GET", "/api/runs/{run}/events"),
    Route("POST", "/api/runs/{run}/resume", {"answers": {"ok": True}}, operator_only=True),
    Route("POST", "/api/runs/{run}/stop", {"reason": "no"}, operator_only=True),
    Route("GET", "/api/runs/{run}/review"),
    Route("GET", "/api/runs/{run}/review/diff"),
    Route("POST", "/api/runs/{run}/questions", {"node": "draft", "question": "which?"}),
    Route("GET", "/api/runs/{run}/interactions/pending"),
    Route("POST", "/api/runs/{run}/interactions/{question}/answer", {"answer": "x"}, operator_only=True),
    Route("POST", "/api/runs/{run}/nodes/draft/messages/drain"),
    Route("POST", "/api/runs/{run}/await", {"timeout_seconds": 5}),
    Route("POST", "/api/runs/{run}/asks", {"node": "agent", "question": "drop the table?", "timeout_seconds": 60}),
    Route("GET", "/api/runs/{run}/asks"),
    Route("GET", "/api/runs/{run}/asks/{question}"),
    Route(
        "POST",
        "/api/runs/{run}/tool-approvals",
        {"call": {"tool": "Bash", "arguments": {"command": "ls"}}, "reason": "list", "timeout_seconds": 60},
    ),
    Route("GET", "/api/runs/{run}/tool-approvals/{question}"),
    Route("POST", "/api/runs/{run}/tool-approvals/{question}/consume", {"digest": "0" * 64}),
    Route("POST", "/api/runs/{run}/tool-approvals/{question}/claim", {}, operator_only=True),
    Route("POST", "/api/runs/{run}/tool-approvals/{question}/claim/renew", {}, operator_only=True),
    Route("POST", "/api/runs/{run}/tool-approvals/{question}/claim/release", {}, operator_only=True),
    Route("POST", "/api/runs/{run}/tool-approvals/{question}/reassign", {"to": "bob"}, operator_only=True),
    Route("GET", "/api/runs/{run}/tool-grants"),
    Route("DELETE", "/api/runs/{run}/tool-grants/{question}", operator_only=True),
    Route("PUT", "/api/runs/{run}/agent-state/openai-agents.s1", {"state": "{}"}),
    Route("GET", "/api/runs/{run}/agent-state/openai-agents.s1"),
    Route("DELETE", "/api/runs/{run}/agent-state/openai-agents.s1"),
    Route("GET", "/api/v1/interrupts?sessionId={run}"),
    Route("POST", "/api/v1/interrupts", {"sessionId": "{run}", "prompt": "deploy?"}),
    Route("GET", "/api/v1/interrupts/{interrupt}"),
    Route("POST", "/api/v1/interrupts/{interrupt}/claim", {}, operator_only=True),
    Route("POST", "/api/v1/interrupts/{interrupt}/claim/renew", {}, operator_only=True),
    Route("POST", "/api/v1/interrupts/{interrupt}/claim/release", {}, operator_only=True),
    Route("POST", "/api/v1/interrupts/{interrupt}/reassign", {"to": "bob"}, operator_only=True),
    Route("POST", "/api/v1/interrupts/{interrupt}/resume", {"input": "x"}, operator_only=True),
    Route("POST", "/api/v1/interrupts/{interrupt}/cancel", {"reason": "no"}, operator_only=True),
    Route("GET", "/api/inbox?run={run}", operator_only=True),
    Route("GET", "/api/tool-approvals?status=answered", operator_only=True),
    Route("GET", "/api/stats/waits", operator_only=True),
    Route("GET", "/api/runs/{run}/audit", operator_only=True),
    Route("GET", "/api/runs/{run}/audit/verify", operator_only=True),
    Route("GET", "/api/me", runless=True),
    Route("PUT", "/api/me/away", {"until": TOMORROW, "delegate": "bob"}, operator_only=True),
    Route("GET", "/api/me/away", operator_only=True),
    Route("DELETE", "/api/me/away", operator_only=True),
    Route("GET", "/api/push/key", operator_only=True),
    Route(
        "POST",
        "/api/me/push-subscriptions",
        {"endpoint": "https://push.test/a", "keys": {"p256dh": "B", "auth": "a"}},
        operator_only=True,
    ),
    Route("GET", "/api/me/push-subscriptions", operator_only=True),
    Route("DELETE", "/api/me/push-subscriptions/ps-unknown", operator_only=True),
    Route("POST", "/api/push/answer", {"credential": "forged.credential", "answer": "x"}, credential=True),
    Route("POST", "/api/me/webauthn/register/options", operator_only=True),
    Route("POST", "/api/me/webauthn/register", {"credential": {"id": "x"}}, operator_only=True),
    Route("GET", "/api/me/webauthn/credentials", operator_only=True),
    Route("DELETE", "/api/me/webauthn/credentials/cred-unknown", operator_only=True),
    Route(
        "POST",
        "/api/me/webauthn/step-up/options",
        {"run_id": "{run}", "interaction_id": "i-1", "answer": {"decision": "approve"}},
        operator_only=True,
    ),
]

# (door, identity, the run the request targets)
IDENTITIES = {
    "none": RUN_A,
    "wrong": RUN_A,
    "forged": RUN_A,
    "agent_a_on_b": RUN_B,
    "agent_a_own_run": RUN_A,
    "operator": RUN_A,
}


def _local_headers(identity: str) -> dict[str, str]:
    token = {
        "none": None,
        "wrong": "not-the-token",
        "forged": agent_token(TOKEN, RUN_A).replace(f"agent.{RUN_A}.", f"agent.{RUN_B}."),  # A's mac, B's run
        "agent_a_on_b": agent_token(TOKEN, RUN_A),
        "agent_a_own_run": agent_token(TOKEN, RUN_A),
        "operator": TOKEN,
    }[identity]
    return {"Authorization": f"Bearer {token}"} if token else {}


def _iam_identity(identity: str) -> dict[str, str] | None:
    arn = {
        "none": None,
        "wrong": _agent_arn("bob"),  # an agent role session not started for a run
        "forged": f"arn:aws:iam::{ACCOUNT}:user/agents/run-{RUN_B}",  # an agent user named like a run session
        "agent_a_on_b": _agent_arn(f"run-{RUN_A}"),
        "agent_a_own_run": _agent_arn(f"run-{RUN_A}"),
        "operator": f"arn:aws:sts::{ACCOUNT}:assumed-role/operators/alice",
    }[identity]
    return None if arn is None else {"userArn": arn, "caller": f"AROAEXAMPLE:{arn.rsplit('/', 1)[-1]}"}


def _expected(door: str, identity: str, route: Route) -> str:
    if route.credential:
        return "credential"
    if identity == "none":
        return "401"
    if identity in ("wrong", "forged"):
        return "401" if door == "local" else "403"
    if (identity == "agent_a_on_b" and not route.runless) or (identity == "agent_a_own_run" and route.operator_only):
        return "403"
    return "allowed"


class World:
    """Two runs, each with a pending question and a pending interrupt, behind the real resolver."""

    def __init__(self, core: Core, door: str) -> None:
        settings = {"BATON_TABLE_NAME": "t", "BATON_WEBAUTHN_RP_ID": "inbox.test"}
        if door == "local":
            settings["BATON_LOCAL_API_TOKEN"] = TOKEN
        else:
            settings["BATON_AGENT_ROLE_NAME"] = AGENT_ROLE
            settings["BATON_AGENT_PRINCIPAL_PATTERN"] = ":user/agents/"
        self.services = Services(
            settings=Settings.model_validate(settings),
            core=core,
            runs=RunService(core),
            push_subscriptions=MemoryPushSubscriptions(),
            one_tap_answers=PushAnswers(core, MemoryAnswerLinks(), lambda: VAPID_KEYS),
            passkeys=MemoryPasskeys(),
        )
        self.door = door
        self.ids: dict[str, dict[str, str]] = {}
        for run in (RUN_A, RUN_B):
            question = QuestionService(core).ask(run, AskRequest(node="draft", question="which?"), caller="agent")
            interrupt, _ = InterruptService(core).create(InterruptSpec(session_id=run, prompt="go?"), caller="agent")
            self.ids[run] = {"run": run, "question": question["interaction_id"], "interrupt": interrupt.interaction_id}
        deps.set_services_provider(lambda: self.services)
        self.app = create_app()

    def call(self, identity: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if self.door == "local":
            headers |= _local_headers(identity)
        data = json.dumps(body).encode() if body is not None else b""
        event = to_proxy_event(method, path, headers, data, "127.0.0.1")
        if self.door == "iam":
            iam = _iam_identity(identity)
            if iam is not None:
                event["requestContext"]["identity"] |= iam
        result = self.app.resolve(event, None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    def request(self, route: Route, run: str) -> tuple[str, str, Any]:
        ids = self.ids[run]
        path = route.template.format(**ids)
        body = json.loads(json.dumps(route.body).replace("{run}", run)) if route.body is not None else None
        return route.method, path, body


@pytest.fixture
def world(core: Core) -> Any:
    made: list[World] = []

    def make(door: str) -> World:
        made.append(World(core, door))
        return made[-1]

    yield make
    deps.set_services_provider(deps._default_provider)


def _route_id(route: Route) -> str:
    return f"{route.method} {route.template}"


@pytest.mark.parametrize("door", ["local", "iam"])
@pytest.mark.parametrize("identity", list(IDENTITIES))
@pytest.mark.parametrize("route", ROUTES, ids=_route_id)
def test_matrix(world: Callable[[str], World], door: str, identity: str, route: Route) -> None:
    w = world(door)
    status, body = w.call(identity, *w.request(route, IDENTITIES[identity]))
    expected = _expected(door, identity, route)
    if expected == "credential":  # only the credential counts, for every identity alike
        assert (status, body["reason"]) == (400, "malformed"), (status, body)
    elif expected == "allowed":
        assert status not in (401, 403) and status < 500, (status, body)
    else:
        assert status == int(expected), (status, body)
        assert body["error"] == ("unauthorized" if expected == "401" else "forbidden")


def test_the_matrix_covers_every_route_of_the_api(world: Callable[[str], World]) -> None:
    w = world("local")
    status, doc = w.call("none", "GET", "/api/openapi.json")
    assert status == 200
    served = {(method.upper(), path) for path, ops in doc["paths"].items() for method in ops}
    names = {"{run}": "{run_id}", "{question}": "{interaction_id}", "{interrupt}": "{interrupt_id}"}
    names["/draft/"] = "/{node}/"
    names["/tool-grants/{interaction_id}"] = "/tool-grants/{grant_id}"
    names["/agent-state/openai-agents.s1"] = "/agent-state/{key}"
    names["/push-subscriptions/ps-unknown"] = "/push-subscriptions/{subscription_id}"
    names["/credentials/cred-unknown"] = "/credentials/{credential_id}"
    covered = set()
    for r in ROUTES:
        path = r.template.split("?")[0]
        for ours, theirs in names.items():
            path = path.replace(ours, theirs)
        covered.add((r.method, path))
    assert covered == served


@pytest.mark.parametrize("door", ["local", "iam"])
def test_an_agent_lists_only_its_own_run(world: Callable[[str], World], door: str) -> None:
    w = world(door)
    status, page = w.call("agent_a_own_run", "GET", "/api/v1/interrupts")
    assert status == 200 and page["count"] == 1
    assert {i["sessionId"] for i in page["interrupts"]} == {RUN_A}
    status, page = w.call("operator", "GET", "/api/v1/interrupts")
    assert status == 200 and {i["sessionId"] for i in page["interrupts"]} == {RUN_A, RUN_B}


def test_an_agent_session_without_a_run_is_refused_at_the_door(world: Callable[[str], World]) -> None:
    w = world("iam")
    status, body = w.call("wrong", "POST", "/api/runs/run-a/questions", {"node": "draft", "question": "x"})
    assert status == 403 and "not scoped to a run" in body["message"] and "run-<run_id>" in body["message"]
    # Refused before validation: a bad body from such a caller is still the 403.
    status, _ = w.call("wrong", "POST", "/api/runs/run-a/questions", {"surprise": 1})
    assert status == 403


def test_an_agent_session_names_its_run() -> None:
    from baton.api.auth import resolve_caller, run_of_session

    assert run_of_session(_agent_arn("run-01HXYZ")) == "01HXYZ"
    assert run_of_session(_agent_arn("run-")) is None
    assert run_of_session(_agent_arn("runner-01HXYZ")) is None
    assert run_of_session(f"arn:aws:iam::{ACCOUNT}:user/run-01HXYZ") is None
    event = {"requestContext": {"identity": {"userArn": _agent_arn("run-r1")}}}
    caller = resolve_caller(event, "", "", AGENT_ROLE)
    assert (caller.role, caller.run_id) == ("agent", "r1")
    # Another role's sessions are operators unless the pattern says otherwise.
    other = {"requestContext": {"identity": {"userArn": f"arn:aws:sts::{ACCOUNT}:assumed-role/ops/run-r1"}}}
    assert resolve_caller(other, "", "", AGENT_ROLE).role == "operator"
    assert resolve_caller(other, "", r":assumed-role/ops/", AGENT_ROLE).run_id == "r1"
