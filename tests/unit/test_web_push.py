"""Web Push, the server side (issue 32, item 3): the push routes over the in-memory store, the payload's
one-tap rules, and the sender's rules (a 404/410 deletes the subscription; any other failure is logged and
never fails the escalation). Delivery itself, encrypted, is tests/integration/test_web_push.py and
tests/e2e/test_web_push_e2e.py."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from baton.channels.push.sender import WebPush
from baton.channels.push.subscriptions import subscription_id_of
from baton.channels.push.web_push import SubscriptionGone, VapidKeys
from baton.contracts.push import (
    DENIED_FROM_A_NOTIFICATION,
    PushSubscription,
    PushSubscriptionRequest,
    one_tap_actions,
    push_payload,
)
from baton.domain.ladder import Ladder
from baton.errors import ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.models import Interaction
from tests.fakes.memory import MemoryPushSubscriptions
from tests.unit.conftest import LOCAL_TOKEN

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from baton.services.core import Core

SUBSCRIPTION = {
    "endpoint": "https://push.example.test/send/abc",
    "expirationTime": None,
    "keys": {"p256dh": "BPub", "auth": "secret"},
}


def _interaction(kind: str, **request: Any) -> Interaction:
    base: dict[str, Any] = {"node": "agent", "prompt": "Deploy?", "kind": kind}
    return Interaction.model_validate(
        {
            "run_id": "r-1",
            "interaction_id": "i-1",
            "created_at": "2026-01-01T00:00:00Z",
            "request": base | request,
            "state": {"status": "pending"},
        }
    )


def _tool(risk: str) -> dict[str, Any]:
    call = {"tool": "bash", "arguments": {"command": "ls"}}
    return {"tool": {"call": call, "digest": "d", "risk": risk, "reason": "look"}}


@pytest.fixture
def store() -> MemoryPushSubscriptions:
    return MemoryPushSubscriptions()


@pytest.fixture
def app(core: Core, store: MemoryPushSubscriptions, tmp_path: Path) -> Iterator[Any]:
    from baton.api import deps
    from baton.api.app import create_app
    from baton.runtime.settings import Settings
    from baton.runtime.wiring import Services
    from baton.services.runs import RunService

    key_file = tmp_path / "vapid.pem"
    key_file.write_bytes(VapidKeys.generate().private_pem)
    env = {"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": LOCAL_TOKEN, "BATON_VAPID_KEY_FILE": str(key_file)}
    services = Services(
        settings=Settings.model_validate(env), core=core, runs=RunService(core), push_subscriptions=store
    )
    deps.set_services_provider(lambda: services)
    yield create_app()
    deps.set_services_provider(deps._default_provider)


def _call(app: Any, method: str, path: str, body: Any = None, token: str = LOCAL_TOKEN) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    raw = json.dumps(body).encode() if body is not None else b""
    result = app.resolve(to_proxy_event(method, path, headers, raw, "127.0.0.1"), None)
    return result["statusCode"], json.loads(result["body"] or "null")


def test_an_operator_subscribes_once_lists_and_revokes_only_their_own(app: Any, store: MemoryPushSubscriptions) -> None:
    status, key = _call(app, "GET", "/api/push/key")
    assert status == 200 and len(key["public_key"]) == 87 and key["public_key"].startswith("B")  # 65 bytes, 0x04
    status, first = _call(app, "POST", "/api/me/push-subscriptions", SUBSCRIPTION)
    assert status == 201, first
    assert set(first) == {"subscription_id", "endpoint", "created_at"}
    assert first["subscription_id"] == subscription_id_of(SUBSCRIPTION["endpoint"])
    status, again = _call(app, "POST", "/api/me/push-subscriptions", SUBSCRIPTION)
    assert (status, again) == (200, first)
    assert _call(app, "GET", "/api/me/push-subscriptions") == (200, {"subscriptions": [first]})

    theirs = PushSubscription.model_validate(
        SUBSCRIPTION | {"operator": "bob", "subscription_id": "ps-bob", "created_at": "x"}
    )
    store.add_subscription(theirs)
    status, body = _call(app, "DELETE", "/api/me/push-subscriptions/ps-bob")
    assert status == 404 and body["error"] == "not_found"  # not yours: as if unknown
    status, body = _call(app, "DELETE", f"/api/me/push-subscriptions/{first['subscription_id']}")
    assert (status, body) == (200, {"deleted": True})
    assert _call(app, "GET", "/api/me/push-subscriptions") == (200, {"subscriptions": []})
    assert store.list_subscriptions("bob") == [theirs]


def test_a_subscription_that_is_not_a_push_subscription_is_a_422(app: Any) -> None:
    status, body = _call(app, "POST", "/api/me/push-subscriptions", {"endpoint": "file:///etc", "keys": {}})
    assert status == 422, body


def test_without_a_vapid_key_the_key_route_says_push_is_not_configured(core: Core) -> None:
    from baton.channels.push.subscriptions import PushService

    with pytest.raises(Exception, match="Web Push is not configured") as raised:
        PushService(MemoryPushSubscriptions(), lambda: None, core.now).key()
    assert getattr(raised.value, "http_status", None) == 404


def test_one_tap_is_a_questions_first_two_options_and_a_low_or_medium_tool_approvals_verdicts() -> None:
    question = one_tap_actions(_interaction("question", options=["yes", "no", "later"]))
    assert [(a.action, a.title, a.body) for a in question] == [
        ("answer-0", "yes", {"answer": "yes"}),
        ("answer-1", "no", {"answer": "no"}),
    ]
    assert {a.path for a in question} == {"/api/runs/r-1/interactions/i-1/answer"}
    for risk in ("low", "medium"):
        tool = one_tap_actions(_interaction("tool_approval", **_tool(risk)))
        assert [(a.action, a.body, a.confirm) for a in tool] == [
            # a medium-risk call's approve asks once more in the notification before it is sent
            ("approve", {"answer": {"decision": "approve"}}, risk == "medium"),
            ("deny", {"answer": {"decision": "deny", "reason": DENIED_FROM_A_NOTIFICATION}}, False),
        ]
    assert not any(a.confirm for a in question)
    # the item needs its page: a high risk call, free text only, an interrupt, a review
    assert one_tap_actions(_interaction("tool_approval", **_tool("high"))) == []
    assert one_tap_actions(_interaction("question")) == []
    assert one_tap_actions(_interaction("interrupt", schema={"type": "object"})) == []
    assert one_tap_actions(_interaction("review")) == []


def test_the_payload_links_the_items_inbox_page_as_the_list_does() -> None:
    payload = push_payload(_interaction("tool_approval", **_tool("low")), "assigned").model_dump(by_alias=True)
    assert set(payload) == {"title", "body", "url", "run_id", "interaction_id", "kind", "reason", "one_tap"}
    assert payload["url"] == "/inbox/#/tool/r-1/i-1" and payload["reason"] == "assigned"
    assert set(payload["one_tap"][0]) == {"action", "title", "method", "path", "body", "auth", "confirm"}
    assert push_payload(_interaction("interrupt"), "escalated").url == "/inbox/#/interrupt/i-1"


def _subscribed(store: MemoryPushSubscriptions, *endpoints: str) -> None:
    for endpoint in endpoints:
        keys = SUBSCRIPTION["keys"]
        sub = {"operator": "alice", "subscription_id": subscription_id_of(endpoint), "endpoint": endpoint}
        store.add_subscription(PushSubscription.model_validate(sub | {"keys": keys, "created_at": "x"}))


def test_a_gone_subscription_is_deleted_and_another_failure_only_logged(
    store: MemoryPushSubscriptions, caplog: pytest.LogCaptureFixture
) -> None:
    _subscribed(store, "https://p.test/gone", "https://p.test/down", "https://p.test/ok")
    sent: list[dict[str, Any]] = []

    def send(info: dict[str, Any], data: bytes, keys: VapidKeys, **_: Any) -> int:
        if info["endpoint"].endswith("gone"):
            raise SubscriptionGone("410")
        if info["endpoint"].endswith("down"):
            raise RuntimeError("push service down")
        sent.append(json.loads(data))
        return 201

    keys = VapidKeys.generate()
    pushed = WebPush(store, lambda: keys, send=send).push("alice", _interaction("question", options=["a"]), "escalated")
    assert pushed == 1 and len(sent) == 1
    tap = sent[0]["one_tap"][
        0
    ]  # the answer with its credential, sent with no session (tests/unit/test_push_answers.py)
    assert (tap["path"], tap["auth"], tap["body"]["answer"]) == ("/api/push/answer", "credential", "a")
    assert set(tap["body"]) == {"answer", "credential"}
    assert [s.endpoint for s in store.list_subscriptions("alice")] == ["https://p.test/down", "https://p.test/ok"]
    assert "web push failed" in caplog.text


def test_push_is_off_without_a_key_and_never_raises(store: MemoryPushSubscriptions) -> None:
    _subscribed(store, "https://p.test/ok")

    def send(*_: Any, **__: Any) -> int:
        raise AssertionError("nothing is sent without a key")

    assert WebPush(store, lambda: None, send=send).push("alice", _interaction("question"), "assigned") == 0

    def broken_keys() -> VapidKeys:
        raise OSError("secret unreadable")

    assert WebPush(store, broken_keys, send=send).push("alice", _interaction("question"), "assigned") == 0


def test_a_ladder_names_its_channels_and_its_operators_apart() -> None:
    ladder = Ladder(escalate_after=5, escalate_to=["slack"], escalate_to_operators=["alice"])
    assert ladder.escalate_to == ["slack"] and ladder.escalate_to_operators == ["alice"]
    with pytest.raises(ValueError, match="escalate_to"):
        Ladder(escalate_after=5, escalate_to=["pager"])  # type: ignore[list-item]


def test_the_secret_is_read_once_and_an_empty_one_again_only_after_a_while() -> None:
    from baton.adapters.vapid_keys import RETRY_SECONDS, SecretVapidKeys

    class Secrets:
        def __init__(self) -> None:
            self.value: str | None = None
            self.reads = 0

        def get_secret_value(self, SecretId: str) -> dict[str, str]:
            self.reads += 1
            if self.value is None:
                raise RuntimeError("ResourceNotFoundException: no value")
            return {"SecretString": self.value}

    now = [0.0]
    secrets = Secrets()
    keys = SecretVapidKeys("arn:secret", secrets, clock=lambda: now[0])
    assert keys() is None and keys() is None and secrets.reads == 1  # empty: push off, not read per request
    secrets.value = VapidKeys.generate().private_pem.decode()  # `baton push init-vapid`
    now[0] += RETRY_SECONDS
    assert keys() is not None and keys() is not None and secrets.reads == 2


def test_init_vapid_stores_a_key_once_and_replaces_it_only_when_told() -> None:
    from baton.adapters.vapid_keys import init_vapid_secret

    class Secrets:
        value: str | None = None

        def get_secret_value(self, SecretId: str) -> dict[str, str]:
            if self.value is None:
                raise RuntimeError("ResourceNotFoundException")
            return {"SecretString": self.value}

        def put_secret_value(self, SecretId: str, SecretString: str) -> None:
            self.value = SecretString

    secrets = Secrets()
    first = init_vapid_secret("arn:s", client=secrets)
    assert first is not None and secrets.value == first.private_pem.decode()
    assert init_vapid_secret("arn:s", client=secrets) is None  # kept: it would end every subscription
    second = init_vapid_secret("arn:s", replace=True, client=secrets)
    assert second is not None and second.public_key != first.public_key


@pytest.mark.parametrize("expiration", ["true", "false", '"1"'])
def test_a_subscriptions_expiration_that_is_not_a_number_is_refused(expiration: str) -> None:
    # pydantic's lax mode read `true` as 1.0: a schema-violating body accepted
    body = '{"endpoint": "https://push.example/s", "keys": {"p256dh": "k", "auth": "a"}, "expirationTime": %s}'
    with pytest.raises(ValidationFailedError):
        PushSubscriptionRequest.model_validate_json(body % expiration)
    assert PushSubscriptionRequest.model_validate_json(body % "1700000000000").expirationTime == 1700000000000
