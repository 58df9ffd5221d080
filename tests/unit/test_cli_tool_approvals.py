"""`baton runs questions` shows a pending tool approval for a person (baton/cli/tool_approval_text.py):
the tool, its risk, the agent's reason, a shell command as a command line and the other arguments as
JSON, and the commands that answer it; the approve command it prints works as printed."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest
from typer.testing import CliRunner

from baton.api import deps
from baton.api.app import create_app
from baton.cli.main import app as cli_app
from baton.client.sdk import Client
from baton.contracts.tool_approvals import ToolApprovalRequest
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


def test_a_tool_approval_is_shown_with_its_command_arguments_and_how_to_answer(client: Client) -> None:
    call = ToolCall(tool="Bash", arguments={"command": "rm -rf build/[x]", "timeout": 120, "env": {"CI": "1"}})
    request = ToolApprovalRequest(call=call, risk="high", reason="clean before the release", timeout_seconds=600)
    asked = client.request_tool_approval(RUN, request)

    out = CliRunner().invoke(cli_app, ["runs", "questions", RUN], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert f"tool approval {asked.interaction_id}: Bash (high risk)" in out.output
    assert "reason: clean before the release" in out.output
    assert "$ rm -rf build/[x]" in out.output  # markup-looking text from the agent stays text
    assert '"timeout": 120' in out.output and '"CI": "1"' in out.output
    assert "no pending questions" not in out.output

    approve = next(line for line in out.output.splitlines() if line.strip().startswith("approve:"))
    argv = shlex.split(approve.split("approve:", 1)[1])
    assert argv[:5] == ["baton", "runs", "answer", RUN, asked.interaction_id]
    done = CliRunner().invoke(cli_app, argv[1:])
    assert done.exit_code == 0, done.output
    view = client.get_tool_approval(RUN, asked.interaction_id)
    assert view.decision is not None and view.decision.decision == "approve"

    edit = next(line for line in out.output.splitlines() if line.strip().startswith("edit:"))
    assert json.loads(shlex.split(edit.split("edit:", 1)[1])[5])["arguments"] == call.arguments
