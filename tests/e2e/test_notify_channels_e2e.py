"""Item 6 of issue 10 on the local stack: the stack subscribes only the console and email channels here
(email always: each mail is printed and kept in the outbox; no `--webhook-url`, no
`--slack-webhook-url`), so a question, blocking ask, interrupt or hosted run asking
for Slack is a 422 at creation through every door (REST, the SDK), naming the field and the configured
channels, and nothing is created."""

from __future__ import annotations

import uuid

import pytest

from baton.errors import ValidationFailedError
from tests.e2e.conftest import LocalStackProcess

pytestmark = pytest.mark.e2e


def test_an_unsubscribed_channel_is_a_422_at_every_door(local_stack: LocalStackProcess) -> None:
    run_id = f"e2e-notify-{uuid.uuid4().hex[:8]}"
    client = local_stack.client()
    with local_stack.http() as http:
        resp = http.post(f"/api/runs/{run_id}/questions", json={"node": "n", "question": "q?", "notify": ["slack"]})
        assert resp.status_code == 422, resp.text
        assert resp.json()["field"] == "notify" and resp.json()["configured"] == ["console", "email"]
        assert "'slack' is not configured" in resp.json()["message"]
        assert http.get(f"/api/runs/{run_id}").status_code == 404  # nothing was created
    with pytest.raises(ValidationFailedError, match="configured: console, email"):
        client.create_ask(run_id, "agent", "drop it?", timeout_seconds=60, notify=["slack"])
    with pytest.raises(ValidationFailedError, match="configured: console, email"):
        client.create_interrupt(session_id=run_id, prompt="which?", notify=["console", "webhook"])
    with pytest.raises(ValidationFailedError, match=r"input\.notify"):
        client.start_run("human_pause", {"prompt": "Ship?", "notify": ["slack"]}, run_id=run_id)
    with local_stack.http() as http:
        assert http.get(f"/api/runs/{run_id}").status_code == 404
    asked = client.create_ask(run_id, "agent", "drop it?", timeout_seconds=60, notify=["console"])
    assert asked.status == "pending"
