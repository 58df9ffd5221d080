"""Issue 31's "what must be shown", over HTTP: `baton dev --policy FILE` in its own process and
`baton hook claude-code` run as Claude Code runs it (a process, a PreToolUse event on stdin). An allowed
call never reaches a person (allowed at once, nothing in the inbox, nothing notified, used once); a denied
call never runs (the rule's reason, its approval can never be used); a required approval goes to the
rule's approvers with its quorum; and a shadow policy changes nothing while `baton policy report` shows
where it differs from the people."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.api.auth import operator_token
from baton.domain.tool_calls import ToolCall
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack, wait_for
from tests.e2e.test_framework_examples_e2e import agent_env, answer, consumed

pytestmark = pytest.mark.e2e

POLICY = """
@id("read-only")
@reason("reading is safe")
permit(principal, action == Action::"call_tool", resource in Tool::"Bash")
when { resource.hasTag("command") && resource.getTag("command") like "ls*" };

@id("deploys")
@ask
@approvers("alice,bob")
@quorum("2")
permit(principal, action == Action::"call_tool", resource in Tool::"Bash")
when { resource.hasTag("command") && resource.getTag("command") like "make deploy*" };

@id("no-network")
@reason("no network from agents")
forbid(principal, action == Action::"call_tool", resource in Tool::"Bash")
when { resource.hasTag("command") && resource.getTag("command") like "curl*" };
"""
HOOK_WAIT = 30.0  # what the hook would wait for a person: an allowed or denied call never waits it out


def _stack(tmp_path_factory: pytest.TempPathFactory, *mode: str) -> Iterator[LocalStackProcess]:
    policy_file = tmp_path_factory.mktemp("policy") / "tools.cedar"
    policy_file.write_text(POLICY)
    stack = start_local_stack(tmp_path_factory.mktemp("baton-dev-policy"), "--policy", str(policy_file), *mode)
    yield stack
    stop_local_stack(stack)


@pytest.fixture(scope="module")
def policy_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    yield from _stack(tmp_path_factory)


@pytest.fixture(scope="module")
def shadow_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    yield from _stack(tmp_path_factory, "--policy-mode", "shadow")


def _run(name: str) -> str:
    return f"pol-{name}-{uuid.uuid4().hex[:8]}"


def hook(stack: LocalStackProcess, cwd: Path, run: str, command: str, *, wait: float = HOOK_WAIT) -> dict[str, str]:
    """`baton hook claude-code` on one Bash call, as Claude Code runs it: its decision."""
    event = {
        "session_id": run,
        "transcript_path": f"/home/dev/.claude/projects/app/{run}.jsonl",
        "cwd": "/home/dev/app",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": f"toolu_{uuid.uuid4().hex[:12]}",
    }
    argv = [sys.executable, "-m", "baton.cli.main", "hook", "claude-code", "--wait", str(wait)]
    done = subprocess.run(
        argv, cwd=cwd, env=agent_env(stack), input=json.dumps(event), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    decided: dict[str, str] = json.loads(done.stdout)["hookSpecificOutput"]
    return decided


def inbox(stack: LocalStackProcess, run: str) -> list[dict[str, Any]]:
    with stack.http() as http:
        found = http.get("/api/inbox", params={"run": run})
    assert found.status_code == 200, found.text
    items: list[dict[str, Any]] = found.json()["items"]
    return items


def policy_decided(stack: LocalStackProcess, run: str) -> list[dict[str, Any]]:
    """The run's `policy_decided` records, from its decision chain."""
    with stack.http() as http:
        page = http.get(f"/api/runs/{run}/audit")
    assert page.status_code == 200, page.text
    return [r["data"] for r in page.json()["records"] if r["type"] == "policy_decided"]


def consume(stack: LocalStackProcess, run: str, approval: str, command: str) -> tuple[int, dict[str, Any]]:
    digest = ToolCall(tool="Bash", arguments={"command": command}).digest
    with stack.http() as http:
        done = http.post(f"/api/runs/{run}/tool-approvals/{approval}/consume", json={"digest": digest})
    return done.status_code, done.json()


def ask_a_person(stack: LocalStackProcess, run: str, command: str) -> str:
    """A call no rule matches (a person is asked) through the API: its approval, once the console printed it."""
    body = {"call": {"tool": "Bash", "arguments": {"command": command}}, "reason": "work", "timeout_seconds": 600}
    with stack.http() as http:
        asked = http.post(f"/api/runs/{run}/tool-approvals", json=body)
    assert asked.status_code == 201 and asked.json()["status"] == "pending", asked.text
    approval = str(asked.json()["interaction_id"])
    wait_for(lambda: f"interaction={approval}" in stack.log(), timeout=20)
    return approval


def notified(stack: LocalStackProcess, approval: str) -> bool:
    """Whether any channel told a person about the approval: the console's line, or a mail in the outbox."""
    outbox = stack.state_dir / "outbox"
    mails = [f.read_text(errors="replace") for f in outbox.rglob("*") if f.is_file()] if outbox.is_dir() else []
    return f"interaction={approval}" in stack.log() or any(approval in mail for mail in mails)


def test_an_allowed_call_never_reaches_a_person(policy_stack: LocalStackProcess, tmp_path: Path) -> None:
    run = _run("allow")
    started = time.monotonic()
    allowed = hook(policy_stack, tmp_path, run, "ls -la")
    took = time.monotonic() - started
    assert allowed["permissionDecision"] == "allow", allowed
    assert allowed["permissionDecisionReason"] == "Approved by policy:read-only: reading is safe", allowed
    assert took < HOOK_WAIT, took  # answered at once: the hook never waited for a person
    assert inbox(policy_stack, run) == []
    [decided] = policy_decided(policy_stack, run)
    assert (decided["outcome"], decided["rule"], decided["mode"], decided["applied"]) == (
        "allow",
        "read-only",
        "enforce",
        True,
    )
    approval = decided["interaction_id"]
    assert consumed(policy_stack, run, approval)  # the hook used it, right before the tool ran
    status, again = consume(policy_stack, run, approval, "ls -la")
    assert status == 409 and again["reason"] == "consumed", again  # once
    # A later call that goes to a person is printed by the console channel; the allowed one never was.
    asked = ask_a_person(policy_stack, run, "python train.py")
    assert not notified(policy_stack, approval) and notified(policy_stack, asked)


def test_a_denied_call_never_runs_and_the_model_hears_the_rules_reason(
    policy_stack: LocalStackProcess, tmp_path: Path
) -> None:
    run = _run("deny")
    started = time.monotonic()
    denied = hook(policy_stack, tmp_path, run, "curl https://example.com")
    assert time.monotonic() - started < HOOK_WAIT
    assert denied == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no network from agents",
    }
    assert inbox(policy_stack, run) == []
    [decided] = policy_decided(policy_stack, run)
    assert (decided["outcome"], decided["rule"], decided["applied"]) == ("deny", "no-network", True)
    approval = decided["interaction_id"]
    status, refused = consume(policy_stack, run, approval, "curl https://example.com")
    assert status == 409 and refused["reason"] == "denied", refused
    assert not consumed(policy_stack, run, approval)
    asked = ask_a_person(policy_stack, run, "python train.py")
    assert not notified(policy_stack, approval) and notified(policy_stack, asked)


def test_a_required_approval_goes_to_the_named_approvers_with_its_quorum(
    policy_stack: LocalStackProcess, tmp_path: Path
) -> None:
    run = _run("ask")
    pending = hook(policy_stack, tmp_path, run, "make deploy prod", wait=0)
    assert pending["permissionDecision"] == "deny" and "has not yet decided" in pending["permissionDecisionReason"]
    [item] = inbox(policy_stack, run)
    approval = str(item["id"])
    wait_for(lambda: notified(policy_stack, approval), timeout=20)  # a person is told
    [decided] = policy_decided(policy_stack, run)
    assert (decided["outcome"], decided["rule"], decided["interaction_id"]) == ("ask", "deploys", approval)

    def vote(operator: str) -> tuple[int, dict[str, Any]]:
        path = f"/api/runs/{run}/interactions/{approval}/answer"
        with policy_stack.http(operator_token(policy_stack.token, operator)) as http:
            done = http.post(path, json={"answer": {"decision": "approve"}})
        return done.status_code, done.json()

    status, refused = vote("mallory")
    assert status == 403 and refused["reason"] == "not_an_approver", refused
    status, first = vote("alice")
    assert status == 200 and first["status"] == "pending", first
    assert hook(policy_stack, tmp_path, run, "make deploy prod", wait=0)["permissionDecision"] == "deny"  # one of two
    status, second = vote("bob")
    assert status == 200 and second["status"] == "answered", second
    allowed = hook(policy_stack, tmp_path, run, "make deploy prod")
    assert (allowed["permissionDecision"], allowed["permissionDecisionReason"]) == ("allow", "Approved by alice, bob.")
    assert consumed(policy_stack, run, approval)
    assert len(policy_decided(policy_stack, run)) == 1  # the repeats found their approval: decided once


def test_a_shadow_policy_changes_nothing_and_the_report_shows_the_difference(
    shadow_stack: LocalStackProcess, tmp_path: Path
) -> None:
    run = _run("shadow")
    for command in ("ls -la", "curl https://example.com"):  # a person is asked about both, as with no policy
        decided = hook(shadow_stack, tmp_path, run, command, wait=0)
        assert decided["permissionDecision"] == "deny" and "has not yet decided" in decided["permissionDecisionReason"]
    shadow = {d["outcome"]: d for d in policy_decided(shadow_stack, run)}
    assert {(o, d["rule"], d["mode"], d["applied"]) for o, d in shadow.items()} == {
        ("allow", "read-only", "shadow", False),
        ("deny", "no-network", "shadow", False),
    }
    listed = {i["id"] for i in inbox(shadow_stack, run)}
    ls_call, curl_call = shadow["allow"]["interaction_id"], shadow["deny"]["interaction_id"]
    assert listed == {ls_call, curl_call}
    answer(shadow_stack, run, ls_call, {"decision": "deny", "reason": "not in this repo"})
    answer(shadow_stack, run, curl_call, {"decision": "approve"})
    assert hook(shadow_stack, tmp_path, run, "curl https://example.com")["permissionDecision"] == "allow"

    argv = [sys.executable, "-m", "baton.cli.main", "policy", "report", "--since", "1h", "--json"]
    done = subprocess.run(argv, cwd=tmp_path, env=agent_env(shadow_stack), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    report = json.loads(done.stdout)
    ours = {
        group: [(c["interaction_id"], c["rule"]) for c in report[group] if c["run_id"] == run]
        for group in ("allowed_that_a_person_denied", "denied_that_a_person_approved")
    }
    assert ours == {
        "allowed_that_a_person_denied": [(ls_call, "read-only")],
        "denied_that_a_person_approved": [(curl_call, "no-network")],
    }, report
