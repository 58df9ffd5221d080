"""The await gate state machines really executing on moto, with our handlers dispatched in-process."""

from __future__ import annotations

import json
import time
from typing import Any

from baton.models import ParkedWait
from tests.conftest import wait_for
from tests.integration.conftest import MotoStack


def _describe(stack: MotoStack, arn: str) -> dict[str, Any]:
    return stack.clients["stepfunctions"].describe_execution(executionArn=arn)  # type: ignore[no-any-return]


def _done(stack: MotoStack, arn: str) -> dict[str, Any] | None:
    described = _describe(stack, arn)
    return described if described["status"] != "RUNNING" else None


def _park_returned(stack: MotoStack, arn: str) -> bool:
    """The park Lambda has returned (its `TaskSubmitted` is in the history): it has stored the wait AND
    made its own check for answers, so nothing but the test can send the gate's token any more."""
    sfn = stack.clients["stepfunctions"]
    history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return any(event["type"] == "TaskSubmitted" for event in history)


def test_post_park_answer_resumes_and_timeout_lists_the_unanswered(moto_stack: MotoStack) -> None:
    services = moto_stack.services
    qs = services.questions
    run = services.runs.start(
        "await_answers",
        {
            "from": "draft",
            "node": "draft",
            "timeout_seconds": 30,
            "questions": [{"question": "DB?"}, {"question": "Region?"}],
        },
        run_id="aw-1",
        caller="op",
    )
    wait_for(lambda: services.core.store.get_wait("aw-1", "await"))
    pending = qs.pending("aw-1")
    assert [p.request.prompt for p in pending] == ["DB?", "Region?"]
    assert qs.answer("aw-1", pending[0].interaction_id, "pg", caller="op")["resumed"] is False
    assert qs.answer("aw-1", pending[1].interaction_id, "eu-west-1", caller="op")["resumed"] is True
    described = wait_for(lambda: _done(moto_stack, run.execution_arn or ""))
    assert described["status"] == "SUCCEEDED"
    output = json.loads(described["output"])
    assert [a["answer"] for a in output["answers"]] == ["pg", "eu-west-1"]
    assert moto_stack.dispatcher.invocations["demo_agent"] == 1

    timed = services.runs.start(
        "await_answers",
        {"node": "draft", "timeout_seconds": 1, "questions": [{"question": "Anyone there?"}]},
        run_id="aw-2",
        caller="op",
    )
    described = wait_for(lambda: _done(moto_stack, timed.execution_arn or ""), timeout=20)
    assert described["status"] == "FAILED" and described["error"] == "AwaitAnswersTimedOut"
    assert "timed out after 1s" in described["cause"] and "Anyone there?" in described["cause"]


def test_reconciler_resumes_a_gate_whose_send_failed(moto_stack: MotoStack) -> None:
    services = moto_stack.services
    qs = services.questions
    run = services.runs.start(
        "await_answers", {"timeout_seconds": 30, "questions": [{"question": "Q?"}]}, run_id="aw-3", caller="op"
    )
    # Waiting for the stored wait alone races the park Lambda's own answer check under load: an answer
    # landing between its store and its check makes the park call the broken send below.
    wait_for(lambda: _park_returned(moto_stack, run.execution_arn or ""))
    [question] = qs.pending("aw-3")

    def broken(token: str, output: dict[str, Any]) -> None:
        raise RuntimeError("Step Functions unavailable")

    tokens: Any = services.core.tokens
    tokens.send_success = broken  # the API's send fails after the answer is stored
    try:
        assert qs.answer("aw-3", question.interaction_id, "yes", caller="op")["resumed"] is False
    finally:
        del tokens.send_success
    time.sleep(0.3)
    assert _describe(moto_stack, run.execution_arn or "")["status"] == "RUNNING"
    parked = services.core.store.list_run_waits("aw-3")
    assert [w.status for w in parked] == ["parked"]
    # the scheduled reconciler's pass (the `reconcile` Lambda) re-sends what the failed send lost
    assert services.reconciler.reconcile().wire()["released"] == [{"run_id": "aw-3", "gate": "await", "kind": "await"}]
    assert services.reconciler.reconcile()["released"] == []
    described = wait_for(lambda: _done(moto_stack, run.execution_arn or ""))
    assert described["status"] == "SUCCEEDED"
    events = [e.type for e in services.core.store.list_events("aw-3")]
    assert events.count("await_released") == 1


def test_map_items_park_their_own_gates_and_release_independently(moto_stack: MotoStack) -> None:
    services = moto_stack.services
    qs = services.questions
    run = services.runs.start(
        "await_fanout_example",
        {
            "research_questions": [{"question": "Which sources?"}],
            "draft_questions": [{"question": "Tone?", "options": ["formal", "casual"]}],
            "items": [{"from": "research"}, {"from": "draft"}],
            "timeout_seconds": 30,
        },
        run_id="aw-map",
        caller="op",
    )
    store = services.core.store
    wait_for(lambda: len([w for w in store.list_run_waits("aw-map") if w.status == "parked"]) == 2)
    by_node = {q.request.node: q for q in qs.pending("aw-map")}
    assert qs.answer("aw-map", by_node["draft"].interaction_id, "casual", caller="op")["released"] == ["item-1"]
    waits: dict[str, ParkedWait] = {w.gate: w for w in store.list_run_waits("aw-map")}
    assert waits["item-0"].status == "parked" and waits["item-1"].status == "released"
    assert _describe(moto_stack, run.execution_arn or "")["status"] == "RUNNING"  # item 0 still waits
    assert store.get_run("aw-map").status == "paused_waiting_human"  # and so does the run (issue 28 item 11)
    assert qs.answer("aw-map", by_node["research"].interaction_id, "arxiv", caller="op")["released"] == ["item-0"]
    described = wait_for(lambda: _done(moto_stack, run.execution_arn or ""))
    assert described["status"] == "SUCCEEDED"
    items = json.loads(described["output"])["items"]
    assert [i["index"] for i in items] == [0, 1]
    assert items[1]["answers"] == [
        {"interaction_id": by_node["draft"].interaction_id, "node": "draft", "question": "Tone?", "answer": "casual"}
    ]


def test_list_run_waits_reads_only_the_runs_partition(moto_stack: MotoStack) -> None:
    store = moto_stack.services.core.store
    for run_id, gate in (("a", "g1"), ("a", "g2"), ("b", "g1")):
        store.put_wait(ParkedWait(run_id=run_id, gate=gate, task_token=f"{run_id}{gate}", kind="await", parked_at="t"))
    assert [w.gate for w in store.list_run_waits("a")] == ["g1", "g2"]
    assert store.list_run_waits("nobody") == []
