"""Interrupts through the real resolver on in-memory services: the HTTP contract, the SDK (over an
httpx MockTransport into the same resolver) and the `baton workflow` CLI."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from baton.cli.main import app as cli_app
from baton.client.interrupts import settle, wait_for
from baton.client.sdk import ApiUnavailableError, Client
from baton.contracts import InterruptClaimed, InterruptView
from baton.errors import InterruptCancelledError, InterruptTimeoutError, InterruptValidationError
from baton.local.http_adapter import to_proxy_event
from baton.services.core import Core
from tests.unit.conftest import LOCAL_TOKEN

TOKEN = LOCAL_TOKEN  # the `app` fixture's (tests/unit/conftest.py)


@pytest.fixture
def api(app: Any) -> Any:
    def call(method: str, path: str, body: Any = None, token: str | None = TOKEN, raw: str | None = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else (json.dumps(body) if body is not None else "")
        result = app.resolve(to_proxy_event(method, path, headers, data.encode(), "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    return call


def _handler(app: Any) -> Any:
    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        event = to_proxy_event(request.method, path, dict(request.headers), request.content, "127.0.0.1")
        result = app.resolve(event, None)
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())

    return handle


@pytest.fixture
def client(app: Any) -> Client:
    return Client("http://baton.test", TOKEN, transport=httpx.MockTransport(_handler(app)))


CREATE = {
    "sessionId": "sess-abc",
    "workflowId": "deploy",
    "prompt": "Choose deployment target",
    "schema": {"type": "enum", "enum": ["staging", "production"]},
    "state": {"build": {"sha": "abc1234"}, "retries": 1},
    "notify": ["console"],
}


def _create(api: Any, **changes: Any) -> dict[str, Any]:
    status, body = api("POST", "/api/v1/interrupts", {**CREATE, **changes})
    assert status == 201, body
    return dict(body)


# ---- HTTP ------------------------------------------------------------------------------------------
def test_create_read_list(api: Any) -> None:
    rec = _create(api)
    assert rec["status"] == "pending" and rec["schema"]["enum"] == ["staging", "production"]
    status, one = api("GET", f"/api/v1/interrupts/{rec['id']}")
    assert status == 200 and one["id"] == rec["id"] and one["state"] == CREATE["state"]
    status, listed = api("GET", "/api/v1/interrupts?status=pending&sessionId=sess-abc")
    assert status == 200 and listed["count"] == 1 and listed["interrupts"][0]["id"] == rec["id"]
    status, listed = api("GET", "/api/v1/interrupts?sessionId=nobody")
    assert status == 200 and listed["count"] == 0


@pytest.mark.parametrize(
    ("body", "raw", "status", "error"),
    [
        (None, '{"sessionId": ', 400, "bad_request"),
        ({"prompt": "x"}, None, 422, "validation_failed"),
        ({**CREATE, "surprise": 1}, None, 422, "validation_failed"),
        ({**CREATE, "timeoutMs": -5}, None, 422, "validation_failed"),
        ({**CREATE, "schema": {"type": "colour"}}, None, 400, "bad_request"),
        ({**CREATE, "jsonSchema": {"$ref": "http://evil.example/s.json"}}, None, 400, "bad_request"),
        ({**CREATE, "state": {"blob": "x" * 70_000}}, None, 413, "payload_too_large"),
        ({**CREATE, "notify": ["pager"]}, None, 422, "validation_failed"),
        ({**CREATE, "sessionId": "has space"}, None, 400, "bad_request"),
    ],
)
def test_bad_create_is_4xx_and_changes_nothing(
    api: Any, core: Core, body: Any, raw: str | None, status: int, error: str
) -> None:
    got, resp = api("POST", "/api/v1/interrupts", body, raw=raw)
    assert (got, resp["error"]) == (status, error), resp
    assert resp["message"]
    assert core.store.get_run("sess-abc") is None
    assert api("GET", "/api/v1/interrupts?status=pending")[1]["count"] == 0


def test_resume_validation_then_success(api: Any) -> None:
    rec = _create(api)
    status, bad = api("POST", f"/api/v1/interrupts/{rec['id']}/resume", {"input": "prod", "stateEdits": []})
    assert status == 422 and bad["path"] == "$" and "staging" in bad["message"]
    status, bad = api(
        "POST", f"/api/v1/interrupts/{rec['id']}/resume", {"input": "staging", "stateEdits": ["build.sha.deep=1"]}
    )
    assert status == 422 and bad["path"] == "build.sha.deep"
    status, bad = api("POST", f"/api/v1/interrupts/{rec['id']}/resume", {"input": "staging", "stateEdits": "x=1"})
    assert status == 422  # a lone string is not a list
    assert api("GET", f"/api/v1/interrupts/{rec['id']}")[1]["status"] == "pending"
    status, ok = api(
        "POST",
        f"/api/v1/interrupts/{rec['id']}/resume",
        {"input": "staging", "stateEdits": ["retries=5", "config.featureFlag=true", "note=hello world"]},
    )
    assert status == 200 and ok["resumed"] is True
    assert ok["interrupt"]["editedState"] == {
        "build": {"sha": "abc1234"},
        "retries": 5,
        "config": {"featureFlag": True},
        "note": "hello world",
    }
    status, again = api("POST", f"/api/v1/interrupts/{rec['id']}/resume", {"input": "production"})
    assert status == 409 and again["interrupt"]["value"] == "staging"


def test_claim_without_body_with_operator_and_force(api: Any) -> None:
    from baton.api.auth import operator_token

    bob = operator_token(TOKEN, "bob")
    rec = _create(api)
    status, claimed = api("POST", f"/api/v1/interrupts/{rec['id']}/claim")
    assert status == 200 and claimed["interrupt"]["claimedBy"] == "local-operator"
    status, taken = api("POST", f"/api/v1/interrupts/{rec['id']}/claim", {"operator": "bob"}, token=bob)
    assert status == 409 and taken["claimedBy"] == "local-operator"
    status, forced = api(
        "POST", f"/api/v1/interrupts/{rec['id']}/claim", {"operator": "bob", "force": True, "reason": "away"}, token=bob
    )
    assert status == 200 and forced["interrupt"]["claimedBy"] == "bob"
    status, _ = api("POST", f"/api/v1/interrupts/{rec['id']}/claim", {"forse": True})
    assert status == 422


def test_operator_name_is_refused_for_a_real_identity(app: Any) -> None:
    headers = {"Content-Type": "application/json"}
    event = to_proxy_event("POST", "/api/v1/interrupts", headers, json.dumps(CREATE).encode(), "127.0.0.1")
    event["requestContext"]["authorizer"] = {
        "claims": {"email": "alice@example.com", "email_verified": "true", "sub": "1"}
    }
    rec = json.loads(app.resolve(event, None)["body"])
    event = to_proxy_event(
        "POST", f"/api/v1/interrupts/{rec['id']}/claim", headers, json.dumps({"operator": "bob"}).encode(), "x"
    )
    event["requestContext"]["authorizer"] = {
        "claims": {"email": "alice@example.com", "email_verified": "true", "sub": "1"}
    }
    result = app.resolve(event, None)
    assert result["statusCode"] == 403


def test_cancel_and_after(api: Any) -> None:
    rec = _create(api)
    assert api("POST", f"/api/v1/interrupts/{rec['id']}/cancel", {})[0] == 422
    status, done = api("POST", f"/api/v1/interrupts/{rec['id']}/cancel", {"reason": "wrong build"})
    assert status == 200 and done["interrupt"]["status"] == "cancelled" and done["workflowFailed"] is False
    assert api("POST", f"/api/v1/interrupts/{rec['id']}/resume", {"input": "staging"})[0] == 410
    assert api("POST", f"/api/v1/interrupts/{rec['id']}/claim")[0] == 410


def test_unknown_ids_and_bad_queries(api: Any) -> None:
    assert api("GET", "/api/v1/interrupts/ghost")[0] == 404
    assert api("POST", "/api/v1/interrupts/ghost/resume", {"input": 1})[0] == 404
    assert api("POST", "/api/v1/interrupts/ghost/cancel", {"reason": "x"})[0] == 404
    assert api("GET", "/api/v1/interrupts?status=done")[0] == 400
    assert api("GET", "/api/v1/interrupts/ghost?waitSeconds=99")[0] == 422
    assert api("GET", "/api/v1/interrupts", token=None)[0] == 401


def test_timeout_via_api_is_410_on_resume(api: Any, clock: Any) -> None:
    rec = _create(api, timeoutMs=1000)
    clock.advance(2)
    status, body = api("POST", f"/api/v1/interrupts/{rec['id']}/resume", {"input": "staging"})
    assert status == 410 and body["reason"] == "timeout"
    assert api("GET", f"/api/v1/interrupts/{rec['id']}")[1]["timedOut"] is True


# ---- SDK -------------------------------------------------------------------------------------------
def test_sdk_interrupt_returns_value_and_edited_state(client: Client, core: Core) -> None:
    rec = client.create_interrupt(session_id="sdk-1", prompt="Port?", json_schema={"type": "integer"}, state={"a": 1})
    with pytest.raises(InterruptValidationError) as bad:
        client.resume_interrupt(rec["id"], "eighty", ["a=2"])
    assert bad.value.details["path"] == "$"
    client.resume_interrupt(rec["id"], 8080, ["a=2", "b.c=x"])
    result = client.wait_interrupt(rec["id"])  # a restarted waiter: finds it by id, gets the answer
    assert result.value == 8080 and result.state == {"a": 2, "b": {"c": "x"}} and result.state_edits == ["a=2", "b.c=x"]


def test_sdk_errors_for_cancel_and_timeout(client: Client, clock: Any) -> None:
    rec = client.create_interrupt(session_id="sdk-2", prompt="Go?")
    client.cancel_interrupt(rec["id"], "not needed")
    with pytest.raises(InterruptCancelledError) as cancelled:
        client.wait_interrupt(rec["id"])
    assert cancelled.value.details["reason"] == "not needed"
    rec = client.create_interrupt(session_id="sdk-2", prompt="Go?", timeout_ms=500)
    clock.advance(1)
    with pytest.raises(InterruptTimeoutError):
        client.wait_interrupt(rec["id"])


def test_sdk_key_finds_the_same_interrupt_after_a_restart(client: Client) -> None:
    first = client.create_interrupt(session_id="sdk-3", prompt="Deploy?", key="deploy")
    client.resume_interrupt(first["id"], True)
    result = client.interrupt(session_id="sdk-3", prompt="Deploy?", key="deploy")  # the restarted agent
    assert result.interrupt_id == first["id"] and result.value is True


def test_sdk_async_waiter(app: Any, client: Client) -> None:
    rec = client.create_interrupt(session_id="sdk-4", prompt="Async?")
    client.resume_interrupt(rec["id"], "yes")

    async def handle(request: httpx.Request) -> httpx.Response:
        return _handler(app)(request)

    async_client = Client("http://baton.test", TOKEN, async_transport=httpx.MockTransport(handle))
    result = asyncio.run(async_client.wait_interrupt_async(rec["id"]))
    assert result.value == "yes"
    again = client.create_interrupt(session_id="sdk-4", prompt="Again?", key="k")
    client.resume_interrupt(again["id"], {"ok": True})
    resolved = asyncio.run(async_client.interrupt_async(session_id="sdk-4", prompt="Again?", key="k"))
    assert resolved.value == {"ok": True} and resolved.interrupt_id == again["id"]


def test_sdk_returns_the_contract_models(client: Client, api: Any) -> None:
    rec = client.create_interrupt(session_id="sdk-5", prompt="Typed?", state={"a": 1})
    assert isinstance(rec, InterruptView) and rec.session_id == "sdk-5" and rec.state == {"a": 1}
    assert rec["sessionId"] == "sdk-5" and rec.get("nothing") is None  # wire names read like the old dicts
    claimed = client.claim_interrupt(rec.interrupt_id)
    assert isinstance(claimed, InterruptClaimed) and claimed.interrupt.claimed_by == "local-operator"
    [listed] = client.list_interrupts(session_id="sdk-5")
    assert listed == client.get_interrupt(rec.interrupt_id) == claimed.interrupt
    resumed = client.resume_interrupt(rec.interrupt_id, "ok", ["a=2"])
    assert resumed.resumed is True and resumed.interrupt.edited_state == {"a": 2}
    status, wire = api("GET", f"/api/v1/interrupts/{rec.interrupt_id}")
    assert status == 200 and wire == resumed.interrupt.wire()  # the SDK's model is the wire, field for field


def test_the_sdk_imports_without_the_server() -> None:
    import subprocess
    import sys

    code = (
        "import sys, baton.client.sdk; "
        "server = [m for m in sys.modules if m.startswith(('baton.services', 'baton.api', 'aws_lambda_powertools'))]; "
        "assert not server, server"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_wait_loop_backs_off_on_transient_errors_and_never_spins() -> None:
    calls: list[float] = []
    sleeps: list[float] = []
    now = [0.0]
    answers: list[Any] = [
        ApiUnavailableError("down"),
        ApiUnavailableError("down"),
        {"status": "pending"},  # a server that ignores waitSeconds returns at once
        {"status": "pending"},
        {"status": "answered", "id": "i", "sessionId": "s", "value": 1, "editedState": {}},
    ]

    def poll(wait: float) -> dict[str, Any]:
        calls.append(wait)
        item = answers.pop(0)
        if isinstance(item, Exception):
            raise item
        return dict(item)

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    result = wait_for(poll, poll_seconds=20, sleep=sleep, monotonic=lambda: now[0])
    assert result.value == 1 and calls == [20, 20, 20, 20, 20]
    assert sleeps == [1.0, 2.0, 5.0, 5.0]  # backoff 1, 2; then at least 5 s per idle cycle


@pytest.mark.parametrize(("asked", "sent"), [(60, 20.0), (21, 20.0), (1, 5.0), (0, 5.0), (12, 12.0)])
def test_wait_loop_clamps_poll_seconds_to_the_server_range(asked: float, sent: float) -> None:
    calls: list[float] = []
    records = [{"status": "pending"}, {"status": "answered", "id": "i", "sessionId": "s", "value": 1}]

    def poll(wait: float) -> dict[str, Any]:
        assert 5 <= wait <= 20  # a waitSeconds above 20 would be a 422
        calls.append(wait)
        return records.pop(0)

    assert wait_for(poll, poll_seconds=asked, sleep=lambda s: None, monotonic=lambda: 0.0).value == 1
    assert calls == [sent, sent]


def test_sdk_wait_interrupt_above_20_seconds_no_longer_422s(client: Client, api: Any) -> None:
    rec = _create(api)
    assert api("POST", f"/api/v1/interrupts/{rec['id']}/resume", {"input": "staging"})[0] == 200
    assert client.wait_interrupt(rec["id"], poll_seconds=45).value == "staging"
    assert client.get_interrupt(rec["id"], wait_seconds=30)["status"] == "answered"


def test_list_is_paged_with_an_opaque_next_token(client: Client, api: Any) -> None:
    made = [_create(api, prompt=f"P{n}")["id"] for n in range(5)]
    status, first = api("GET", "/api/v1/interrupts?sessionId=sess-abc&limit=2")
    assert status == 200 and first["count"] == 2 and first["next"]
    seen = [r["id"] for r in first["interrupts"]]
    token = first["next"]
    while token:
        status, page = api("GET", f"/api/v1/interrupts?sessionId=sess-abc&limit=2&next={token}")
        assert status == 200 and page["count"] <= 2
        seen += [r["id"] for r in page["interrupts"]]
        token = page["next"]
    assert sorted(seen) == sorted(made) and len(seen) == 5
    status, by_status = api("GET", "/api/v1/interrupts?status=pending&limit=3")
    assert by_status["count"] == 3 and by_status["next"]
    assert api("GET", "/api/v1/interrupts")[1]["count"] == 5  # default page size 50
    assert api("GET", "/api/v1/interrupts?limit=201")[0] == 422
    assert api("GET", "/api/v1/interrupts?next=garbage")[0] == 400
    status, other = api("GET", f"/api/v1/interrupts?status=answered&next={first['next']}")
    assert status == 400 and "another listing" in other["message"]
    assert len(client.list_interrupts(session_id="sess-abc")) == 5  # the SDK follows the pages
    assert len(client.list_interrupts(session_id="sess-abc", max_items=3)) == 3


def test_settle_maps_statuses() -> None:
    assert settle({"status": "pending"}) is None
    with pytest.raises(InterruptTimeoutError):
        settle({"status": "cancelled", "id": "i", "timedOut": True, "reason": "timeout", "timeoutMs": 5})
    with pytest.raises(InterruptCancelledError):
        settle({"status": "cancelled", "id": "i", "timedOut": False, "reason": "no", "resolvedBy": "a"})


# ---- CLI -------------------------------------------------------------------------------------------
@pytest.fixture
def cli(client: Client, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr("baton.cli.common.client", lambda: client)
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(cli_app, list(args))

    return run


def test_cli_inspect_shows_what_the_seed_shows(cli: Any, api: Any) -> None:
    rec = _create(api)
    out = cli("workflow", "inspect", "sess-abc")
    assert out.exit_code == 0, out.output
    text = out.output
    assert "Session: sess-abc" in text and "Interrupts: 1" in text
    assert f"[PENDING] {rec['id']}" in text and "prompt:    Choose deployment target" in text
    assert "workflow:  deploy" in text and "(age " in text
    assert '{"type":"enum","enum":["staging","production"]}' in text and '"sha": "abc1234"' in text
    assert f"baton workflow resume-interrupt sess-abc --interrupt-id {rec['id']} --input='<json>'" in text
    assert "--edit-state='path.to.field=value'" in text
    as_json = json.loads(cli("workflow", "inspect", "sess-abc", "--json").output)
    assert as_json["interrupts"][0]["id"] == rec["id"]


def test_cli_resume_latest_with_edits_then_inspect_all(cli: Any, api: Any) -> None:
    _create(api)
    latest = _create(api, prompt="Second question")
    out = cli(
        "workflow", "resume-interrupt", "sess-abc", "--edit-state", "retries=5",
        "--edit-state", "config.featureFlag=true", "--input", '"production"',
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert f"resumed interrupt {latest['id']}" in out.output and "2 state edit(s)" in out.output
    text = cli("workflow", "inspect", "sess-abc", "--all").output
    assert "[ANSWERED]" in text and "[PENDING]" in text and "retries=5" in text


def test_cli_errors_are_one_readable_line(cli: Any, api: Any) -> None:
    rec = _create(api)
    out = cli("workflow", "resume-interrupt", "sess-abc", "--input", "production")
    assert out.exit_code == 2 and "not JSON" in out.output and "Traceback" not in out.output
    out = cli("workflow", "resume-interrupt", "sess-abc", "--input", '"prod"')
    assert out.exit_code == 1 and "validation_failed" in out.output and "still open" in out.output
    out = cli("workflow", "resume-interrupt", "sess-abc", "--input", '"staging"', "--edit-state", "=1")
    assert out.exit_code == 1 and "path" in out.output
    out = cli("workflow", "resume-interrupt", "nobody", "--input", "1")
    assert out.exit_code == 2 and "no pending interrupt" in out.output
    out = cli("workflow", "resume-interrupt", "other", "--interrupt-id", rec["id"], "--input", "1")
    assert out.exit_code == 2 and "belongs to session sess-abc" in out.output
    out = cli("workflow", "resume-interrupt", "sess-abc", "--interrupt-id", "ghost", "--input", "1")
    assert out.exit_code == 1 and "not_found" in out.output and "Traceback" not in out.output


def test_cli_claim_and_cancel(cli: Any, api: Any) -> None:
    rec = _create(api)
    out = cli("workflow", "claim-interrupt", "sess-abc")
    assert out.exit_code == 0 and "claimed by local-operator" in out.output
    out = cli("workflow", "claim-interrupt", "sess-abc", "--operator", "bob")
    assert out.exit_code == 1 and "you are local-operator; you cannot act as bob" in out.output
    out = cli("workflow", "cancel-interrupt", "sess-abc", "--reason", "obsolete")
    assert out.exit_code == 0 and f"interrupt {rec['id']} cancelled: obsolete" in out.output


def test_dev_webhook_url_needs_a_secret() -> None:
    out = CliRunner().invoke(cli_app, ["dev", "--webhook-url", "http://127.0.0.1:1/hook", "--no-demo"])
    assert out.exit_code == 2 and "--webhook-secret is required" in out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)


def test_create_with_a_2020_12_schema_is_a_clear_400(api: Any) -> None:
    body = {**CREATE, "jsonSchema": {"type": "array", "prefixItems": [{"type": "string"}]}}
    status, err = api("POST", "/api/v1/interrupts", body)
    assert status == 400 and err["error"] == "bad_request"
    assert "prefixItems" in err["message"] and "draft-04, draft-06 and draft-07" in err["message"]
    assert api("GET", "/api/v1/interrupts?sessionId=sess-abc")[1]["count"] == 0  # nothing was stored


ACTS_AS_ALICE = [
    ("claim", {"operator": "alice"}),
    ("claim/renew", {"operator": "alice"}),
    ("claim/release", {"operator": "alice"}),
    ("reassign", {"to": "carol", "operator": "alice"}),
    ("resume", {"input": "staging", "operator": "alice"}),
    ("cancel", {"reason": "not needed", "operator": "alice"}),
]


def test_a_named_operator_never_acts_as_the_operator_a_body_names(api: Any) -> None:
    """Who acts comes from the token alone: bob's token naming alice is a 403 naming both, on each of the
    six operator actions, nothing is written as alice, and bob naming himself still acts."""
    from baton.api.auth import operator_token

    bob = operator_token(TOKEN, "bob")
    rec = _create(api)
    assert api("POST", f"/api/v1/interrupts/{rec['id']}/claim", {"operator": "bob"}, token=bob)[0] == 200
    for action, body in ACTS_AS_ALICE:
        status, refused = api("POST", f"/api/v1/interrupts/{rec['id']}/{action}", body, token=bob)
        assert status == 403, (action, refused)
        assert "you are bob" in refused["message"] and "act as alice" in refused["message"], action
        assert (refused["operator"], refused["caller"]) == ("alice", "bob"), action
    status, view = api("GET", f"/api/v1/interrupts/{rec['id']}", token=bob)
    assert status == 200 and view["status"] == "pending" and view["claimedBy"] == "bob"
    status, events = api("GET", f"/api/runs/{CREATE['sessionId']}/events")
    assert status == 200 and events["events"], events
    status, log = api("GET", f"/api/runs/{CREATE['sessionId']}/audit")
    assert status == 200 and "alice" not in json.dumps([events, log])
    status, resumed = api("POST", f"/api/v1/interrupts/{rec['id']}/resume", {"input": "staging"}, token=bob)
    assert status == 200 and resumed["interrupt"]["resolvedBy"] == "bob", resumed
