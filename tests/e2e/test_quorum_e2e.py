"""A quorum question end to end on `baton dev`: two named local operators (`baton operator-token`), one
of them an approver through a local group (BATON_LOCAL_GROUPS), the requester and an outsider refused
with 403, a second vote of the same operator counted once, the CLI showing the count, and the agent
getting the answer only when the quorum is met."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.api.auth import operator_token
from baton.client.sdk import Client
from tests.e2e.conftest import LocalStackProcess, start_local_stack, stop_local_stack

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def quorum_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStackProcess]:
    stack = start_local_stack(
        tmp_path_factory.mktemp("baton-quorum"), env={"BATON_LOCAL_GROUPS": json.dumps({"release": ["bob"]})}
    )
    yield stack
    stop_local_stack(stack)


def _cli(stack: LocalStackProcess, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": token}
    return subprocess.run(
        [sys.executable, "-m", "baton.cli", *args], capture_output=True, text=True, timeout=60, env=env, cwd=Path.cwd()
    )


def test_two_named_operators_meet_the_quorum_the_requester_cannot(quorum_stack: LocalStackProcess) -> None:
    stack = quorum_stack
    run_id = f"quorum-{uuid.uuid4().hex[:8]}"
    requester = stack.client()  # the plain token: local-operator, who asks
    asked = requester.ask_async(
        run_id, "deploy", "Ship 2.0?", approval={"approvals": 2, "approvers": ["alice", "group:release"]}
    )
    path = f"/api/runs/{run_id}/interactions/{asked.interaction_id}/answer"
    with stack.http() as http:
        refused = http.post(path, json={"answer": "approve"})
    assert refused.status_code == 403 and refused.json()["reason"] == "requester_cannot_approve"
    with stack.http(operator_token(stack.token, "mallory")) as http:
        outsider = http.post(path, json={"answer": "approve"})
    assert outsider.status_code == 403 and outsider.json()["reason"] == "not_an_approver"

    alice = operator_token(stack.token, "alice")
    voted = _cli(stack, alice, "runs", "answer", run_id, asked.interaction_id, "approve")
    assert voted.returncode == 0, voted.stderr
    assert "1 of 2 approvals, by alice" in voted.stdout and "still pending" in voted.stdout
    again = Client(stack.api_url, alice).answer(run_id, asked.interaction_id, "reject")
    assert again.status == "pending" and again.approval is not None and again.approval.already_counted
    [pending] = requester.pending_questions(run_id)
    assert pending.approval is not None and pending.approval.approved_by == ["alice"]
    listed = _cli(stack, stack.token, "runs", "questions", run_id)
    assert listed.returncode == 0 and "1 of 2" in listed.stdout, listed.stdout  # the table's approvals column
    [as_json] = json.loads(_cli(stack, stack.token, "runs", "questions", run_id, "--json").stdout)
    assert as_json["approval"]["approvals"] == 1 and as_json["approval"]["needed"] == 2
    assert requester.drain_messages(run_id, "deploy") == []  # nothing delivered before the quorum

    done = Client(stack.api_url, operator_token(stack.token, "bob")).answer(run_id, asked.interaction_id, "approve")
    assert done.status == "answered" and done.approval is not None and done.approval.approved_by == ["alice", "bob"]
    [message] = requester.drain_messages(run_id, "deploy")
    assert "A: approve" in message.text
    types = [e["type"] for e in requester.events(run_id, limit=200)["events"]]
    assert types.count("approval_recorded") == 2 and types.count("quorum_reached") == 1
    assert requester.pending_questions(run_id) == []
