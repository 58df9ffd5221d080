"""Issue 16, the newcomer's first hour: what the CLI prints (at 80 columns), the hints as they run where
the user is, the exit codes, and the local stack's terminal. Through the real resolver on in-memory
services (an httpx MockTransport), as tests/unit/test_interrupts_api.py does."""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console
from typer.testing import CliRunner

from baton.api import deps
from baton.api.app import create_app
from baton.cli import common, review, runs, workflow
from baton.cli.main import app as cli_app
from baton.client.sdk import Client
from baton.contracts import EventPage, EventView, ReviewView, RunView
from baton.domain.gate_payloads import ParkPayload
from baton.domain.review_gate import ACTIONS
from baton.hints import cli_command
from baton.local.http_adapter import to_proxy_event
from baton.local.moto_fixes import quiet_interpreter
from baton.notify.console import render_console
from baton.notify.model import Notification, how_to_answer_for
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.core import Core
from baton.services.runs import RunService

TOKEN = "local-secret"
WIDTH = 80


@pytest.fixture
def api_app(core: Core) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    yield create_app()
    deps.set_services_provider(deps._default_provider)


def _client(app: Any, token: str = TOKEN) -> Client:
    def handle(request: httpx.Request) -> httpx.Response:
        event = to_proxy_event(
            request.method, request.url.raw_path.decode(), dict(request.headers), request.content, "127.0.0.1"
        )
        result = app.resolve(event, None)
        return httpx.Response(result["statusCode"], content=(result.get("body") or "").encode())

    return Client("http://baton.test", token, transport=httpx.MockTransport(handle))


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's consoles as an 80-column terminal shows them (the width a newcomer's terminal has)."""
    for name in ("console", "plain_console", "err_console"):
        original: Console = getattr(common, name)
        narrow_console = Console(width=WIDTH, stderr=original.stderr, highlight=False, soft_wrap=original.soft_wrap)
        monkeypatch.setattr(common, name, narrow_console)
    monkeypatch.setattr(runs, "console", common.console)
    monkeypatch.setattr(review, "console", common.console)
    monkeypatch.setattr(workflow, "console", common.plain_console)
    monkeypatch.setattr(workflow, "err_console", common.err_console)


@pytest.fixture
def cli(api_app: Any, monkeypatch: pytest.MonkeyPatch, narrow: None) -> Any:
    monkeypatch.setattr(common, "client", lambda: _client(api_app))

    def run(*args: str) -> Any:
        return CliRunner().invoke(cli_app, list(args))

    return run


def _run_printed(cli: Any, command: str) -> Any:
    """A printed CLI command, run as printed: its program part is the form `cli_command()` gives."""
    prefix = shlex.split(cli_command())
    words = shlex.split(command)
    assert words[: len(prefix)] == prefix, f"{command!r} does not start with {cli_command()!r}"
    return cli(*words[len(prefix) :])


def _post_question(cli_app_api: Any, run_id: str, question: str, options: list[str] | None = None) -> str:
    client = _client(cli_app_api)
    body: dict[str, Any] = {"node": "draft", "question": question}
    if options:
        body["options"] = options
    return str(client.request("POST", f"/api/runs/{run_id}/questions", json_body=body)["interaction_id"])


# ---- 3: hints spelled as they run where the user is -------------------------------------------------
@pytest.fixture
def venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with `.venv/bin/baton`, as `uv sync` makes it; this interpreter is that venv."""
    script = tmp_path / ".venv" / "bin" / "baton"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / ".venv"))
    monkeypatch.chdir(tmp_path)
    for var in ("BATON_CLI", "AWS_LAMBDA_FUNCTION_NAME", "UV_RUN_RECURSION_DEPTH"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def _tool_dir(root: Path, name: str) -> Path:
    folder = root / f"tools-{name}"
    folder.mkdir()
    (folder / name).write_text("#!/bin/sh\n")
    (folder / name).chmod(0o755)
    return folder


def test_cli_command_is_the_form_that_runs_here(venv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv_bin = str(venv / ".venv" / "bin")
    with_uv = str(_tool_dir(venv, "uv"))
    # Not on PATH, not under uv: the venv's script, relative to where the user is.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert cli_command() == ".venv/bin/baton"
    # The venv is active (its bin on PATH): plain `baton`.
    monkeypatch.setenv("PATH", f"{venv_bin}:/usr/bin:/bin")
    assert cli_command() == "baton"
    # Under `uv run` (which puts the venv first for its children only), with uv on the user's PATH.
    monkeypatch.setenv("UV_RUN_RECURSION_DEPTH", "1")
    monkeypatch.setenv("PATH", f"{venv_bin}:{with_uv}:/usr/bin:/bin")
    assert cli_command() == "uv run baton"
    # Under `python3 -m uv run` (make dev) with no uv on PATH: the script, which runs from any shell.
    monkeypatch.setenv("PATH", f"{venv_bin}:/usr/bin:/bin")
    assert cli_command() == ".venv/bin/baton"
    # A deployed notify Lambda, and an explicit choice.
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "notify_slack")
    assert cli_command() == "baton"
    monkeypatch.setenv("BATON_CLI", "pipx run baton")
    assert cli_command() == "pipx run baton"


def test_every_hint_uses_the_one_helper(venv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_CLI", "uv run baton")
    for kind in ("ask", "question", "interrupt", "review", "await"):
        first = how_to_answer_for(kind, "r1", "i1").splitlines()[0]
        assert first.startswith("CLI: uv run baton "), first
        assert " baton " not in first.replace("uv run baton ", ""), first  # every command in it, not only the first
    run_hint = how_to_answer_for("run", "r1")
    assert run_hint.count("uv run baton ") == 2


# ---- 4: the review hint lists the actions the review service accepts --------------------------------
def test_review_hint_lists_exactly_the_accepted_actions() -> None:
    hint = how_to_answer_for("review", "r1")
    choice = re.search(r"__review_action=<([^>]+)>", hint)
    assert choice is not None, hint
    assert choice.group(1) == "approve_merge|force_merge|request_changes|reply"
    assert sorted(choice.group(1).split("|")) == sorted(ACTIONS)  # the service's own list, nothing else


# ---- 1: one line per ended run; the emulator's failure reports only with -v -------------------------
def test_a_run_that_ended_is_one_line() -> None:
    prompt = "Run r1 (human_pause) failed: timed out after 30s waiting for human input at node 'approve'"
    failed = Notification.model_validate(
        {
            "event": "run_failed",
            "kind": "run",
            "run_id": "r1",
            "prompt": prompt,
            "extra": {"status": "failed", "workflow": "human_pause", "error": "HumanInputTimedOut"},
        }
    )
    assert render_console(failed) == (
        "[baton] run r1 (human_pause) failed: HumanInputTimedOut — "
        "timed out after 30s waiting for human input at node 'approve'"
    )
    ok = Notification.model_validate(
        {"event": "run_succeeded", "kind": "run", "run_id": "r2", "prompt": "Run r2 (demo) succeeded"}
    )
    assert render_console(ok) == "[baton] run r2 succeeded"


def test_the_interpreters_failure_reports_are_filtered_and_other_errors_print(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = logging.getLogger("moto.stepfunctions.parser.asl.component.eval_component")
    program = logging.getLogger("moto.stepfunctions.parser.asl.component.program.program")
    other = logging.getLogger("moto.stepfunctions.parser.asl.eval.event.logging")
    with quiet_interpreter():
        report.error("%s at '%s'", "Exception=FailureEventException, Error=HumanInputTimedOut", "(StateFail| {...})")
        program.error("Stepfunctions computation ended with exception '%s'.", "HumanInputTimedOut")
        other.warning("a warning stays quiet, as before")
        other.error("Unknown LogLevel '%s'", "LOUD")
    err = capsys.readouterr().err
    assert "FailureEventException" not in err and "StateFail" not in err and "computation ended" not in err
    assert "warning stays quiet" not in err
    assert err.strip() == "emulator: Unknown LogLevel 'LOUD'"
    assert logging.getLogger("moto.stepfunctions.parser").propagate is True  # undone on exit


# ---- 2: ids whole on one line at 80 columns ---------------------------------------------------------
def test_questions_table_keeps_ids_on_one_line_at_80_columns(cli: Any, api_app: Any) -> None:
    ids = [
        _post_question(api_app, "r1", "Which database should the new service use, and why that one?", ["pg", "ddb"]),
        _post_question(api_app, "r1", "What should the release be called?"),
    ]
    out = cli("runs", "questions", "r1")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert max(len(line) for line in lines) <= WIDTH, out.output
    for iid in ids:
        assert len(iid) == 26 and any(iid in line for line in lines), out.output
    # The id, copied from the table, answers the question.
    copied = next(line.split()[0] for line in lines if line.strip().startswith(ids[0][:10]))
    assert cli("runs", "answer", "r1", copied, "pg").exit_code == 0


# ---- 5: "already answered" in words -----------------------------------------------------------------
def test_already_answered_says_who_answered_what_and_when(cli: Any, api_app: Any) -> None:
    iid = _post_question(api_app, "r1", "Which database?", ["postgres", "dynamodb"])
    assert cli("runs", "answer", "r1", iid, "postgres").exit_code == 0
    again = cli("runs", "answer", "r1", iid, "dynamodb")
    assert again.exit_code == 1
    text = again.output
    assert re.search(r'it was answered by local-operator with "postgres" at \d{4}-\d\d-\d\dT[\d:.]+Z', text), text
    assert "nothing was changed" in text
    assert "interaction:" not in text and '"request"' not in text  # no record cut off mid-string
    assert max(len(line) for line in text.splitlines()) <= WIDTH * 2  # a sentence, not a JSON dump


# ---- 9: a plain human_pause is listed by `runs questions`, with how to answer it --------------------
def test_a_hosted_pause_is_listed_with_a_hint_that_runs(cli: Any, core: Core, venv: Path) -> None:
    RunService(core).park(ParkPayload(run_id="p1", node="approve", token="tok-1", prompt="Deploy?", timeout_seconds=30))
    out = cli("runs", "questions", "p1")
    assert out.exit_code == 0, out.output
    assert "blocking ask" in out.output and "Deploy?" in out.output
    hint = next(line for line in out.output.splitlines() if "resume --run-id p1" in line)
    command = hint.split("CLI: ", 1)[1].replace("key=value", "approved=true")
    resumed = _run_printed(cli, command)
    assert resumed.exit_code == 0, resumed.output
    assert "resumed" in resumed.output


# ---- 3: `workflow inspect` prints a resume command that runs as printed ----------------------------
def test_inspect_prints_a_resume_command_that_runs(cli: Any, api_app: Any, venv: Path) -> None:
    created = _client(api_app).request(
        "POST",
        "/api/v1/interrupts",
        json_body={"sessionId": "s1", "prompt": "Target?", "schema": {"type": "enum", "enum": ["staging", "prod"]}},
    )
    shown = cli("workflow", "inspect", "s1")
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    resume_line = lines[lines.index("    Resume with:") + 1].strip()
    assert resume_line.startswith(f"{cli_command()} workflow resume-interrupt s1 --interrupt-id {created['id']}")
    resumed = _run_printed(cli, resume_line.replace("'<json>'", "'\"staging\"'"))
    assert resumed.exit_code == 0, resumed.output
    assert f"resumed interrupt {created['id']}" in resumed.output


# ---- 6: `review show`: labels and one verdict -------------------------------------------------------
def _review(text: str, *, blockers: list[str] | None = None) -> ReviewView:
    verdict = {"decision": "approve", "confidence": 0.9, "blockers": blockers or [], "summary": "ok"}
    return ReviewView.model_validate(
        {
            "run_id": "r1",
            "gate": "ship_review",
            "interaction_id": "i1",
            "status": "pending",
            "thread": [
                {"n": 0, "role": "companion", "text": text, "at": "2026-12-01T10:00:00Z", "verdict": verdict},
                {"n": 1, "role": "operator", "text": "what first?", "at": "2026-12-01T10:01:00Z", "by": "alice"},
                {"n": 2, "role": "companion", "text": text, "at": "2026-12-01T10:01:05Z", "verdict": verdict},
            ],
            "verdict": verdict,
            "turns_used": 2,
            "max_turns": 6,
            "allowed_actions": list(ACTIONS),
            "review_url": "",
            "warnings": [],
            "posture": "human_required",
            "merge_strategy": "squash",
            "merge": {},
            "rounds": ["i1"],
        }
    )


class _ReviewClient:
    def __init__(self, view: ReviewView) -> None:
        self.view = view

    def review(self, run_id: str, gate: str | None = None) -> ReviewView:
        return self.view


def test_review_show_labels_messages_and_prints_the_verdict_once(monkeypatch: pytest.MonkeyPatch, narrow: None) -> None:
    offline_text = "Test steps:\n1. Run it.\n\nVerdict: approve (confidence 0.90) — No blocker found in the diff."
    monkeypatch.setattr(common, "client", lambda: _ReviewClient(_review(offline_text)))
    out = CliRunner().invoke(cli_app, ["review", "show", "r1"])
    assert out.exit_code == 0, out.output
    text = out.output
    assert "companion turns used: 2 of 6" in text and "turn 2/6" not in text
    assert "message 1 of 3 · companion" in text
    assert "message 2 of 3 · alice (operator)" in text
    assert "message 3 of 3 · companion" in text
    assert "#0" not in text and "#1" not in text
    # The latest companion message states it; the structured line is not printed again.
    assert text.lower().count("verdict: approve") == 2  # once in each companion message, as they wrote it
    assert "\nverdict: " not in text
    # A companion whose text does not state it (Bedrock's structured answer): the one verdict line.
    bare = _review("Looks fine; try the CLI.", blockers=["no tests"])
    monkeypatch.setattr(common, "client", lambda: _ReviewClient(bare))
    out = CliRunner().invoke(cli_app, ["review", "show", "r1"])
    assert out.output.count("verdict: approve (confidence 0.90); blockers: no tests") == 1


def test_review_show_action_example_runs_as_printed(monkeypatch: pytest.MonkeyPatch, narrow: None) -> None:
    monkeypatch.setattr(common, "client", lambda: _ReviewClient(_review("x")))
    out = CliRunner().invoke(cli_app, ["review", "show", "r1"])
    example = out.output.split("— e.g. ", 1)[1].strip()
    assert example.startswith(f"{cli_command()} resume --run-id r1 --answer __review_action=approve_merge")
    sent: list[dict[str, Any]] = []

    class _Resuming:
        def resume(self, run_id: str, answers: dict[str, Any], node: str | None = None) -> Any:
            sent.append(answers)
            return type("Resumed", (), {"resumed": True, "node": "ship_review", "delivery": "delivered"})()

    monkeypatch.setattr(common, "client", lambda: _Resuming())
    ran = _run_printed(lambda *a: CliRunner().invoke(cli_app, list(a)), example)
    assert ran.exit_code == 0, ran.output
    assert sent == [{"__review_action": "approve_merge"}]


# ---- 7: `runs events --follow` exits with the run's final status ------------------------------------
class _EndingClient:
    def __init__(self, end: str) -> None:
        self.end = end

    def events(self, run_id: str, after: str | None = None) -> EventPage:
        types = ["run_started", self.end]
        events = [
            EventView(event_id=f"e{n}", run_id=run_id, type=t, at="2026-12-01T10:00:00Z", data={})
            for n, t in enumerate(types)
        ]
        return EventPage(events=events, next="e1")

    def get_run(self, run_id: str) -> RunView:
        raise AssertionError("the end event is enough")


@pytest.mark.parametrize(
    ("end", "code"), [("run_succeeded", 0), ("run_failed", 1), ("run_timed_out", 3), ("run_aborted", 4)]
)
def test_follow_exit_code_is_the_runs_final_status(end: str, code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "client", lambda: _EndingClient(end))
    result = CliRunner().invoke(cli_app, ["runs", "events", "r1", "--follow"])
    assert result.exit_code == code, result.output
    assert end in result.output
    # Without --follow it is a listing: 0 whatever the run did.
    assert CliRunner().invoke(cli_app, ["runs", "events", "r1"]).exit_code == 0


# ---- 10: a local.json whose stack is gone -----------------------------------------------------------
def _gone_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(finished.stdout)


@pytest.mark.parametrize(
    "args",
    [["runs", "show", "r1"], ["runs", "questions", "r1"], ["operator-token", "alice"], ["inbox-login"]],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_dead_local_stack_is_named_with_how_to_start_one(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("BATON_API_URL", "BATON_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    pid = _gone_pid()
    (tmp_path / ".baton").mkdir()
    state = {"api_url": "http://127.0.0.1:9", "token": "t", "pid": pid}
    (tmp_path / ".baton" / "local.json").write_text(json.dumps(state))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli_app, args)
    assert result.exit_code == 1, result.output
    assert f"the local stack is not running (pid {pid} gone): start it with `make dev`" in result.output
    assert "cannot reach" not in result.output and "Traceback" not in result.output


def test_a_live_pid_is_not_called_dead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.client.transport import gone_pid

    assert gone_pid({"pid": os.getpid()}) is None
    assert gone_pid({}) is None
    assert gone_pid({"pid": _gone_pid()}) is not None
