"""Item 3 of issue 10, the aborted path, on the local stack: `baton runs stop <run>` stops the execution,
`run_aborted` is in the run's log when the command returns (with who stopped it and why), and
`baton runs events --follow` exits by itself. Stopping again is a 409;
another operator's stop names that operator; bad input is a 4xx that changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from tests.e2e.conftest import LocalStackProcess, wait_for

pytestmark = pytest.mark.e2e
ENDS = {"run_succeeded", "run_failed", "run_timed_out", "run_aborted"}


def _env(stack: LocalStackProcess, token: str | None = None) -> dict[str, str]:
    return {**os.environ, "BATON_API_URL": stack.api_url, "BATON_TOKEN": token or stack.token}


def _cli(stack: LocalStackProcess, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "baton.cli.main", *args]
    return subprocess.run(cmd, env=_env(stack, token), capture_output=True, text=True, timeout=60)


def _paused_run(stack: LocalStackProcess) -> str:
    client = stack.client()
    run_id = f"e2e-abort-{uuid.uuid4().hex[:8]}"
    client.start_run("human_pause", {"prompt": "Ship it?", "timeout_seconds": 120}, run_id=run_id)
    wait_for(lambda: any(e.type == "run_paused" for e in client.events(run_id).events), timeout=30)
    return run_id


def test_runs_stop_records_run_aborted_at_once_and_follow_exits(local_stack: LocalStackProcess) -> None:
    client = local_stack.client()
    run_id = _paused_run(local_stack)
    follower = subprocess.Popen(
        [sys.executable, "-m", "baton.cli.main", "runs", "events", run_id, "--follow", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(local_stack),
    )
    try:
        stopped = _cli(local_stack, "runs", "stop", run_id, "--reason", "wrong branch", "--json")
        assert stopped.returncode == 0, stopped.stderr
        assert json.loads(stopped.stdout)["status"] == "aborted"
        # recorded when the command returned: no reader had to come by
        (end,) = [e for e in client.events(run_id).events if e.type in ENDS]
        assert end.type == "run_aborted"
        assert end.data["reason"] == "stopped by local-operator: wrong branch"
        out, err = follower.communicate(timeout=30)
    finally:
        if follower.poll() is None:
            follower.kill()
    assert follower.returncode == 4, err  # --follow exits with the run's final status: 4 = aborted
    printed = [json.loads(line)["type"] for line in out.splitlines() if line.strip()]
    assert printed[0] == "run_started" and printed[-1] == "run_aborted"
    summary = client.get_run(run_id)
    assert summary.status == "aborted" and summary.ended_at == end.at
    assert summary.reason == "stopped by local-operator: wrong branch"
    # the execution is ABORTED too, and stays so: one end, no late run_failed from the stopped worker
    wait_for(lambda: f"[baton] run {run_id} (human_pause) aborted" in local_stack.log(), timeout=10)
    assert [e.type for e in client.events(run_id).events if e.type in ENDS] == ["run_aborted"]
    again = _cli(local_stack, "runs", "stop", run_id)
    assert again.returncode != 0 and "already ended (aborted)" in again.stderr and "Traceback" not in again.stderr


def test_the_stop_names_the_operator_who_stopped_and_bad_input_changes_nothing(local_stack: LocalStackProcess) -> None:
    run_id = _paused_run(local_stack)
    from baton.api.auth import operator_token

    bob = operator_token(local_stack.token, "bob")  # what `baton operator-token bob` prints
    with local_stack.http() as http:
        assert http.post(f"/api/runs/{run_id}/stop", json={"reason": 7}).status_code == 422
        assert http.post("/api/runs/no-such-run/stop", json={}).status_code == 404
        assert http.get(f"/api/runs/{run_id}").json()["status"] == "paused_waiting_human"  # bad input changed nothing
    stopped = _cli(local_stack, "runs", "stop", run_id, "--json", token=bob)
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout)["reason"] == "stopped by bob"
