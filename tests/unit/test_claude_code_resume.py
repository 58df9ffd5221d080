"""`baton claude-code resume` (baton/cli/claude_code.py, baton/client/claude_code_resume.py): a headless
hook defers, the session is recorded, and once a person decides the approval the command runs
`<command> --resume <session>` once in the session's directory (a fake executable that records its argv
and directory stands in for `claude`). Denied: reported, not resumed. Pending: kept. `--dry-run`, `--json`,
a failed resume, and a clear error when the command is not on PATH."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from typer.testing import CliRunner

from baton.api import deps
from baton.api.auth import agent_token
from baton.cli.main import app as cli_app
from baton.client.claude_code import DeferredSessions
from baton.client.sdk import Client
from tests.unit.test_claude_code_hook import EVENT, SESSION, TOKEN, Api, decision_of, hook

if TYPE_CHECKING:
    from baton.services.core import Core


@pytest.fixture
def api(core: Core, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Api]:
    served = Api(core)
    client = Client("http://baton.test", agent_token(TOKEN, SESSION), transport=httpx.MockTransport(served.handle))
    monkeypatch.setattr("baton.cli.common.client", lambda: client)
    monkeypatch.delenv("BATON_RUN", raising=False)
    monkeypatch.setenv("BATON_HOOK_HEADLESS", "1")
    monkeypatch.setenv("BATON_CLAUDE_CODE_DEFERRED", str(tmp_path / "deferred"))
    yield served
    deps.set_services_provider(deps._default_provider)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    where = tmp_path / "app"
    where.mkdir()
    return where


@pytest.fixture
def fake_claude(tmp_path: Path) -> Path:
    """An executable that records each run's directory and argv (one JSON line) and exits $FAKE_EXIT."""
    script = tmp_path / "bin" / "fake-claude"
    script.parent.mkdir()
    script.write_text(
        "#!/usr/bin/env python3\n"
        "import json, os, sys\n"
        f"with open({str(tmp_path / 'runs.jsonl')!r}, 'a') as log:\n"
        "    log.write(json.dumps({'cwd': os.getcwd(), 'argv': sys.argv[1:]}) + '\\n')\n"
        "sys.exit(int(os.environ.get('FAKE_EXIT', '0')))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def runs_of(fake: Path) -> list[dict[str, Any]]:
    log = fake.parent.parent / "runs.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def resume(*args: str) -> tuple[int, Any, str]:
    out = CliRunner().invoke(cli_app, ["claude-code", "resume", *args])
    return out.exit_code, json.loads(out.stdout) if "--json" in args and out.stdout else out.stdout, out.stderr


def defer_in(project: Path) -> str:
    code, out = hook("--wait", "0", event={**EVENT, "cwd": str(project)})
    assert (code, decision_of(out)[0]) == (0, "defer")
    [deferred] = DeferredSessions().all()
    assert (deferred.session_id, deferred.cwd) == (SESSION, str(project))
    return deferred.interaction_id


def test_an_approved_session_is_resumed_once_in_its_directory_and_its_hook_then_allows(
    api: Api, project: Path, fake_claude: Path
) -> None:
    approval = defer_in(project)
    code, report, _ = resume("--command", f"{fake_claude} -p", "--json")
    assert code == 0 and [s["outcome"] for s in report["sessions"]] == ["pending"]
    assert runs_of(fake_claude) == []  # pending: nothing run, the record kept

    api.answers({"decision": "approve", "reason": "ok"})(approval)
    code, report, _ = resume("--command", f"{fake_claude} -p", "--json")
    [session] = report["sessions"]
    assert code == 0 and session["outcome"] == "resumed" and session["interaction_id"] == approval
    assert runs_of(fake_claude) == [{"cwd": str(project), "argv": ["-p", "--resume", SESSION]}]
    assert resume("--command", str(fake_claude), "--json")[1] == {"sessions": []}  # once
    assert len(runs_of(fake_claude)) == 1

    # what the resumed Claude Code does: the deferred call's hook again, which finds and uses the approval
    code, out = hook("--wait", "0", event={**EVENT, "cwd": str(project)})
    assert (code, decision_of(out)[0]) == (0, "allow")
    assert [a.state.reason for a in api.approvals()] == ["consumed"]


def test_a_denied_session_is_reported_with_the_reason_and_not_resumed(
    api: Api, project: Path, fake_claude: Path
) -> None:
    approval = defer_in(project)
    api.answers({"decision": "deny", "reason": "not on prod"})(approval)
    code, out, _ = resume("--command", str(fake_claude))
    assert code == 0 and f"{SESSION}  denied  Bash  (not on prod)" in out
    assert runs_of(fake_claude) == [] and DeferredSessions().all() == []


def test_a_dry_run_runs_nothing_and_keeps_the_record(api: Api, project: Path, fake_claude: Path) -> None:
    api.answers({"decision": "approve"})(defer_in(project))
    code, report, _ = resume("--command", f"{fake_claude} -p", "--dry-run", "--json")
    [session] = report["sessions"]
    assert code == 0 and session["outcome"] == "would_resume"
    assert session["command"] == [str(fake_claude), "-p", "--resume", SESSION]
    assert runs_of(fake_claude) == [] and len(DeferredSessions().all()) == 1
    assert resume("--command", str(fake_claude), "--json")[1]["sessions"][0]["outcome"] == "resumed"


def test_a_failed_resume_exits_1_and_is_kept_for_the_next_pass(
    api: Api, project: Path, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.answers({"decision": "approve"})(defer_in(project))
    monkeypatch.setenv("FAKE_EXIT", "3")
    code, report, _ = resume("--command", str(fake_claude), "--json")
    [session] = report["sessions"]
    assert code == 1 and (session["outcome"], session["exit_code"]) == ("failed", 3)
    assert len(DeferredSessions().all()) == 1
    monkeypatch.setenv("FAKE_EXIT", "0")
    assert resume("--command", str(fake_claude), "--json")[1]["sessions"][0]["outcome"] == "resumed"


def test_claude_not_on_path_is_a_clear_error(api: Api, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `claude` here
    code, _, err = resume()
    assert code == 1 and "`claude` is not on PATH" in err and "--command" in err
