"""Interrupts end to end: `baton dev` in its own process (with the webhook and Slack channels subscribed to a
local receiver), driven over HTTP, through the SDK and through the `baton workflow` CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from baton.api.auth import operator_token
from baton.client.sdk import Client
from baton.errors import (
    ConflictError,
    GoneError,
    InterruptCancelledError,
    InterruptTimeoutError,
    InterruptValidationError,
)
from baton.notify import verify
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for

pytestmark = pytest.mark.e2e

SECRET = "whsec_e2e_interrupts"


@dataclass
class Receiver:
    url: str = ""
    posts: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)

    def to(self, path: str) -> list[tuple[dict[str, str], bytes]]:
        return [(h, b) for p, h, b in list(self.posts) if p == path]


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            state.posts.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()


@pytest.fixture(scope="module")
def stack(receiver: Receiver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    started = start_local_stack(
        tmp_path_factory.mktemp("baton-interrupts"),
        "--webhook-url",
        f"{receiver.url}/hook",
        "--webhook-secret",
        SECRET,
        "--slack-webhook-url",
        f"{receiver.url}/slack",
    )
    yield started
    stop_local_stack(started)


def _sid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _cli(stack: LocalStackProcess, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "baton.cli", *args], capture_output=True, text=True, timeout=60, env=env
    )


def _pending(client: Any, session: str) -> Any:
    found = client.list_interrupts(status="pending", session_id=session)
    return found[0] if found else None


def test_hosted_interrupt_claim_validation_then_resume_with_edits(stack: LocalStackProcess) -> None:
    client = stack.client()
    session = _sid("e2e-int")
    client.start_run(
        "interrupt",
        {
            "prompt": "Choose deployment target",
            "schema": {"type": "enum", "enum": ["staging", "production"]},
            "state": {"build": {"sha": "abc1234"}, "retries": 1},
            "workflowId": "deploy",
            "timeout_seconds": 120,
        },
        run_id=session,
    )
    rec = wait_for(lambda: _pending(client, session))
    assert rec["hosted"] is True and client.get_run(session)["status"] == "paused_waiting_human"

    # claim, visible to another operator; a claim by that other operator is refused unless forced
    alice = Client(stack.api_url, operator_token(stack.token, "alice"))  # `baton operator-token alice`
    assert alice.claim_interrupt(rec["id"])["interrupt"]["claimedBy"] == "alice"
    with pytest.raises(ConflictError) as taken:
        Client(stack.api_url, operator_token(stack.token, "bob")).claim_interrupt(rec["id"])
    assert taken.value.details["claimedBy"] == "alice"
    assert client.get_interrupt(rec["id"])["claimedBy"] == "alice"

    # the seed's inspect output, with the exact resume commands
    shown = _cli(stack, "workflow", "inspect", session)
    assert shown.returncode == 0, shown.stderr
    assert f"[PENDING] {rec['id']}" in shown.stdout and "workflow:  deploy" in shown.stdout
    assert f"baton workflow resume-interrupt {session} --interrupt-id {rec['id']} --input='<json>'" in shown.stdout

    # a value outside the enum: 422, readable, the interrupt stays open
    bad = _cli(stack, "workflow", "resume-interrupt", session, "--input", '"prod"', "--edit-state", "retries=5")
    assert bad.returncode == 1 and "validation_failed" in bad.stderr and "Traceback" not in bad.stderr
    with pytest.raises(InterruptValidationError) as bad_edit:
        client.resume_interrupt(rec["id"], "staging", ["build.sha.x=1"])
    assert bad_edit.value.details["path"] == "build.sha.x"
    assert client.get_interrupt(rec["id"])["status"] == "pending"

    ok = _cli(
        stack, "workflow", "resume-interrupt", session,
        "--edit-state", "retries=5", "--edit-state", "config.featureFlag=true", "--input", '"production"',
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "the workflow continues" in ok.stdout
    summary = wait_for(lambda: (s := client.get_run(session))["status"] == "succeeded" and s, timeout=20)
    assert summary["output"]["input"] == "production"
    assert summary["output"]["state"] == {"build": {"sha": "abc1234"}, "retries": 5, "config": {"featureFlag": True}}
    types = [e["type"] for e in client.events(session)["events"]]
    assert {"human_input_requested", "interrupt_claimed", "interrupt_resumed", "run_resumed"} <= set(types)


def test_sdk_interrupt_blocks_until_resumed(stack: LocalStackProcess) -> None:
    client = stack.client()
    session = _sid("e2e-sdk")
    outcome: dict[str, Any] = {}

    def agent() -> None:
        with stack.client() as own:
            outcome["result"] = own.interrupt(
                session_id=session,
                prompt="What port?",
                json_schema={"type": "integer", "minimum": 1024, "maximum": 65535},
                state={"service": "api", "replicas": 2},
            )
            outcome["at"] = time.monotonic()

    thread = threading.Thread(target=agent, daemon=True)
    thread.start()
    rec = wait_for(lambda: _pending(client, session))
    with pytest.raises(InterruptValidationError):
        client.resume_interrupt(rec["id"], 80)
    resumed_at = time.monotonic()
    client.resume_interrupt(rec["id"], 8080, ["replicas=3"])
    thread.join(timeout=15)
    result = outcome["result"]
    assert result.value == 8080 and result.state == {"service": "api", "replicas": 3}
    assert outcome["at"] - resumed_at < 2.0  # the long-poll answers within its 0.5 s re-read
    assert client.get_run(session)["status"] == "running"


def test_cancel_hosted_and_sdk(stack: LocalStackProcess) -> None:
    client = stack.client()
    hosted = _sid("e2e-cancel-h")
    client.start_run("interrupt", {"prompt": "Deploy?", "timeout_seconds": 120}, run_id=hosted)
    rec = wait_for(lambda: _pending(client, hosted))
    out = _cli(stack, "workflow", "cancel-interrupt", hosted, "--reason", "release frozen")
    assert out.returncode == 0, out.stderr
    summary = wait_for(lambda: (s := client.get_run(hosted))["status"] == "failed" and s, timeout=20)
    assert "cancelled by local-operator: release frozen" in summary["reason"]
    with pytest.raises(GoneError):
        client.resume_interrupt(rec["id"], "x")

    session = _sid("e2e-cancel-s")
    rec = client.create_interrupt(session_id=session, prompt="Proceed?")
    client.cancel_interrupt(rec["id"], "not needed")
    with pytest.raises(InterruptCancelledError) as cancelled:
        client.wait_interrupt(rec["id"])
    assert cancelled.value.details["reason"] == "not needed"


def test_timeout_hosted_and_sdk(stack: LocalStackProcess) -> None:
    client = stack.client()
    hosted = _sid("e2e-timeout-h")
    client.start_run("interrupt", {"prompt": "Anyone there?", "timeout_seconds": 1}, run_id=hosted)

    session = _sid("e2e-timeout-s")
    started = time.monotonic()
    with pytest.raises(InterruptTimeoutError):
        client.interrupt(session_id=session, prompt="Quick?", timeout_ms=1500)
    assert 1.4 < time.monotonic() - started < 4.0  # the long-poll wakes at the deadline
    rec = client.list_interrupts(session_id=session)[0]
    assert rec["status"] == "cancelled" and rec["reason"] == "timeout"
    with pytest.raises(GoneError):
        client.resume_interrupt(rec["id"], "late")

    summary = wait_for(lambda: (s := client.get_run(hosted))["status"] == "failed" and s, timeout=20)
    assert "timed out after 1s" in summary["reason"] and "Anyone there?" in summary["reason"]
    hosted_rec = client.list_interrupts(session_id=hosted)[0]
    assert hosted_rec["timedOut"] is True
    assert "interrupt_timed_out" in [e["type"] for e in client.events(hosted)["events"]]


AGENT = """
import sys
from baton.client.sdk import Client
result = Client().interrupt(session_id=sys.argv[1], prompt="Deploy target?", key="target", state={"n": 1})
print("RESULT", result.interrupt_id, result.value, result.state, flush=True)
"""


def test_waiter_restarted_after_a_crash_gets_the_answer(stack: LocalStackProcess, tmp_path: Path) -> None:
    client = stack.client()
    session = _sid("e2e-crash")
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token}
    first = subprocess.Popen([sys.executable, str(script), session], env=env, stdout=subprocess.PIPE, text=True)
    rec = wait_for(lambda: _pending(client, session), timeout=30)
    first.send_signal(signal.SIGKILL)  # the crash, while it waits
    first.wait(timeout=10)
    client.resume_interrupt(rec["id"], "staging", ["n=2"])  # answered while nobody waits
    second = subprocess.run([sys.executable, str(script), session], env=env, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0, second.stderr
    assert f"RESULT {rec['id']} staging {{'n': 2}}" in second.stdout
    assert client.list_interrupts(session_id=session)[0]["id"] == rec["id"]  # no second interrupt


def test_notifications_reach_webhook_signed_and_slack(stack: LocalStackProcess, receiver: Receiver) -> None:
    client = stack.client()
    session = _sid("e2e-notify")
    rec = client.create_interrupt(
        session_id=session, prompt="Approve the rollout?", notify=["console", "webhook", "slack"]
    )
    quiet = client.create_interrupt(session_id=session, prompt="Console only", notify=["console"])
    hooks = wait_for(lambda: [b for _, b in receiver.to("/hook") if rec["id"].encode() in b])
    slack = wait_for(lambda: [b for _, b in receiver.to("/slack") if rec["id"].encode() in b])
    headers, body = next((h, b) for h, b in receiver.to("/hook") if rec["id"].encode() in b)
    assert verify(body, headers["x-baton-signature"], SECRET)
    assert not verify(body, headers["x-baton-signature"], "wrong-secret")
    payload = json.loads(hooks[0])
    assert payload["event"] == "interrupt_created" and payload["kind"] == "interrupt"
    assert payload["run_id"] == session and payload["interaction_id"] == rec["id"]
    assert "resume-interrupt" in payload["how_to_answer"]
    blocks = json.loads(slack[0])
    assert blocks["blocks"][0]["type"] == "header" and "Approve the rollout?" in json.dumps(blocks)
    time.sleep(0.5)
    assert not [p for p in receiver.posts if quiet["id"].encode() in p[2]]  # filtered to console
    assert f"interaction={rec['id']}" in stack.log()  # the console channel printed it


def test_bad_input_is_clear_4xx_and_changes_nothing(stack: LocalStackProcess) -> None:
    session = _sid("e2e-bad")
    with stack.http() as http:
        for body, status in (
            ({"sessionId": session}, 422),
            ({"sessionId": session, "prompt": "x", "schema": {"type": "colour"}}, 400),
            ({"sessionId": session, "prompt": "x", "state": {"blob": "x" * 70_000}}, 413),
            ({"sessionId": session, "prompt": "x", "notify": ["pager"]}, 422),
            ({"sessionId": session, "prompt": "x", "timeoutMs": 0}, 422),
        ):
            resp = http.post("/api/v1/interrupts", json=body)
            assert resp.status_code == status and resp.json()["message"], resp.text
        resp = http.post("/api/v1/interrupts", content=b"{", headers={"Content-Type": "application/json"})
        assert resp.status_code == 400
        assert http.get(f"/api/runs/{session}").status_code == 404  # no session was created
        assert http.get("/api/v1/interrupts/ghost").status_code == 404
        assert http.post("/api/v1/interrupts/ghost/resume", json={"input": 1}).status_code == 404
        assert http.get("/api/v1/interrupts?status=nope").status_code == 400
    out = _cli(stack, "workflow", "resume-interrupt", session, "--input", "1")
    assert out.returncode == 2 and "no pending interrupt" in out.stderr and "Traceback" not in out.stderr
