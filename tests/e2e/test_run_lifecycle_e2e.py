"""Item 3 of issue 10 on the local stack: a run's end is in its event log when its execution ends (no one
reads the run), stamped with the execution's stop time, published to the console channel, and
`baton runs events --follow` exits by itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest

from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e
ENDS = {"run_succeeded", "run_failed", "run_timed_out", "run_aborted"}


def _follow(stack: LocalStackProcess, run_id: str) -> subprocess.Popen[str]:
    env = {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": stack.token}
    return subprocess.Popen(
        [sys.executable, "-m", "baton.cli.main", "runs", "events", run_id, "--follow", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_follow_exits_when_a_hosted_run_ends_and_the_end_is_published(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = f"e2e-life-{uuid.uuid4().hex[:8]}"
    client.start_run("human_pause", {"prompt": "Ship it?", "timeout_seconds": 60}, run_id=run_id)
    follower = _follow(local_stack, run_id)
    try:
        wait_for(lambda: any(e.type == "run_paused" for e in client.events(run_id).events), timeout=30)
        client.resume(run_id, {"ship": True})
        out, err = follower.communicate(timeout=60)
    finally:
        if follower.poll() is None:
            follower.kill()
    assert follower.returncode == 0, err
    printed = [json.loads(line)["type"] for line in out.splitlines() if line.strip()]
    assert printed[0] == "run_started" and printed[-1] == "run_succeeded"
    # the end was recorded from the execution, without anyone reading the run (the follower only reads
    # events until it has been idle FOLLOW_STATUS_EVERY polls)
    events = client.events(run_id).events
    (end,) = [e for e in events if e.type in ENDS]
    summary = client.get_run(run_id)
    assert summary.status == "succeeded" and summary.ended_at == end.at
    # published to the console channel, which shows a run's end as one line (issue 16)
    wait_for(lambda: f"[baton] run {run_id} (human_pause) succeeded" in local_stack.log(), timeout=10)


def test_a_timed_out_pause_ends_the_run_on_time_with_its_reason(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = f"e2e-life-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    client.start_run("human_pause", {"prompt": "Anyone?", "timeout_seconds": 1}, run_id=run_id)
    end = wait_for(lambda: next((e for e in client.events(run_id).events if e.type in ENDS), None), timeout=30)
    assert end.type == "run_failed" and "timed out after 1s" in end.data["reason"]
    assert time.monotonic() - started < 30
