"""`baton hook claude-code` (baton/cli/hook.py, baton/client/claude_code.py) driven with real-shaped
PreToolUse JSON, through the SDK into the real resolver on in-memory services (an httpx MockTransport,
as tests/unit/test_cli_ask.py): approve, deny, edit, a remembered grant, pending -> defer / deny, a
deadline that takes the default, and errors that never allow."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from typer.testing import CliRunner

from baton.api import deps
from baton.api.app import create_app
from baton.api.auth import agent_token
from baton.cli.main import app as cli_app
from baton.client.claude_code import HookSettings, PreToolUse, decide
from baton.client.sdk import Client
from baton.domain.tool_calls import ToolCall
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.runs import RunService

if TYPE_CHECKING:
    from baton.models import Interaction
    from baton.services.core import Core
    from tests.conftest import FixedClock

TOKEN = "local-secret"
SESSION = "0f8b2c1e-3d4a-4c5b-9e6f-7a8b9c0d1e2f"  # Claude Code's session ids are UUIDs: the run
EVENT: dict[str, Any] = {
    "session_id": SESSION,
    "transcript_path": f"/home/dev/.claude/projects/-home-dev-app/{SESSION}.jsonl",
    "cwd": "/home/dev/app",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build/", "description": "Remove the build directory"},
    "tool_use_id": "toolu_01ABCDEF",
}


class Api:
    """The resolver, and what a person does when the hook's first long-poll arrives."""

    def __init__(self, core: Core) -> None:
        settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
        services = Services(settings=settings, core=core, runs=RunService(core))
        deps.set_services_provider(lambda: services)
        self.app = create_app()
        self.core = core
        self.sent: list[tuple[str, str]] = []
        self.on_first_poll: list[Callable[[str], None]] = []  # given the approval's id

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
        event = to_proxy_event(method, path, headers, json.dumps(body).encode() if body else b"", "127.0.0.1")
        result = self.app.resolve(event, None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        self.sent.append((request.method, path.split("?")[0]))
        if request.method == "GET" and "/tool-approvals/" in path:
            approval_id = path.split("?")[0].rsplit("/", 1)[1]
            while self.on_first_poll:
                self.on_first_poll.pop(0)(approval_id)
        event = to_proxy_event(request.method, path, dict(request.headers), request.content, "127.0.0.1")
        result = self.app.resolve(event, None)
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())

    def answers(self, answer: dict[str, Any]) -> Callable[[str], None]:
        def answer_it(approval_id: str) -> None:
            status, body = self.call(
                "POST", f"/api/runs/{SESSION}/interactions/{approval_id}/answer", {"answer": answer}
            )
            assert status == 200, body

        return answer_it

    def approvals(self) -> list[Interaction]:
        return self.core.store.list_run_interactions(SESSION, kind="tool_approval")


@pytest.fixture
def api(core: Core, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Api]:
    served = Api(core)
    monkeypatch.setenv("BATON_CLAUDE_CODE_DEFERRED", str(tmp_path / "deferred"))  # a defer's record, not ~/
    client = Client("http://baton.test", agent_token(TOKEN, SESSION), transport=httpx.MockTransport(served.handle))
    monkeypatch.setattr("baton.cli.common.client", lambda: client)
    monkeypatch.delenv("BATON_RUN", raising=False)
    monkeypatch.delenv("BATON_HOOK_HEADLESS", raising=False)
    yield served
    deps.set_services_provider(deps._default_provider)


def hook(*args: str, event: dict[str, Any] | None = None, stdin: str | None = None) -> tuple[int, dict[str, Any]]:
    out = CliRunner().invoke(cli_app, ["hook", "claude-code", *args], input=stdin or json.dumps(event or EVENT))
    return out.exit_code, json.loads(out.stdout) if out.exit_code == 0 else {"stderr": out.stderr}


def decision_of(output: dict[str, Any]) -> tuple[str, str]:
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    return specific["permissionDecision"], specific["permissionDecisionReason"]


def test_approved_is_allow_after_consuming_the_approval_of_this_exact_input(api: Api) -> None:
    api.on_first_poll.append(api.answers({"decision": "approve", "reason": "build dir only"}))
    code, out = hook("--wait", "5")
    assert code == 0
    assert decision_of(out) == ("allow", "Approved by local-operator: build dir only")
    assert "updatedInput" not in out["hookSpecificOutput"]
    [approval] = api.approvals()
    assert approval.state.reason == "consumed"  # single use: used by this call
    assert approval.request.tool.digest == ToolCall(tool="Bash", arguments=EVENT["tool_input"]).digest  # type: ignore[union-attr]
    assert ("POST", f"/api/runs/{SESSION}/tool-approvals/{approval.interaction_id}/consume") in api.sent


def test_denied_is_deny_with_the_persons_reason(api: Api) -> None:
    api.on_first_poll.append(api.answers({"decision": "deny", "reason": "not on the shared box"}))
    code, out = hook("--wait", "5")
    assert (code, decision_of(out)) == (0, ("deny", "not on the shared box"))
    assert not any(path.endswith("/consume") for _, path in api.sent)


def test_an_edit_is_allow_with_the_updated_input_it_consumed(api: Api) -> None:
    edited = {"command": "rm -rf build/tmp", "description": "Remove only the temp dir"}
    api.on_first_poll.append(api.answers({"decision": "edit", "arguments": edited}))
    code, out = hook("--wait", "5")
    assert code == 0 and decision_of(out)[0] == "allow"
    assert out["hookSpecificOutput"]["updatedInput"] == edited
    [approval] = api.approvals()
    assert (
        approval.state.reason == "consumed"
        and approval.state.answer["digest"] == ToolCall(tool="Bash", arguments=edited).digest
    )


def test_a_remembered_grant_answers_the_next_call_at_once(api: Api) -> None:
    remember = {
        "scope": "session",
        "expires_in_seconds": 3600,
        "constraint": {"properties": {"command": {"pattern": "^rm -rf build/"}}},
    }
    api.on_first_poll.append(api.answers({"decision": "approve", "remember": remember}))
    assert decision_of(hook("--wait", "5")[1])[0] == "allow"
    again = {**EVENT, "tool_input": {"command": "rm -rf build/cache"}, "tool_use_id": "toolu_02"}
    code, out = hook("--wait", "0", event=again)
    assert code == 0 and decision_of(out)[0] == "allow" and "remembered grant" in decision_of(out)[1]
    outside = {**EVENT, "tool_input": {"command": "rm -rf /"}, "tool_use_id": "toolu_03"}
    assert decision_of(hook("--wait", "0", event=outside)[1])[0] == "deny"  # outside the constraint: asks
    assert [a.state.status for a in api.approvals()] == ["answered", "answered", "pending"]


def test_a_policy_allow_or_deny_answers_at_once_and_an_allow_is_consumed(api: Api, core: Core) -> None:
    from baton.policy.engine import Policy
    from baton.policy.source import FixedPolicy

    core.policy = FixedPolicy(
        Policy.load(
            '@id("build-dir") @reason("the build dir is scratch") permit(principal, action, resource in Tool::"Bash")'
            ' when { resource.hasTag("command") && resource.getTag("command") like "rm -rf build/*" };\n'
            '@id("no-root") @reason("never the root") forbid(principal, action, resource in Tool::"Bash")'
            ' when { resource.hasTag("command") && resource.getTag("command") == "rm -rf /" };'
        )
    )
    code, out = hook("--wait", "0")  # no person: the rule answered before the first poll
    assert (code, decision_of(out)) == (0, ("allow", "Approved by policy:build-dir: the build dir is scratch"))
    [allowed] = api.approvals()
    assert allowed.state.reason == "consumed"  # single use, like a person's approve
    denied_call = {**EVENT, "tool_input": {"command": "rm -rf /"}, "tool_use_id": "toolu_02"}
    code, out = hook("--wait", "0", event=denied_call)
    assert (code, decision_of(out)) == (0, ("deny", "never the root"))
    assert sum(path.endswith("/consume") for _, path in api.sent) == 1
    assert [method for method, _ in api.sent] == ["POST", "POST", "POST"]  # answered in the request's response


def test_still_pending_is_defer_headless_and_deny_otherwise_and_a_repeat_finds_the_same_approval(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = hook("--wait", "0")
    decision, reason = decision_of(out)
    assert (code, decision) == (0, "deny") and "continue with other work" in reason
    code, out = hook("--wait", "0", "--headless")
    assert (code, decision_of(out)[0]) == (0, "defer")
    monkeypatch.setenv("BATON_HOOK_HEADLESS", "1")
    assert decision_of(hook("--wait", "0")[1])[0] == "defer"
    assert len(api.approvals()) == 1  # three hooks, one approval


def test_the_deadline_takes_the_default_deny_and_never_allows(api: Api, clock: FixedClock) -> None:
    api.on_first_poll.append(lambda _: clock.advance(61))
    code, out = hook("--wait", "5", "--timeout-seconds", "60")
    decision, reason = decision_of(out)
    assert (code, decision) == (0, "deny") and "nobody answered" in reason
    [approval] = api.approvals()
    assert approval.state.outcome == "timed_out_default" and approval.state.answered_by is None


def test_an_error_never_allows(api: Api) -> None:
    def broken(_: str) -> None:
        raise httpx.ConnectError("the API went away")

    api.on_first_poll.append(broken)
    code, out = hook("--wait", "5")
    decision, reason = decision_of(out)
    assert (code, decision) == (0, "deny") and "not run" in reason


def test_a_changed_call_after_the_approval_is_refused_by_consume(api: Api, core: Core) -> None:
    class Swapping(Client):
        """The input the hook allows is not the one approved: consume says 409, the hook denies."""

        def consume_tool_approval(self, run_id: str, interaction_id: str, digest: str) -> Any:
            return super().consume_tool_approval(run_id, interaction_id, "0" * 64)

    api.on_first_poll.append(api.answers({"decision": "approve"}))
    client = Swapping("http://baton.test", agent_token(TOKEN, SESSION), transport=httpx.MockTransport(api.handle))
    out = decide(PreToolUse.model_validate(EVENT), client, HookSettings(wait_seconds=5))
    decision, reason = decision_of(out)
    assert decision == "deny" and "approved another call" in reason


def test_stdin_that_is_not_a_pre_tool_use_event_exits_2(api: Api) -> None:
    code, out = hook(stdin='{"hook_event_name": "PostToolUse"}')
    assert code == 2 and "not a PreToolUse event" in out["stderr"]
    assert api.sent == []


def test_baton_run_names_the_run(api: Api, monkeypatch: pytest.MonkeyPatch, core: Core) -> None:
    monkeypatch.setenv("BATON_RUN", SESSION)
    other = {**EVENT, "session_id": "another-session"}
    assert decision_of(hook("--wait", "0", event=other)[1])[0] == "deny"
    [approval] = api.approvals()
    assert approval.request.tool.session == "another-session"  # type: ignore[union-attr]
