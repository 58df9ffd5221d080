"""`baton policy backtest FILE` and `baton policy report` against the in-process API: decided tool approvals
across runs, replayed under a policy file or compared with the recorded shadow decisions, printed grouped
(and as the typed result with --json)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import typer
from typer.testing import CliRunner

from baton.api import deps
from baton.api.app import create_app
from baton.cli.policy_history import register, since_time
from baton.client.sdk import Client
from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import ToolCall
from baton.events import PolicyDecided
from baton.local.http_adapter import to_proxy_event
from baton.policy.backtest import PolicyComparison
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.runs import RunService
from baton.services.tool_approvals import ToolApprovalService
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.services.core import Core
    from tests.conftest import FixedClock

TOKEN = "local-secret"
EXAMPLE = Path(__file__).parents[2] / "examples" / "policy" / "tools.cedar"
SINCE = "2026-12-01T00:00:00Z"


@pytest.fixture
def client(core: Core, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    core.timers = RecordingDeadlineTimers()
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        event = to_proxy_event(request.method, path, dict(request.headers), request.content, "127.0.0.1")
        result = app.resolve(event, None)
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())

    served = Client("http://baton.test", TOKEN, transport=httpx.MockTransport(handle))
    monkeypatch.setattr("baton.cli.common.client", lambda: served)
    yield served
    deps.set_services_provider(deps._default_provider)


def _decide(core: Core, run_id: str, command: str, answer: dict[str, Any], *, shadow: str | None = None) -> str:
    """A Bash call in `run_id` decided by alice; with `shadow`, the shadow outcome recorded for it."""
    core.ensure_run(run_id)
    service = ToolApprovalService(core)
    request = ToolApprovalRequest(
        call=ToolCall(tool="Bash", arguments={"command": command}), reason="work", timeout_seconds=600
    )
    asked, _ = service.request(run_id, request, caller="agent")
    service.answer(run_id, asked.interaction_id, answer, caller="alice")
    if shadow is not None:
        decided = PolicyDecided(
            interaction_id=asked.interaction_id,
            action="call_tool",
            target="Bash",
            outcome=shadow,
            rule=f"{shadow}-rule",
            policy_version="sha256:shadow",
            mode="shadow",
            applied=False,
        )
        core.record(run_id, decided)
    return asked.interaction_id


@pytest.fixture
def history(core: Core, clock: FixedClock) -> dict[str, str]:
    """Before SINCE: one denied `ls`; after it, across two runs, what each group needs."""
    old = _decide(core, "run-old", "ls old", {"decision": "deny", "reason": "no"}, shadow="allow")
    clock.current = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
    ids = {
        "old": old,
        "ls_denied": _decide(core, "run-a", "ls -la", {"decision": "deny", "reason": "not now"}, shadow="allow"),
        "curl_approved": _decide(core, "run-b", "curl https://example.com", {"decision": "approve"}, shadow="ask"),
        "rm_1": _decide(core, "run-a", "rm -rf build", {"decision": "approve"}, shadow="ask"),
        "rm_2": _decide(core, "run-b", "rm -rf dist", {"decision": "approve"}, shadow="ask"),
        "ls_approved": _decide(core, "run-b", "ls", {"decision": "approve"}),
    }
    return ids


def _cli(*args: str) -> Any:
    app = typer.Typer()
    register(app)
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_backtest_prints_what_the_policy_would_change_grouped(client: Client, history: dict[str, str]) -> None:
    out = _cli("backtest", str(EXAMPLE), "--since", SINCE)
    assert out.exit_code == 0, out.output
    text = out.output
    assert "Allowed that a person denied: 1" in text
    assert f"run-a {history['ls_denied']} Bash command=ls -la  rule read-only: denied by alice" in text
    assert "Denied that a person approved: 1" in text
    assert f"run-b {history['curl_approved']} Bash command=curl https://example.com  rule no-network" in text
    assert "Asked that was always approved: 1" in text and "Bash rule destructive: 2 calls, all approved" in text
    assert "Unchanged: 1" in text and history["old"] not in text  # before --since


def test_backtest_json_is_the_typed_result(client: Client, history: dict[str, str]) -> None:
    out = _cli("backtest", str(EXAMPLE), "--since", SINCE, "--json")
    assert out.exit_code == 0, out.output
    result = PolicyComparison.model_validate(json.loads(out.output))
    assert [c.interaction_id for c in result.allowed_that_a_person_denied] == [history["ls_denied"]]
    [asked] = result.asked_that_was_always_approved
    assert {c.interaction_id for c in asked.calls} == {history["rm_1"], history["rm_2"]}
    assert (result.compared, result.unchanged, result.since) == (5, 1, "2026-12-01T00:00:00.000Z")


def test_backtest_refuses_a_bad_policy_naming_the_problem(client: Client, tmp_path: Path) -> None:
    bad = tmp_path / "bad.cedar"
    bad.write_text("permit(principal, action, resource);")
    out = _cli("backtest", str(bad))
    assert out.exit_code == 1 and "needs an @id" in out.output, out.output


def test_report_compares_the_shadow_decisions_with_people(client: Client, history: dict[str, str]) -> None:
    out = _cli("report", "--since", SINCE, "--json")
    assert out.exit_code == 0, out.output
    result = PolicyComparison.model_validate(json.loads(out.output))
    assert [c.interaction_id for c in result.allowed_that_a_person_denied] == [history["ls_denied"]]
    assert result.denied_that_a_person_approved == []
    [asked] = result.asked_that_was_always_approved
    assert (asked.rule, asked.count) == ("ask-rule", 3)
    assert (result.compared, result.without_policy_decision) == (4, 1)  # `ls` approved had no shadow record
    text = _cli("report", "--since", SINCE).output
    assert "Bash rule ask-rule: 3 calls, all approved" in text and "1 decided calls have no shadow decision" in text


def test_since_is_an_age_or_an_iso_time() -> None:
    now = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
    assert since_time("7d", now) == "2026-11-28T12:00:00.000Z"
    assert since_time("90m", now) == "2026-12-05T10:30:00.000Z"
    assert since_time("2026-12-01T08:00:00", now) == "2026-12-01T08:00:00.000Z"  # no zone: UTC
    assert since_time("2026-12-01T09:00:00+01:00", now) == "2026-12-01T08:00:00.000Z"
    with pytest.raises(typer.BadParameter):
        since_time("last week", now)
