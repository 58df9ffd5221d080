"""Issue 13 item 3 over HTTP against `baton dev`, with seconds-long steps: a hosted pause that declares a
ladder gets its reminder, then its escalation, then at the deadline its declared default, recorded as
`timed_out_default` (nobody's answer); the run goes on with the default and succeeds, and
`baton runs events` shows all three, in order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e

LADDER = {
    "remind_after": 1,
    "escalate_after": 3,
    "escalate_to": ["slack"],
    "on_timeout": {"default": {"approved": "no"}},
}


def _cli(stack: LocalStackProcess, *args: str) -> str:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token}
    done = subprocess.run(
        [sys.executable, "-m", "baton.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_ladder_reminds_escalates_then_takes_the_default_and_the_run_goes_on(
    local_stack: LocalStackProcess,
) -> None:
    run_id = f"ladder-{uuid.uuid4().hex[:8]}"
    client = local_stack.client()
    client.start_run(
        "human_pause", {"prompt": "Ship the release?", "timeout_seconds": 10, "ladder": LADDER}, run_id=run_id
    )
    run = wait_for(lambda: (r := client.get_run(run_id)).status in ("succeeded", "failed") and r, timeout=60)
    assert run.status == "succeeded", run.reason  # the run continued with the default
    assert run.output["answers"] == {"approved": "no"} and run.output["answered_by"] is None

    events = [json.loads(line) for line in _cli(local_stack, "runs", "events", run_id, "--json").splitlines()]
    types = [e["type"] for e in events]
    assert types.index("reminder_sent") < types.index("escalated") < types.index("timed_out_default")
    assert "interaction_answered" not in types and "human_input_timed_out" not in types
    (escalated,) = [e for e in events if e["type"] == "escalated"]
    assert escalated["data"]["channels"] == ["slack"]
    (defaulted,) = [e for e in events if e["type"] == "timed_out_default"]
    assert defaulted["data"]["default"] == {"approved": "no"}

    shown = _cli(local_stack, "runs", "events", run_id)
    assert "timed_out_default" in shown and "reminder_sent" in shown and "escalated" in shown
    summary = _cli(local_stack, "runs", "show", run_id)
    assert "timed_out_default" in summary  # shown as a default, never as a person's answer


def test_a_default_that_is_not_a_valid_answer_is_refused_when_the_run_starts(local_stack: LocalStackProcess) -> None:
    bad = {**LADDER, "on_timeout": {"default": "no"}}  # an ask is resumed with an object of answers
    response = local_stack.http().post(
        "/api/runs",
        json={"workflow": "human_pause", "input": {"prompt": "Ship?", "timeout_seconds": 10, "ladder": bad}},
    )
    assert response.status_code == 422, response.text
