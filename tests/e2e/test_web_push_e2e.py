"""Web Push end to end (issue 32, item 3) against `baton dev`: an operator subscribes a browser whose endpoint
is the test push service (tests/push_service.py), a question with options escalates to that operator after
1 s, the push service receives a payload it verifies (the VAPID JWT by the stack's key) and decrypts with
the subscription's private key, and the payload's first one-tap action, POSTed as the service worker
would (its signed credential, no bearer, no cookie), answers the question once as that operator: the
other action, the same tap again and the inbox's own answer are each a 409 naming the winner."""

from __future__ import annotations

import stat
import uuid
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.push_service import PushService

if TYPE_CHECKING:
    from tests.e2e.conftest import LocalStackProcess

pytestmark = pytest.mark.e2e

OPERATOR = "local-operator"  # the stack's bearer token's operator (baton/api/auth.py INBOX_OPERATOR)


def test_an_escalation_pushes_a_payload_the_browser_decrypts_and_its_one_tap_answers_once(
    local_stack: LocalStackProcess,
) -> None:
    key_file = local_stack.state_dir / "vapid.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600  # made once by `baton dev`, the owner's only
    http = local_stack.http()
    public_key = http.get("/api/push/key").json()["public_key"]

    with PushService() as service:
        browser = service.browser()
        first = http.post("/api/me/push-subscriptions", json=browser.subscription)
        assert first.status_code == 201, first.text
        again = http.post("/api/me/push-subscriptions", json=browser.subscription)
        assert again.status_code == 200 and again.json() == first.json()
        listed = http.get("/api/me/push-subscriptions").json()["subscriptions"]
        assert first.json() in listed

        run_id = f"push-{uuid.uuid4().hex[:8]}"
        asked = http.post(
            f"/api/runs/{run_id}/questions",
            json={
                "node": "agent",
                "question": "Deploy to production?",
                "options": ["yes", "no", "later"],
                "timeout_seconds": 60,
                "escalate_after": 1,
                "escalate_to": ["console"],
                "escalate_to_operators": [OPERATOR],  # and pushed to their devices
            },
        )
        assert asked.status_code == 201, asked.text
        interaction_id = asked.json()["interaction_id"]

        pushed = service.received(count=1, timeout=30)
        assert len(pushed) == 1, "no push arrived"
        push = pushed[0]
        assert push.vapid_key == public_key and push.claims["aud"] == service.url
        payload = push.payload
        assert payload["reason"] == "escalated" and payload["kind"] == "question"
        assert (payload["run_id"], payload["interaction_id"]) == (run_id, interaction_id)
        assert payload["url"] == f"/inbox/#/question/{run_id}/{interaction_id}"
        assert [a["action"] for a in payload["one_tap"]] == ["answer-0", "answer-1"]  # the first two options

        tap, other = payload["one_tap"]
        assert (tap["method"], tap["path"], tap["auth"]) == ("POST", "/api/push/answer", "credential")
        assert tap["body"]["answer"] == "yes" and tap["body"]["credential"]
        # As the service worker sends it: the credential alone, no bearer and no cookie.
        worker = httpx.Client(base_url=local_stack.api_url, timeout=30)
        answered = worker.post(tap["path"], json=tap["body"])
        assert answered.status_code == 200, answered.text
        twice = worker.post(other["path"], json=other["body"])  # the other action: the loser
        assert twice.status_code == 409, twice.text
        assert OPERATOR in twice.text  # the 409 names the winner
        again = worker.post(tap["path"], json=tap["body"])  # the same tap again: its credential is spent
        assert again.status_code == 409 and again.json()["reason"] == "used", again.text
        headers = {"Content-Type": "application/json", "X-Baton-Inbox": "1"}
        late = http.post(
            f"/api/runs/{run_id}/interactions/{interaction_id}/answer", json={"answer": "no"}, headers=headers
        )
        assert late.status_code == 409 and OPERATOR in late.text, late.text  # the inbox's own answer: the loser too

        events = http.get(f"/api/runs/{run_id}/events").json()
        decisions = [e["data"] for e in events["events"] if e["type"] == "interaction_answered"]
        assert [(d["by"], d["via"]) for d in decisions] == [(OPERATOR, "push")]  # the operator the push went to
        escalated = [e for e in events["events"] if e["type"] == "escalated"]
        assert escalated and escalated[0]["data"]["operators"] == [OPERATOR]

        deleted = http.delete(f"/api/me/push-subscriptions/{first.json()['subscription_id']}")
        assert deleted.status_code == 200 and deleted.json() == {"deleted": True}
        assert http.get("/api/me/push-subscriptions").json()["subscriptions"] == []
