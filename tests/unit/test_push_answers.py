"""A notification's one-tap answer (issue 32, item 3) on in-memory services: the credential's bound fields
(the item, the operator, the one answer, an expiry of the item's deadline or an hour), and
`POST /api/push/answer` with no cookie and no bearer: answered once as the operator; a tampered answer,
another item, an expired or a replayed credential, an email link in its place: a 4xx that says why, with
nothing changed."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from baton.api import deps
from baton.api.app import CREDENTIAL_PATHS, create_app
from baton.channels.email.links import (
    PUSH_ANSWER_CONTEXT,
    LinkClaims,
    LinkRefused,
    answer_digest,
    read_link,
    sign_link,
)
from baton.channels.push.answers import PushAnswers
from baton.channels.push.sender import CREDENTIAL_SECONDS, credential_signer
from baton.channels.push.web_push import VapidKeys
from baton.contracts import AskRequest
from baton.contracts.push import PUSH_ANSWER_PATH, push_payload
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.questions import QuestionService
from baton.services.runs import RunService
from tests.fakes import MemoryStore
from tests.fakes.links import MemoryAnswerLinks

if TYPE_CHECKING:
    from collections.abc import Iterator

    from baton.models import Interaction
    from baton.services.core import Core
    from tests.conftest import FixedClock

KEYS = VapidKeys.generate()
OPERATOR = "alice@example.com"


def _ask(core: Core, *, timeout_seconds: int | None = None, run_id: str = "r1") -> Interaction:
    request = AskRequest(node="draft", question="Deploy?", options=["yes", "no"], timeout_seconds=timeout_seconds)
    iid = QuestionService(core).ask(run_id, request, caller="agent").interaction_id
    found = core.store.get_interaction(run_id, iid)
    assert found is not None
    return found


def _decoded(token: str) -> dict[str, Any]:
    encoded = token.split(".")[0]
    data: dict[str, Any] = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    return data


def _swap(token: str, **changes: Any) -> str:
    """The same mac over other claims: what someone editing a credential would make."""
    mac = token.split(".")[1]
    data = _decoded(token) | changes
    swapped = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()
    return f"{swapped}.{mac}"


@pytest.fixture
def links() -> MemoryAnswerLinks:
    return MemoryAnswerLinks()


@pytest.fixture
def post(core: Core, clock: FixedClock, links: MemoryAnswerLinks) -> Iterator[Any]:
    """POST /api/push/answer through the API app with no Authorization header and no cookie."""
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": "tok"})
    answers = PushAnswers(core, links, lambda: KEYS, clock=clock.now)
    services = Services(settings=settings, core=core, runs=RunService(core), one_tap_answers=answers)
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(body: Any) -> tuple[int, dict[str, Any]]:
        raw = json.dumps(body).encode()
        event = to_proxy_event("POST", PUSH_ANSWER_PATH, {"Content-Type": "application/json"}, raw, "127.0.0.1")
        result = app.resolve(event, None)
        return result["statusCode"], json.loads(result["body"])

    yield call
    deps.set_services_provider(deps._default_provider)


def _taps(core: Core, clock: FixedClock, interaction: Interaction) -> list[dict[str, Any]]:
    sign = credential_signer(interaction, OPERATOR, KEYS.answer_key, clock.now())
    return [tap.body for tap in push_payload(interaction, "escalated", sign).one_tap]


def _state(core: Core) -> tuple[Any, ...]:
    store = core.store
    assert isinstance(store, MemoryStore)
    return (
        {k: v.model_dump() for k, v in store.interactions.items()},
        [e.model_dump() for e in store.list_events("r1")],
    )


# ---- the credential ------------------------------------------------------------------------------------


def test_a_credential_binds_the_item_the_operator_its_one_answer_and_the_items_deadline_or_an_hour(
    core: Core, clock: FixedClock
) -> None:
    soon = _ask(core, timeout_seconds=600)
    tap = push_payload(soon, "escalated", credential_signer(soon, OPERATOR, KEYS.answer_key, clock.now())).one_tap[1]
    assert (tap.path, tap.auth, tap.body["answer"]) == (PUSH_ANSWER_PATH, "credential", "no")
    claims = read_link(tap.body["credential"], KEYS.answer_key, now=clock.now(), context=PUSH_ANSWER_CONTEXT)
    assert (claims.run_id, claims.interaction_id, claims.recipient) == ("r1", soon.interaction_id, OPERATOR)
    assert claims.answer == answer_digest("no") != answer_digest("yes")
    assert claims.expires_at == int((clock.now() + timedelta(seconds=600)).timestamp())  # the item closes first
    later = _ask(core, timeout_seconds=86400)
    sign = credential_signer(later, OPERATOR, KEYS.answer_key, clock.now())
    token = sign("yes")
    hour = read_link(token, KEYS.answer_key, now=clock.now(), context=PUSH_ANSWER_CONTEXT).expires_at
    assert hour == int(clock.now().timestamp()) + CREDENTIAL_SECONDS
    assert "token" not in json.dumps(_decoded(token)).lower() and len(token) < 400
    assert sign("yes") != token  # each credential has its own id: spent apart
    assert {tap.auth for tap in push_payload(later, "escalated").one_tap} == {"session"}  # no signer: the session


def test_a_credential_is_not_an_email_link_and_the_vapid_key_is_not_its_key() -> None:
    claims = LinkClaims(
        link_id="link-000001", run_id="r1", interaction_id="q1", recipient=OPERATOR, expires_at=2**31, answer=None
    )
    email_link = sign_link(claims, KEYS.answer_key)  # the email context, same key
    with pytest.raises(LinkRefused) as refused:
        read_link(email_link, KEYS.answer_key, now=datetime.now(UTC), context=PUSH_ANSWER_CONTEXT)
    assert refused.value.reason == "tampered"
    assert "a" not in _decoded(email_link)  # an email link's JSON is as before
    assert KEYS.answer_key not in KEYS.private_pem and len(KEYS.answer_key) == 32
    assert VapidKeys.generate().answer_key != KEYS.answer_key
    assert CREDENTIAL_PATHS == (PUSH_ANSWER_PATH,)  # app.py names the path without importing the contract


# ---- the route -----------------------------------------------------------------------------------------


def test_a_tap_answers_once_as_the_operator_and_a_replay_or_the_other_tap_is_a_409_naming_them(
    core: Core, clock: FixedClock, post: Any, links: MemoryAnswerLinks
) -> None:
    question = _ask(core, timeout_seconds=600)
    yes, no = _taps(core, clock, question)
    status, body = post(yes)
    assert status == 200 and body["status"] == "answered", body
    stored = core.store.get_interaction("r1", question.interaction_id)
    assert stored is not None and (stored.state.answer, stored.state.answered_by) == ("yes", OPERATOR)
    answered = [e for e in core.store.list_events("r1") if e.type == "interaction_answered"]
    assert [(e.data["by"], e.data["via"]) for e in answered] == [(OPERATOR, "push")]  # the decision log says so
    [use] = links.uses.values()
    assert (use.state, use.channel, use.recipient, use.answer) == ("answered", "push", OPERATOR, "yes")

    before = _state(core)
    status, replay = post(yes)
    assert status == 409 and replay["reason"] == "used" and replay["winner"]["by"] == OPERATOR, replay
    assert "already used by alice@example.com" in replay["message"]
    status, other = post(no)
    assert status == 409 and other["winner"]["by"] == OPERATOR and other["winner"]["value"] == "yes", other
    assert _state(core) == before


def test_a_tampered_answer_another_item_or_an_expired_credential_changes_nothing(
    core: Core, clock: FixedClock, post: Any
) -> None:
    question = _ask(core, timeout_seconds=600)
    other = _ask(core, timeout_seconds=600)
    yes, _ = _taps(core, clock, question)
    before = _state(core)

    status, body = post({**yes, "answer": "no"})  # the credential of "yes" with another answer
    assert (status, body["reason"]) == (403, "other_answer"), body
    assert "another answer" in body["message"] and "Nothing was changed" in body["message"]
    status, body = post({**yes, "credential": _swap(yes["credential"], i=other.interaction_id)})  # another item
    assert (status, body["reason"]) == (403, "tampered"), body
    status, body = post({**yes, "credential": _swap(yes["credential"], t="mallory@example.com")})
    assert (status, body["reason"]) == (403, "tampered"), body
    status, body = post({**yes, "credential": "not-a-credential"})
    assert (status, body["reason"]) == (400, "malformed"), body
    status, body = post({"answer": "yes"})
    assert status == 422, body

    clock.advance(601)  # past the item's deadline, which the credential's expiry is
    status, body = post(yes)
    assert (status, body["reason"]) == (410, "expired"), body
    assert "has expired" in body["message"] and "inbox" in body["message"]
    assert _state(core) == before


def test_a_tool_approvals_approve_tap_is_the_operators_decision(core: Core, clock: FixedClock, post: Any) -> None:
    from baton.contracts.tool_approvals import ToolApprovalRequest
    from baton.domain.tool_calls import ToolCall
    from baton.services.tool_approvals import ToolApprovalService

    core.ensure_run("r1")
    call = ToolCall(tool="bash", arguments={"command": "ls"})
    request = ToolApprovalRequest(call=call, risk="low", reason="look", timeout_seconds=600)
    interaction, _ = ToolApprovalService(core).request("r1", request, caller="agent")
    approve, deny = _taps(core, clock, interaction)
    assert (approve["answer"], deny["answer"]["decision"]) == ({"decision": "approve"}, "deny")
    status, body = post(approve)
    assert status == 200, body
    stored = core.store.get_interaction("r1", interaction.interaction_id)
    assert stored is not None and stored.state.answered_by == OPERATOR
    decisions = [e.data for e in core.store.list_events("r1") if e.type == "interaction_answered"]
    assert [(d["by"], d["via"]) for d in decisions] == [(OPERATOR, "push")]
    assert stored.state.answer["decision"] == "approve"
    status, body = post(deny)
    assert status == 409 and body["winner"]["by"] == OPERATOR, body


def test_without_a_push_key_a_credential_is_a_404_that_says_push_is_off(core: Core, clock: FixedClock) -> None:
    from baton.contracts.push import PushAnswerRequest
    from baton.errors import NotFoundError

    question = _ask(core)
    yes, _ = _taps(core, clock, question)
    with pytest.raises(NotFoundError, match="Web Push is not configured"):
        PushAnswers(core, MemoryAnswerLinks(), lambda: None, clock=clock.now).answer(
            PushAnswerRequest.model_validate(yes)
        )


def test_a_payload_over_web_pushs_limit_is_sent_without_its_actions(core: Core, clock: FixedClock) -> None:
    from baton.channels.push.sender import WebPush
    from baton.channels.push.web_push import MAX_PLAINTEXT_BYTES
    from baton.contracts.push import PushSubscription
    from tests.fakes.memory import MemoryPushSubscriptions

    store = MemoryPushSubscriptions()
    subscription = {"endpoint": "https://p.test/1", "keys": {"p256dh": "B", "auth": "a"}, "created_at": "x"}
    store.add_subscription(PushSubscription.model_validate(subscription | {"operator": "bo", "subscription_id": "ps"}))
    sent: list[bytes] = []
    push = WebPush(store, lambda: KEYS, send=lambda _s, data, *_a, **_k: sent.append(data), clock=clock.now)
    request = AskRequest(node="draft", question="Which?", options=["€" * 500, "£" * 500], timeout_seconds=600)
    iid = QuestionService(core).ask("r1", request, caller="agent").interaction_id
    long_options = core.store.get_interaction("r1", iid)
    assert long_options is not None
    assert push.push("bo", long_options, "escalated") == 1  # a short operator name is signed for too
    assert len(sent[0]) <= MAX_PLAINTEXT_BYTES and json.loads(sent[0])["one_tap"] == []
    assert push.push("bo", _ask(core, timeout_seconds=600), "escalated") == 1
    assert len(json.loads(sent[1])["one_tap"]) == 2
