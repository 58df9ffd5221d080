"""Baton ends every pause itself, over HTTP against `baton dev` (issue 17 item 4, issue 10 item 4):

* a gate with a short timeout is ended by its timer (statemachines/gate_deadline.asl.json, which the
  local stack's Step Functions runs for real): the task fails with BatonDeadlinePassed, never with
  States.Timeout, and the run fails through the gate's Catch with its cause;
* a timed-out await gate's questions stop listing as pending, and an answer after it is a 410 that says
  the gate timed out, kept as `answer_late`;
* a timed-out tool-form await no longer leaves its run `paused_waiting_human`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from baton.domain.deadline import TIMER_STATE_MACHINE
from tests.e2e.conftest import LocalStackProcess, wait_for

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions import SFNClient

pytestmark = pytest.mark.e2e


def _run_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _sfn(stack: LocalStackProcess) -> SFNClient:
    """The local stack's Step Functions (moto), to read what ended each task."""
    return boto3.client(
        "stepfunctions",
        endpoint_url=str(stack.state["moto_url"]),
        region_name=str(stack.state["region"]),
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def _task_endings(stack: LocalStackProcess, execution_arn: str) -> list[tuple[str, str]]:
    history = _sfn(stack).get_execution_history(executionArn=execution_arn, maxResults=1000)["events"]
    endings = []
    for event in history:
        if event["type"] == "TaskFailed":
            endings.append(("TaskFailed", event["taskFailedEventDetails"].get("error", "")))
        elif event["type"] == "TaskTimedOut":
            endings.append(("TaskTimedOut", event["taskTimedOutEventDetails"].get("error", "")))
    return endings


def _events(stack: LocalStackProcess, run_id: str) -> list[dict[str, Any]]:
    return list(stack.client().events(run_id, limit=500)["events"])


def _failed(stack: LocalStackProcess, run_id: str) -> dict[str, Any]:
    client = stack.client()
    view = wait_for(lambda: (r := client.get_run(run_id)).status == "failed" and r, timeout=30)
    return dict(view.model_dump())


def test_a_short_gate_is_ended_by_baton_not_by_the_step_functions_timeout(local_stack: LocalStackProcess) -> None:
    run_id = _run_id("dl-ask")
    client = local_stack.client()
    started = client.start_run("human_pause", {"prompt": "Still there?", "timeout_seconds": 8}, run_id=run_id)
    run = _failed(local_stack, run_id)
    assert "Still there?" in str(run["reason"])
    assert _task_endings(local_stack, str(started.execution_arn)) == [("TaskFailed", "BatonDeadlinePassed")]
    timers = _sfn(local_stack).list_executions(stateMachineArn=local_stack.state["workflows"][TIMER_STATE_MACHINE])
    mine = [
        e
        for e in timers["executions"]
        if run_id in _sfn(local_stack).describe_execution(executionArn=e["executionArn"])["input"]
    ]
    assert [e["status"] for e in mine] == ["SUCCEEDED"]  # one timer for the gate, and it ended the pause
    types = [e["type"] for e in _events(local_stack, run_id)]
    assert "human_input_timed_out" in types and "run_resumed" not in types


def test_a_timed_out_await_gate_stops_listing_its_questions_and_a_later_answer_is_410_kept_late(
    local_stack: LocalStackProcess,
) -> None:
    run_id = _run_id("dl-await")
    client = local_stack.client()
    started = client.start_run(
        "await_answers",
        {"node": "draft", "timeout_seconds": 8, "questions": [{"question": "Answered?"}, {"question": "Forgotten?"}]},
        run_id=run_id,
    )
    pending = wait_for(lambda: len(p := client.pending_questions(run_id)) == 2 and p)
    client.answer(run_id, pending[0].interaction_id, "yes")
    run = _failed(local_stack, run_id)
    assert "Forgotten?" in str(run["reason"])
    assert _task_endings(local_stack, str(started.execution_arn)) == [("TaskFailed", "BatonDeadlinePassed")]
    assert client.pending_questions(run_id) == []  # what the gate waited on is no longer pending
    forgotten = pending[1].interaction_id
    with local_stack.http() as http:
        late = http.post(f"/api/runs/{run_id}/interactions/{forgotten}/answer", json={"answer": "too late"})
    assert late.status_code == 410, late.text
    body = late.json()
    assert body["error"] == "gone" and body["reason"] == "gate_timed_out"
    assert "await gate" in body["message"] and "timed out" in body["message"]
    assert body["interaction"]["status"] == "timed_out"
    [kept] = [e for e in _events(local_stack, run_id) if e["type"] == "answer_late"]
    assert kept["data"]["answer"] == "too late" and kept["data"]["interaction_id"] == forgotten


def test_a_timed_out_tool_await_no_longer_leaves_its_run_paused(local_stack: LocalStackProcess) -> None:
    run_id = _run_id("dl-tool")
    client = local_stack.client()
    iid = client.ask_async(run_id, "draft", "Proceed?")["interaction_id"]
    with local_stack.http() as http:
        resp = http.post(f"/api/runs/{run_id}/await", json={"timeout_seconds": 2})
    assert resp.status_code == 202 and resp.json()["run_status"] == "paused_waiting_human"
    assert client.get_run(run_id).status == "paused_waiting_human"
    wait_for(lambda: client.get_run(run_id).status == "running", timeout=20)  # its timer ended the wait
    assert any(e["type"] == "await_timed_out" for e in _events(local_stack, run_id))
    # The tool form blocks nobody: its question is still open, and an answer keeps the run running.
    assert [q.interaction_id for q in client.pending_questions(run_id)] == [iid]
    assert client.answer(run_id, iid, "yes").status == "answered"
    assert client.get_run(run_id).status == "running"
