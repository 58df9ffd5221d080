"""The email channel against `baton dev`, browser-free (httpx): each recipient's mail is printed and kept
in the outbox with their own link; GET changes nothing (twice), POST answers once as the recipient, a
second POST is a 410 page, another recipient's link is a 409 page naming the winner, a link edited to
another recipient or question or with a broken signature is refused, and nothing changed. (An expired
link: tests/unit/test_email_links.py, with an injected clock.)"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from baton.channels.email.outbox import read_outbox
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for

pytestmark = pytest.mark.e2e
ALICE, BOB = "alice@example.com", "bob@example.com"


@pytest.fixture(scope="module")
def mail_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    stack = start_local_stack(tmp_path_factory.mktemp("baton-mail"), env={"BATON_LOCAL_EMAIL_TO": f"{ALICE},{BOB}"})
    yield stack
    stop_local_stack(stack)


def _mail_for(outbox: Path, recipient: str, interaction_id: str) -> str:
    def found() -> str | None:
        for mail in read_outbox(outbox):
            if mail.to == recipient and interaction_id in mail.text:
                return mail.text
        return None

    text: str = wait_for(found, timeout=20)
    return text


def _link(text: str) -> str:
    [line] = [ln.strip() for ln in text.splitlines() if "/answer/" in ln]
    return line


def _claims(link: str) -> dict[str, Any]:
    encoded = link.rsplit("/", 1)[1].split(".")[0]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    return decoded


def _edited(link: str, **changes: str) -> str:
    head, token = link.rsplit("/", 1)
    mac = token.split(".")[1]
    data = _claims(link) | changes
    swapped = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()
    return f"{head}/{swapped}.{mac}"


def _question(stack: LocalStackProcess, run_id: str, prompt: str) -> str:
    with stack.http() as http:
        response = http.post(
            f"/api/runs/{run_id}/questions",
            json={"node": "draft", "question": prompt, "options": ["postgres", "dynamodb"], "notify": ["email"]},
        )
    assert response.status_code == 201, response.text
    return str(response.json()["interaction_id"])


def _state(stack: LocalStackProcess, run_id: str) -> tuple[Any, ...]:
    with stack.http() as http:
        pending = http.get(f"/api/runs/{run_id}/interactions/pending").json()
        events = http.get(f"/api/runs/{run_id}/events", params={"limit": 500}).json()
    return pending, [e["type"] for e in events["events"]]


def test_the_mail_link_answers_once_as_its_recipient(mail_stack: LocalStackProcess) -> None:
    run_id = f"mail-{uuid.uuid4().hex[:8]}"
    iid = _question(mail_stack, run_id, "Which database?")
    other = _question(mail_stack, run_id, "Which cache?")
    outbox = mail_stack.state_dir / "outbox"
    alice_mail, bob_mail = _mail_for(outbox, ALICE, iid), _mail_for(outbox, BOB, iid)
    alice, bob = _link(alice_mail), _link(bob_mail)
    assert alice != bob and alice.startswith(mail_stack.api_url + "/answer/")
    assert set(_claims(alice)) == {"l", "r", "i", "t", "e"}  # ids, recipient, expiry: no token
    assert _claims(alice)["t"] == ALICE and _claims(alice)["i"] == iid and "token" not in alice_mail.lower()
    assert "Which database?" in mail_stack.log() and alice in mail_stack.log()  # printed on the console

    anonymous = httpx.Client(timeout=30)  # no bearer token, no cookie: the link is the credential
    before = _state(mail_stack, run_id)
    first, second = anonymous.get(alice), anonymous.get(alice)
    assert first.status_code == second.status_code == 200
    assert "Which database?" in first.text and 'value="postgres"' in first.text and ALICE in first.text
    assert first.headers["cache-control"] == "no-store" and first.headers["referrer-policy"] == "no-referrer"
    assert _state(mail_stack, run_id) == before

    refused = {
        _edited(alice, t=BOB): 403,  # alice's link made out to bob
        _edited(alice, i=other): 403,  # alice's link pointed at the other question
        alice[:-4] + "AAAA": 403,  # a broken signature
    }
    for link, status in refused.items():
        assert anonymous.get(link).status_code == status
        assert anonymous.post(link, data={"option": "dynamodb"}).status_code == status
    assert _state(mail_stack, run_id) == before

    answered = anonymous.post(alice, data={"option": "postgres"})
    assert answered.status_code == 200 and "postgres" in answered.text
    with mail_stack.http() as http:
        [event] = [
            e
            for e in http.get(f"/api/runs/{run_id}/events", params={"limit": 500}).json()["events"]
            if e["type"] == "interaction_answered"
        ]
    assert event["data"]["by"] == ALICE and event["data"]["answer"] == "postgres"
    after = _state(mail_stack, run_id)

    replay = anonymous.post(alice, data={"option": "dynamodb"})
    assert replay.status_code == 410 and "already used" in replay.text and ALICE in replay.text
    late = anonymous.post(bob, data={"option": "dynamodb"})
    assert late.status_code == 409 and f"Already answered by {ALICE} with postgres" in late.text
    assert _state(mail_stack, run_id) == after


def test_a_hosted_pause_mails_an_answer_link_that_resumes_it_and_never_its_task_token(
    mail_stack: LocalStackProcess,
) -> None:
    import boto3

    client = mail_stack.client()
    run_id = f"mail-pause-{uuid.uuid4().hex[:8]}"
    client.start_run("human_pause", {"prompt": "Ship it?", "timeout_seconds": 300, "notify": ["email"]}, run_id=run_id)
    state = mail_stack.state
    table = boto3.client(
        "dynamodb",
        endpoint_url=state["moto_url"],
        region_name=state["region"],
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )

    def parked_token() -> str | None:
        items = table.query(
            TableName=state["table_name"],
            KeyConditionExpression="PK = :pk AND begins_with(SK, :wait)",
            ExpressionAttributeValues={":pk": {"S": f"RUN#{run_id}"}, ":wait": {"S": "WAIT#"}},
        )["Items"]
        return items[0]["task_token"]["S"] if items else None

    token: str = wait_for(parked_token, timeout=30)
    outbox = mail_stack.state_dir / "outbox"
    text = wait_for(lambda: next((m.text for m in read_outbox(outbox) if run_id in m.text and m.to == ALICE), None))
    assert token not in text and token[:40] not in text
    assert "Ship it?" in text
    link = _link(text)  # a hosted pause takes free text: its mail carries an answer link (issue 13 item 2)
    assert token not in link and set(_claims(link)) == {"l", "r", "i", "t", "e"}  # ids, recipient, expiry only
    anonymous = httpx.Client(timeout=30)
    page = anonymous.get(link)
    assert page.status_code == 200 and "<textarea" in page.text
    assert anonymous.post(link, data={"text": "ship it"}).status_code == 200
    assert anonymous.post(link, data={"text": "again"}).status_code == 410

    def resumed() -> bool | None:
        return client.get_run(run_id).status in ("running", "succeeded") or None

    wait_for(resumed, timeout=30)
