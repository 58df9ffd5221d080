"""The foundation over HTTP: a hosted run parks at a real task token, resumes, times out; bad input is refused."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from baton.errors import ConflictError
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for

pytestmark = pytest.mark.e2e


def _run_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_hosted_pause_resume_and_second_resume_409(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("e2e-pause")
    started = client.start_run("human_pause", {"prompt": "Ship to staging?", "timeout_seconds": 60}, run_id=run_id)
    assert started["status"] == "running"
    wait_for(lambda: client.get_run(run_id)["status"] == "paused_waiting_human")
    types = [e["type"] for e in client.events(run_id)["events"]]
    assert types[:3] == ["run_started", "human_input_requested", "run_paused"]

    result = client.resume(run_id, {"ship": True, "note": "looks good"})
    assert result["resumed"] is True
    summary = wait_for(lambda: (s := client.get_run(run_id))["status"] == "succeeded" and s)
    assert summary["output"]["answers"] == {"ship": True, "note": "looks good"}
    assert summary["output"]["answered_by"] == "local-operator"

    with pytest.raises(ConflictError) as second:
        client.resume(run_id, {"ship": False})
    assert second.value.details["interaction"]["answer"] == {"ship": True, "note": "looks good"}
    assert "human_input_requested" in local_stack.log()  # the SNS → console subscriber printed it


def test_short_timeout_fails_and_the_run_says_why(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("e2e-timeout")
    client.start_run("human_pause", {"prompt": "Anyone?", "timeout_seconds": 1}, run_id=run_id)
    summary = wait_for(lambda: (s := client.get_run(run_id))["status"] == "failed" and s, timeout=20)
    assert "timed out after 1s" in summary["reason"] and "Anyone?" in summary["reason"]
    events = [e["type"] for e in client.events(run_id)["events"]]
    assert "human_input_timed_out" in events


def test_bad_input_gets_clear_4xx_and_changes_nothing(local_stack: LocalStackProcess) -> None:
    with local_stack.http() as http:
        resp = http.post("/api/runs", content=b'{"workflow": ', headers={"Content-Type": "application/json"})
        assert resp.status_code == 400 and resp.json()["error"] == "bad_request"
        resp = http.post("/api/runs", json={"input": {}})
        assert resp.status_code == 422 and "workflow" in resp.json()["message"]
        resp = http.get("/api/runs/no-such-run")
        assert resp.status_code == 404 and resp.json()["message"] == "run no-such-run not found"
        resp = http.post("/api/runs/no-such-run/resume", json={"answers": {"a": 1}})
        assert resp.status_code == 404
        resp = http.get("/api/runs/no-such-run/events")
        assert resp.status_code == 404
    with local_stack.http(token="wrong-token") as http:
        resp = http.post("/api/runs", json={"workflow": "human_pause", "run_id": "never-created"})
        assert resp.status_code == 401
    with local_stack.http() as http:
        assert http.get("/api/runs/never-created").status_code == 404
        assert http.get("/api/openapi.json").json()["info"]["title"] == "Baton API"


def test_the_slack_url_of_a_stack_without_slack_is_a_404_in_words(local_stack: LocalStackProcess) -> None:
    """`baton dev` with no SLACK_SIGNING_SECRET: a Slack interaction is told Slack is not configured (no 502)."""
    with local_stack.http() as http:
        resp = http.post("/slack/interactions", content=b"payload=%7B%7D", headers={"X-Slack-Signature": "v0=0"})
    assert resp.status_code == 404, resp.text
    assert resp.json()["error"] == "not_found" and "Slack is not configured" in resp.json()["message"]


def test_port_in_use_is_reported_clearly(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    port = local_stack.api_url.rsplit(":", 1)[1]
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "baton.cli", "dev", "--port", port, "--no-demo", "--state-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert f"port {port}" in result.stderr and "already in use" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_ctrl_c_shuts_down_cleanly_and_removes_state(tmp_path: Path) -> None:
    stack = start_local_stack(tmp_path / "own")
    assert stack.state["token"] and stack.api_url.startswith("http://127.0.0.1:")
    assert stop_local_stack(stack) == 0
    assert not (tmp_path / "own" / "local.json").exists()
    assert "stopped." in stack.log()


def test_an_identical_retry_is_idempotent_a_different_answer_is_409(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _run_id("e2e-idem")
    client.start_run("human_pause", {"prompt": "Retry-safe?", "timeout_seconds": 60}, run_id=run_id)
    wait_for(lambda: client.get_run(run_id)["status"] == "paused_waiting_human")
    first = client.resume(run_id, {"ok": True})
    retry = client.resume(run_id, {"ok": True})  # a client retrying after a lost response
    assert retry == first and first["resumed"] is True
    with pytest.raises(ConflictError):
        client.resume(run_id, {"ok": False})
    events = [e["type"] for e in client.events(run_id)["events"]]
    assert events.count("interaction_answered") == 1 and events.count("run_resumed") == 1


def test_agent_token_asks_and_drains_but_only_the_operator_answers(local_stack: LocalStackProcess) -> None:
    from baton.api.auth import agent_token
    from baton.client.sdk import Client
    from baton.errors import ForbiddenError

    run_id = _run_id("e2e-agent")
    agent = Client(local_stack.api_url, agent_token(local_stack.token, run_id))
    iid = agent.ask_async(run_id, "draft", "Which region?")["interaction_id"]
    with pytest.raises(ForbiddenError, match="operator action"):
        agent.answer(run_id, iid, "eu-west-1")
    with pytest.raises(ForbiddenError, match="scoped to run"):
        agent.ask_async(_run_id("other"), "draft", "Not mine?")
    local_stack.client().answer(run_id, iid, "eu-west-1")
    [message] = agent.drain_messages(run_id, "draft")
    assert message["text"].endswith("A: eu-west-1")
