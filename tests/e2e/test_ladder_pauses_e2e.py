"""Ladders on every pause (round 5) over HTTP against `baton dev`, with seconds-long steps:

- an async question (posted by the await_answers workflow's agent) with its own ladder: reminder,
  escalation, then its default at its deadline, recorded as `timed_out_default` (nobody's answer); the
  await gate counts it, and the run goes on and succeeds;
- a review gate with a ladder: a reminder, then at its timeout the declared `request_changes` default,
  recorded as `timed_out_default` and never as a person's approval (nothing is merged).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from baton.cli.demo_repo import create_demo_repo
from tests.e2e.conftest import LocalStackProcess, wait_for

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e


def _cli(stack: LocalStackProcess, *args: str) -> str:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token}
    command = [sys.executable, "-m", "baton.cli.main", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _events(stack: LocalStackProcess, run_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _cli(stack, "runs", "events", run_id, "--json").splitlines()]


def _ended(stack: LocalStackProcess, run_id: str) -> Any:
    client = stack.client()
    return wait_for(
        lambda: (r := client.get_run(run_id)).status in ("succeeded", "failed", "timed_out", "aborted") and r,
        timeout=90,
    )


def test_a_questions_ladder_reminds_escalates_takes_its_default_and_the_await_run_goes_on(
    local_stack: LocalStackProcess,
) -> None:
    run_id = f"lq-{uuid.uuid4().hex[:8]}"
    question = {
        "question": "Use the fast path?",
        "options": ["yes", "no"],
        "timeout_seconds": 6,
        "remind_after": 1,
        "escalate_after": 3,
        "escalate_to": ["slack"],
        "on_timeout": {"default": "no"},
    }
    local_stack.client().start_run(
        "await_answers",
        {
            "gate": "sync",
            "node": "agent",
            "from": "agent",
            "timeout_seconds": 60,
            "questions": [question],
            "ladder": {"remind_after": 2, "on_timeout": "use_question_defaults"},
        },
        run_id=run_id,
    )
    run = _ended(local_stack, run_id)
    assert run.status == "succeeded", run.reason  # the run continued with the default
    events = _events(local_stack, run_id)
    types = [e["type"] for e in events]
    assert types.index("reminder_sent") < types.index("escalated") < types.index("timed_out_default")
    assert types.index("timed_out_default") < types.index("await_released")
    assert "interaction_answered" not in types  # nobody answered
    reminded = sorted(e["data"]["gate"] for e in events if e["type"] == "reminder_sent")
    assert reminded == ["agent", "sync"]  # the question's own reminder, and the await gate's about it
    (defaulted,) = [e for e in events if e["type"] == "timed_out_default"]
    assert (defaulted["data"]["kind"], defaulted["data"]["default"]) == ("question", "no")
    summary = _cli(local_stack, "runs", "show", run_id)
    assert "timed_out_default" in summary  # shown as a default, never as a person's answer
    drained = local_stack.client().drain_messages(run_id, "agent")
    assert len(drained) == 1 and "timed_out_default" in drained[0].text  # the node's queue has it, once


def test_a_review_gate_reminds_then_takes_request_changes_as_a_default_never_an_approval(
    local_stack: LocalStackProcess, tmp_path: Path
) -> None:
    run_id = f"lr-{uuid.uuid4().hex[:8]}"
    repo = create_demo_repo(tmp_path / "repo")
    ladder = {"remind_after": 2, "on_timeout": {"default": "request_changes"}}
    config = repo.gate_input(timeout_seconds=8, merge_timeout_seconds=60, ladder=ladder)
    local_stack.client().start_run("review_gate", config, run_id=run_id)
    run = _ended(local_stack, run_id)
    assert run.status == "succeeded", run.reason
    assert run.output["decision"] == "changes_requested" and run.output["answered_by"] is None
    assert run.merge_status is None  # a default never merges
    events = _events(local_stack, run_id)
    types = [e["type"] for e in events]
    assert types.index("reminder_sent") < types.index("timed_out_default")
    assert "interaction_answered" not in types and "review_merged" not in types
    (defaulted,) = [e for e in events if e["type"] == "timed_out_default"]
    assert (defaulted["data"]["kind"], defaulted["data"]["default"]) == ("review", "request_changes")
    assert "timed_out_default" in _cli(local_stack, "runs", "show", run_id)


def test_a_review_default_that_could_merge_is_refused_when_the_run_starts(
    local_stack: LocalStackProcess, tmp_path: Path
) -> None:
    repo = create_demo_repo(tmp_path / "repo")
    config = repo.gate_input(timeout_seconds=8, ladder={"on_timeout": {"default": "approve_merge"}})
    response = local_stack.http().post("/api/runs", json={"workflow": "review_gate", "input": config})
    assert response.status_code == 422 and "request_changes" in response.text, response.text
