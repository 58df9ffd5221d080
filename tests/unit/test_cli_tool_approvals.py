"""`baton runs questions` shows a pending tool approval for a person (baton/cli/tool_approval_text.py):
the tool, its risk, the agent's reason, a shell command as a command line and the other arguments as
JSON, and the commands that answer it; the approve command it prints works as printed."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from typer.testing import CliRunner

from baton.api import deps
from baton.api.app import create_app
from baton.cli.main import app as cli_app
from baton.client.sdk import Client
from baton.contracts.tool_approvals import ToolApprovalRequest, ToolApprovalView
from baton.domain.tool_calls import ToolCall
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.runs import RunService
from tests.fakes import RecordingDeadlineTimers

if TYPE_CHECKING:
    from baton.services.core import Core

TOKEN = "local-secret"
RUN = "cli-tools"


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
    core.ensure_run(RUN)
    yield served
    deps.set_services_provider(deps._default_provider)


def _cli(*args: str) -> Any:
    return CliRunner().invoke(cli_app, list(args), env={"COLUMNS": "200", "BATON_CLI": "baton"})


def _ask(client: Client, arguments: dict[str, Any], schema: dict[str, Any] | None = None) -> ToolApprovalView:
    call = ToolCall(tool="Bash", arguments=arguments, arguments_schema=schema)
    request = ToolApprovalRequest(call=call, risk="high", reason="clean before the release", timeout_seconds=600)
    return client.request_tool_approval(RUN, request)


def test_a_tool_approval_is_shown_with_its_command_arguments_and_how_to_answer(client: Client) -> None:
    arguments = {"command": "rm -rf build/[x]", "timeout": 120, "env": {"CI": "1"}}
    asked = _ask(client, arguments)

    out = _cli("runs", "questions", RUN)
    assert out.exit_code == 0, out.output
    assert f"tool approval {asked.interaction_id}: Bash (high risk)" in out.output
    assert "reason: clean before the release" in out.output
    assert "$ rm -rf build/[x]" in out.output  # markup-looking text from the agent stays text
    assert '"timeout": 120' in out.output and '"CI": "1"' in out.output
    assert "no pending questions" not in out.output

    hints = {line.split(":", 1)[0].strip(): line.split(":", 1)[1] for line in out.output.splitlines() if ":" in line}
    decide = ["baton", "runs", "decide", RUN, asked.interaction_id]
    assert shlex.split(hints["approve"]) == [*decide, "--approve"]
    assert shlex.split(hints["deny"]) == [*decide, "--deny", "<why: the agent reads it>"]
    edit = shlex.split(hints["edit"])
    assert edit[:6] == [*decide, "--edit"] and json.loads(edit[6]) == arguments

    done = _cli(*shlex.split(hints["approve"])[1:])  # the approve command works as printed
    assert done.exit_code == 0, done.output
    assert f"{asked.interaction_id} (Bash): approved by local-operator" in done.output
    view = client.get_tool_approval(RUN, asked.interaction_id)
    assert view.decision is not None and view.decision.decision == "approve"


def test_decide_denies_with_its_reason_and_an_edit_the_schema_refuses_is_a_422(client: Client) -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string", "maxLength": 20}}}
    denied = _ask(client, {"command": "git push --force"}, schema)
    assert _cli("runs", "decide", RUN, denied.interaction_id).exit_code == 2  # no decision given: nothing sent
    assert _cli("runs", "decide", RUN, denied.interaction_id, "--approve", "--deny", "no").exit_code == 2
    assert client.get_tool_approval(RUN, denied.interaction_id).status == "pending"
    out = _cli("runs", "decide", RUN, denied.interaction_id, "--deny", "not on main")
    assert out.exit_code == 0 and "denied by local-operator: not on main" in out.output, out.output

    edited = _ask(client, {"command": "make"}, schema)
    refused = _cli("runs", "decide", RUN, edited.interaction_id, "--edit", '{"command": "' + "x" * 30 + '"}')
    assert refused.exit_code != 0 and "answer.arguments.command" in refused.output, refused.output
    assert _cli("runs", "decide", RUN, edited.interaction_id, "--edit", "{}", "--remember", "run").exit_code == 2
    out = _cli("runs", "decide", RUN, edited.interaction_id, "--edit", '{"command": "make test"}', "--json")
    assert out.exit_code == 0, out.output
    decision = json.loads(out.output)["decision"]
    assert decision["decision"] == "edit" and decision["arguments"] == {"command": "make test"}

    remembered = _ask(client, {"command": "make lint"}, schema)
    args = ["--approve", "--remember", "run", "--remember-for", "600", "--json"]
    decision = json.loads(_cli("runs", "decide", RUN, remembered.interaction_id, *args).output)["decision"]
    assert decision["remember"]["scope"] == "run" and decision["remember"]["expires_in_seconds"] == 600
