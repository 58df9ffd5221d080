"""End-to-end: the framework examples (examples/*.py) and `baton hook claude-code` run as real processes
against `baton dev` (issue 30: kill and resume). Process 1 asks and exits with the approval pending; a
person answers over the HTTP API; process 2, a new process, resumes: the tool runs exactly once, with
the approved (or edited) arguments, and a denial never runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Run ids of their own on a stack the session shares (added in the tests: a parametrize id must be the
# same on every xdist worker).
TAG = uuid.uuid4().hex[:8]


def agent_env(stack: LocalStackProcess) -> dict[str, str]:
    """The environment an agent process reaches the stack by (none of the hook's settings leak in)."""
    ambient = {k: v for k, v in os.environ.items() if k not in ("BATON_RUN", "BATON_HOOK_HEADLESS")}
    return {**ambient, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token, "PYTHONUNBUFFERED": "1"}


def run_process(stack: LocalStackProcess, cwd: Path, *argv: str, stdin: str | None = None) -> str:
    """One agent process, in its own working directory (its .baton/ state), reaching the stack by env."""
    done = subprocess.run(
        [sys.executable, *argv], cwd=cwd, env=agent_env(stack), input=stdin, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def pending_approval_id(stack: LocalStackProcess, run: str) -> str | None:
    """What a person finds in the inbox for the run: nothing yet, or exactly one item, the tool approval."""
    with stack.http() as http:
        found = http.get("/api/inbox", params={"run": run})
    assert found.status_code == 200, found.text
    items = found.json()["items"]
    assert len(items) <= 1, items
    return str(items[0]["id"]) if items else None


def the_one_pending_approval(stack: LocalStackProcess, run: str) -> str:
    approval = pending_approval_id(stack, run)
    assert approval is not None, f"nothing pending in run {run}"
    return approval


def answer(stack: LocalStackProcess, run: str, interaction_id: str, decision: dict[str, Any]) -> None:
    with stack.http() as http:
        answered = http.post(f"/api/runs/{run}/interactions/{interaction_id}/answer", json={"answer": decision})
    assert answered.status_code == 200, answered.text


def consumed(stack: LocalStackProcess, run: str, interaction_id: str) -> bool:
    """Whether the adapter used the approval (single use: it is consumed right before the tool runs)."""
    with stack.http() as http:
        view = http.get(f"/api/runs/{run}/tool-approvals/{interaction_id}")
    assert view.status_code == 200, view.text
    return bool(view.json()["consumed"])


def tool_runs(output: str, marker: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(marker)]


@pytest.mark.parametrize(
    ("name", "decision", "ran"),
    [
        ("lg-approve", {"decision": "approve"}, ["write_file ran: 'notes.md' <- 'hello'"]),
        (
            "lg-edit",
            {"decision": "edit", "arguments": {"path": "drafts/notes.md", "text": "hi"}},
            ["write_file ran: 'drafts/notes.md' <- 'hi'"],
        ),
    ],
)
def test_langgraph_example_resumes_in_a_new_process(
    local_stack: LocalStackProcess, tmp_path: Path, name: str, decision: dict[str, Any], ran: list[str]
) -> None:
    example, run = str(EXAMPLES / "langgraph_approval.py"), f"{name}-{TAG}"
    asked = run_process(local_stack, tmp_path, example, "--wait", "0", "--run", run)
    assert "Waiting for a person" in asked and not tool_runs(asked, "write_file ran")
    approval = the_one_pending_approval(local_stack, run)
    answer(local_stack, run, approval, decision)
    resumed = run_process(local_stack, tmp_path, example, "--wait", "0", "--run", run)
    assert tool_runs(resumed, "write_file ran") == ran, resumed
    assert consumed(local_stack, run, approval) is bool(ran)


@pytest.mark.parametrize(
    ("name", "decision", "ran"),
    [
        ("oa-approve", {"decision": "approve"}, ["write_file ran: 'notes.md' <- 'hello'"]),
        ("oa-deny", {"decision": "deny", "reason": "not that file"}, []),
    ],
)
def test_openai_agents_example_resumes_in_a_new_process(
    local_stack: LocalStackProcess, tmp_path: Path, name: str, decision: dict[str, Any], ran: list[str]
) -> None:
    example, run = str(EXAMPLES / "openai_agents_approval.py"), f"{name}-{TAG}"
    asked = run_process(local_stack, tmp_path, example, "--wait", "0", "--run", run)
    assert "Waiting for a person" in asked and not tool_runs(asked, "write_file ran")
    approval = the_one_pending_approval(local_stack, run)
    answer(local_stack, run, approval, decision)
    resumed = run_process(local_stack, tmp_path, example, "--wait", "0", "--run", run)
    assert tool_runs(resumed, "write_file ran") == ran, resumed
    assert consumed(local_stack, run, approval) is bool(ran)
    assert "agent: " in resumed


def test_strands_example_resumes_in_a_new_process(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    example, run = str(EXAMPLES / "strands_agents.py"), "strands-example"
    asked = run_process(local_stack, tmp_path, example, "ask", "0")
    assert "Waiting for a person" in asked and not tool_runs(asked, "TOOL RAN")
    approval = the_one_pending_approval(local_stack, run)
    answer(local_stack, run, approval, {"decision": "approve"})
    resumed = run_process(local_stack, tmp_path, example, "resume")
    assert tool_runs(resumed, "TOOL RAN") == ["TOOL RAN: delete_file('notes.txt')"], resumed
    assert consumed(local_stack, run, approval)


PRE_TOOL_USE = {
    "session_id": f"cc-session-{TAG}",
    "transcript_path": f"/home/dev/.claude/projects/app/cc-session-{TAG}.jsonl",
    "cwd": "/home/dev/app",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build/", "description": "Remove the build folder"},
    "tool_use_id": "toolu_01E2E",
}


def hook(stack: LocalStackProcess, tmp_path: Path, *flags: str, event: dict[str, Any] = PRE_TOOL_USE) -> dict[str, Any]:
    out = run_process(
        stack,
        tmp_path,
        "-m",
        "baton.cli.main",
        "hook",
        "claude-code",
        "--wait",
        "0",
        *flags,
        stdin=json.dumps(event),
    )
    decided: dict[str, Any] = json.loads(out)["hookSpecificOutput"]
    return decided


def test_claude_code_hook_pending_then_answered_allows_once(local_stack: LocalStackProcess, tmp_path: Path) -> None:
    run = str(PRE_TOOL_USE["session_id"])
    assert hook(local_stack, tmp_path)["permissionDecision"] == "deny"  # pending, interactive: go on with other work
    assert hook(local_stack, tmp_path, "--headless")["permissionDecision"] == "defer"  # pending, headless
    approval = the_one_pending_approval(local_stack, run)  # the repeat found the same approval
    answer(local_stack, run, approval, {"decision": "approve"})
    allowed = hook(local_stack, tmp_path)
    assert allowed["permissionDecision"] == "allow", allowed
    assert consumed(local_stack, run, approval)


def test_claude_code_hook_denied_while_it_waits_is_deny_with_the_persons_reason(
    local_stack: LocalStackProcess, tmp_path: Path
) -> None:
    """The hook as Claude Code runs it: one process waits (--wait) while the person denies."""
    event = {**PRE_TOOL_USE, "session_id": f"cc-deny-{TAG}", "tool_input": {"command": "git push --force"}}
    run = str(event["session_id"])
    env = {**agent_env(local_stack), "BATON_RUN": run}
    argv = [sys.executable, "-m", "baton.cli.main", "hook", "claude-code", "--wait", "30"]
    stdin_file = tmp_path / "pre_tool_use.json"
    stdin_file.write_text(json.dumps(event))
    with (
        stdin_file.open() as stdin,
        subprocess.Popen(argv, cwd=tmp_path, env=env, stdin=stdin, stdout=subprocess.PIPE, text=True) as waiting,
    ):
        approval = wait_for(lambda: pending_approval_id(local_stack, run), timeout=20)
        answer(local_stack, run, approval, {"decision": "deny", "reason": "no force pushes"})
        out, _ = waiting.communicate(timeout=30)
    assert waiting.returncode == 0, out
    denied = json.loads(out)["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny" and "no force pushes" in denied["permissionDecisionReason"], denied
    assert not consumed(local_stack, run, approval)
