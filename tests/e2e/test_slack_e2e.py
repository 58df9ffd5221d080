"""The Slack app end to end: a Slack-shaped client posts signed interaction payloads to the local stack's
`POST /slack/interactions`, and a fake Slack API (a local HTTP server) records what Baton sends back
(`views.open`, `chat.update`, the clicks' `response_url` posts)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from slack_sdk.signature import SignatureVerifier

from baton.client.sdk import Client
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for
from tests.fakes.slack_api import FakeSlack

SIGNING_SECRET = "slack-e2e-signing-secret"
OPERATORS = {"U0ALICE": "alice@example.com", "U0BOB": "bob@example.com"}


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    yield fake
    fake.server.shutdown()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, slack: FakeSlack) -> Iterator[LocalStackProcess]:
    env = {
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_BOT_TOKEN": "xoxb-e2e",
        "SLACK_API_URL": f"{slack.url}/api/",
        "BATON_SLACK_OPERATORS": json.dumps(OPERATORS),
        "BATON_INBOX_URL": "http://127.0.0.1/inbox/",
        "SLACK_CHANNEL": "C0BATON",  # notifications on the slack channel are posted as the app
    }
    started = start_local_stack(tmp_path_factory.mktemp("baton-slack"), "--fresh", env=env)
    yield started
    stop_local_stack(started)


def _signed(
    payload: dict[str, Any], *, ts: int | None = None, secret: str = SIGNING_SECRET
) -> tuple[bytes, dict[str, str]]:
    body = urlencode({"payload": json.dumps(payload)})
    timestamp = str(ts if ts is not None else int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    assert signature is not None
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature,
    }
    return body.encode(), headers


def _post(stack: LocalStackProcess, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{stack.api_url}/slack/interactions", content=body, headers=headers, timeout=30)


def _click(slack: FakeSlack, user: str, run_id: str, iid: str, *, option: int | None, hook: str) -> dict[str, Any]:
    value: dict[str, Any] = {"r": run_id, "i": iid}
    action_id = "baton_open_form"
    if option is not None:
        value["o"] = option
        action_id = f"baton_option_{option}"
    return {
        "type": "block_actions",
        "user": {"id": user},
        "trigger_id": f"trigger-{uuid.uuid4().hex[:8]}",
        "response_url": f"{slack.url}/response/{hook}",
        "container": {"type": "message", "channel_id": "C0BATON", "message_ts": "1700000000.000100"},
        "actions": [{"action_id": action_id, "value": json.dumps(value), "block_id": "baton_actions"}],
    }


def _question(client: Client, options: list[str]) -> tuple[str, str]:
    run_id = f"slack-{uuid.uuid4().hex[:10]}"
    asked = client.ask_async(run_id, "draft", "Which database?", options=options, allow_free_text=True)
    return run_id, asked.interaction_id


def _answers(client: Client, run_id: str) -> list[dict[str, Any]]:
    return [e.data for e in client.events(run_id).events if e.type == "interaction_answered"]


def test_a_click_answers_as_the_mapped_operator_and_updates_the_message(
    stack: LocalStackProcess, slack: FakeSlack
) -> None:
    client = stack.client()
    run_id, iid = _question(client, ["postgres", "dynamodb"])
    body, headers = _signed(_click(slack, "U0ALICE", run_id, iid, option=1, hook="click-1"))
    response = _post(stack, body, headers)
    assert response.status_code == 200, response.text
    assert response.text == ""  # the ack: the answer runs after it (the time it takes: bench/parts/slack_ack.py)

    updates = wait_for(lambda: slack.to("/response/click-1"), timeout=30)
    assert updates[0]["replace_original"] is True
    assert updates[0]["text"] == "answered by alice@example.com with dynamodb"
    assert "actions" not in json.dumps(updates[0]["blocks"])  # no buttons left on the answered message
    (answered,) = _answers(client, run_id)
    assert answered["by"] == "alice@example.com" and answered["answer"] == "dynamodb"

    # The same request again (a replay): refused, and nothing changes.
    again = _post(stack, body, headers)
    assert again.status_code == 409 and again.json()["error"] == "replayed"
    time.sleep(0.5)
    assert len(slack.to("/response/click-1")) == 1
    assert len(_answers(client, run_id)) == 1


def test_bad_signature_and_old_timestamp_are_refused_and_change_nothing(
    stack: LocalStackProcess, slack: FakeSlack
) -> None:
    client = stack.client()
    run_id, iid = _question(client, ["yes", "no"])
    payload = _click(slack, "U0ALICE", run_id, iid, option=0, hook="bad-sig")
    forged_body, forged = _signed(payload, secret="not-the-secret")
    old_body, old = _signed({**payload, "response_url": f"{slack.url}/response/old-ts"}, ts=int(time.time()) - 600)
    tampered_body, tampered = _signed(payload)
    tampered_body = tampered_body.replace(b"U0ALICE", b"U0BOB")  # signed for Alice, sent as Bob
    unsigned = _post(stack, old_body, {"Content-Type": "application/x-www-form-urlencoded"})
    for body, headers in ((forged_body, forged), (old_body, old), (tampered_body, tampered)):
        response = _post(stack, body, headers)
        assert response.status_code == 401, response.text
    assert unsigned.status_code == 401
    time.sleep(0.5)
    assert slack.to("/response/bad-sig") == [] and slack.to("/response/old-ts") == []
    assert _answers(client, run_id) == []
    assert [q.interaction_id for q in client.pending_questions(run_id)] == [iid]


def test_two_people_clicking_at_once_get_one_answer_and_one_already_answered(
    stack: LocalStackProcess, slack: FakeSlack
) -> None:
    client = stack.client()
    run_id, iid = _question(client, ["ship", "hold"])
    requests = [
        _signed(_click(slack, "U0ALICE", run_id, iid, option=0, hook="race-alice")),
        _signed(_click(slack, "U0BOB", run_id, iid, option=1, hook="race-bob")),
    ]
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def click(body: bytes, headers: dict[str, str]) -> None:
        barrier.wait()
        statuses.append(_post(stack, body, headers).status_code)

    threads = [threading.Thread(target=click, args=r) for r in requests]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200, 200]
    texts = wait_for(
        lambda: (a := slack.to("/response/race-alice")) and (b := slack.to("/response/race-bob")) and [a[0], b[0]],
        timeout=30,
    )
    outcome = sorted(t["text"] for t in texts)
    (answered,) = _answers(client, run_id)
    winner = answered["by"]
    assert winner in OPERATORS.values()
    assert outcome[0].startswith(f"already answered by {winner} with {answered['answer']}")
    assert outcome[1] == f"answered by {winner} with {answered['answer']}"


def test_an_unmapped_user_is_refused_with_a_clear_message(stack: LocalStackProcess, slack: FakeSlack) -> None:
    client = stack.client()
    run_id, iid = _question(client, ["a", "b"])
    body, headers = _signed(_click(slack, "U0MALLORY", run_id, iid, option=0, hook="mallory"))
    assert _post(stack, body, headers).status_code == 200
    (reply,) = wait_for(lambda: slack.to("/response/mallory"), timeout=30)
    assert reply["response_type"] == "ephemeral" and reply["replace_original"] is False
    assert reply["text"] == "you are not a Baton operator: ask your admin to map U0MALLORY"
    time.sleep(0.5)
    assert _answers(client, run_id) == []


SCHEMA = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9, "title": "Replicas"},
        "region": {"enum": ["eu-west-1", "us-east-1"]},
        "canary": {"type": "boolean"},
    },
    "required": ["replicas", "region"],
}


def _submission(slack: FakeSlack, user: str, view: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "view_submission",
        "user": {"id": user},
        "view": {
            "callback_id": view["callback_id"],
            "private_metadata": view["private_metadata"],
            "state": {"values": values},
        },
    }


def test_a_modal_checks_the_answer_schema_per_field_then_answers(stack: LocalStackProcess, slack: FakeSlack) -> None:
    client = stack.client()
    session = f"slack-{uuid.uuid4().hex[:10]}"
    interrupt = client.create_interrupt(session_id=session, prompt="Scale the fleet?", json_schema=SCHEMA)
    iid = interrupt.interrupt_id

    opened = _post(stack, *_signed(_click(slack, "U0ALICE", session, iid, option=None, hook="modal")))
    assert opened.status_code == 200, opened.text
    (call,) = [c for c in slack.to("/api/views.open") if session in json.dumps(c["view"])]
    view = call["view"]
    inputs = {b["block_id"]: b["element"]["type"] for b in view["blocks"] if b["type"] == "input"}
    assert inputs == {"field_0": "number_input", "field_1": "static_select", "field_2": "radio_buttons"}

    bad = {
        "field_0": {"value": {"type": "number_input", "value": "0"}},
        "field_1": {"value": {"type": "static_select", "selected_option": {"value": "1"}}},
    }
    refused = _post(stack, *_signed(_submission(slack, "U0ALICE", view, bad)))
    assert refused.status_code == 200
    body = refused.json()
    assert body == {"response_action": "errors", "errors": {"field_0": "must be bigger than or equal to 1"}}
    time.sleep(0.5)
    assert client.get_interrupt(iid).status == "pending"
    assert [u for u in slack.to("/api/chat.update") if session in json.dumps(u)] == []

    good = {**bad, "field_0": {"value": {"type": "number_input", "value": "3"}}}
    accepted = _post(stack, *_signed(_submission(slack, "U0ALICE", view, good)))
    assert accepted.status_code == 200 and accepted.text == ""
    (update,) = wait_for(lambda: [u for u in slack.to("/api/chat.update") if session in json.dumps(u)], timeout=30)
    assert update["channel"] == "C0BATON" and update["ts"] == "1700000000.000100"
    expected = '{"region":"us-east-1","replicas":3}'
    assert update["text"] == f"answered by alice@example.com with {expected}"
    settled = client.get_interrupt(iid)
    assert settled.status == "answered" and settled.resolved_by == "alice@example.com"


def test_the_notification_posted_as_the_app_carries_the_buttons_that_answer(
    stack: LocalStackProcess, slack: FakeSlack
) -> None:
    client = stack.client()
    run_id = f"slack-{uuid.uuid4().hex[:10]}"
    with stack.http() as http:
        body = {"node": "draft", "question": "Deploy now?", "options": ["deploy", "wait"], "notify": ["slack"]}
        asked = http.post(f"/api/runs/{run_id}/questions", json=body)
    assert asked.status_code == 201, asked.text
    (posted,) = wait_for(lambda: [p for p in slack.to("/api/chat.postMessage") if run_id in json.dumps(p)], timeout=30)
    assert posted["channel"] == "C0BATON"
    (actions,) = [b for b in posted["blocks"] if b["type"] == "actions"]
    button = next(e for e in actions["elements"] if e["text"]["text"] == "wait")
    assert "token" not in button["value"].lower()

    click = {
        "type": "block_actions",
        "user": {"id": "U0BOB"},
        "trigger_id": "trigger-notified",
        "response_url": f"{slack.url}/response/notified",
        "container": {"channel_id": "C0BATON", "message_ts": "1700000000.000100"},
        "actions": [{"action_id": button["action_id"], "value": button["value"], "block_id": "baton_actions"}],
    }
    assert _post(stack, *_signed(click)).status_code == 200
    (update,) = wait_for(lambda: slack.to("/response/notified"), timeout=30)
    assert update["text"] == "answered by bob@example.com with wait"
    (answered,) = _answers(client, run_id)
    assert answered["by"] == "bob@example.com"


def test_an_agents_blocking_ask_is_answered_from_its_buttons_through_resume(
    stack: LocalStackProcess, slack: FakeSlack
) -> None:
    """Issue 13 round 5: an ask (`POST /api/runs/{run}/asks`) is answered from Slack like a question,
    through the resume path: the run goes on, and the ask reads back the answer and who gave it."""
    client = stack.client()
    run_id = f"slack-ask-{uuid.uuid4().hex[:10]}"
    with stack.http() as http:
        asked = http.post(
            f"/api/runs/{run_id}/asks",
            json={"node": "deploy", "question": "Drop the table?", "options": ["yes", "no"], "timeout_seconds": 300},
        )
        assert asked.status_code == 201, asked.text
        iid = asked.json()["interaction_id"]
        body, headers = _signed(_click(slack, "U0BOB", run_id, iid, option=1, hook="ask-1"))
        assert _post(stack, body, headers).status_code == 200
        updates = wait_for(lambda: slack.to("/response/ask-1"), timeout=30)
        assert updates[0]["text"] == "answered by bob@example.com with no"
        read = http.get(f"/api/runs/{run_id}/asks/{iid}").json()
    assert (
        read["status"] == "answered"
        and read["answers"] == {"answer": "no"}
        and read["answered_by"] == "bob@example.com"
    )
    (answered,) = _answers(client, run_id)
    assert answered["by"] == "bob@example.com"
