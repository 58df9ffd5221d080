"""Stopping a run ends its pauses (issue 28 defect 6), on moto through the real API handler: after
`POST /api/runs/{id}/stop` every pending item of the run (its hosted interrupt, its async question, a
plain pause) is closed, answering or resuming it is a 410 naming the stop and who stopped it, it is gone
from the inbox and the run's pending lists, and no `run_resumed` follows `run_aborted`.

Before: the interrupt stayed pending in the inbox, its resume answered 200 "the workflow continues" and
recorded `run_resumed` after `run_aborted`, and the question stayed listed."""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest
from baton.local.moto_fixes import execution_end_events, sfn_stop_execution
from tests.conftest import wait_for
from tests.integration.racing import call_api, operator
from tests.integration.test_call_budgets_question_life import timer_statuses

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.integration.conftest import MotoStack

STOPPER = operator(1)
CAUSE = f"stopped by {STOPPER}: wrong branch"


@pytest.fixture
def stack(moto_stack: MotoStack) -> Iterator[MotoStack]:
    """moto as `baton dev` runs it: StopExecution ends a waiting execution, and its end is recorded."""

    def deliver(event: dict[str, Any]) -> None:
        moto_stack.dispatcher.invoke("run_lifecycle", event)

    with ExitStack() as fixes:
        fixes.enter_context(sfn_stop_execution())
        fixes.enter_context(execution_end_events(deliver))
        yield moto_stack


def _stop(stack: MotoStack, run_id: str) -> None:
    status, body = call_api(stack, STOPPER, "POST", f"/api/runs/{run_id}/stop", {"reason": "wrong branch"})
    assert status == 200 and body["status"] == "aborted", body


def _names_the_stop(status: int, body: dict[str, object]) -> None:
    assert status == 410, body
    assert CAUSE in str(body["message"])
    assert body["winner"] == {"status": "cancelled", "value": CAUSE, "by": STOPPER, "at": body["winner"]["at"]}  # type: ignore[index]


def _no_resume_after_the_end(stack: MotoStack, run_id: str) -> None:
    types = [e.type for e in stack.services.core.store.list_events(run_id, limit=1000)]
    assert "run_aborted" in types and "run_resumed" not in types[types.index("run_aborted") :], types


def test_stopping_a_run_closes_its_interrupt_and_questions(stack: MotoStack) -> None:
    run_id = "stop-closes"
    store = stack.services.core.store
    stack.services.runs.start("interrupt", {"prompt": "Ship?", "timeout_seconds": 60}, run_id=run_id, caller="op")
    [interrupt] = wait_for(lambda: store.list_run_interactions(run_id, kind="interrupt"), timeout=30)
    wait_for(lambda: store.get_wait(run_id, interrupt.request.node), timeout=30)
    asked = stack.services.questions.ask(run_id, AskRequest(node="draft", question="which db?"), caller="agent")

    _stop(stack, run_id)

    iid, qid = interrupt.interaction_id, asked["interaction_id"]
    _names_the_stop(*call_api(stack, operator(2), "POST", f"/api/v1/interrupts/{iid}/resume", {"input": "go"}))
    path = f"/api/runs/{run_id}/interactions/{qid}/answer"
    _names_the_stop(*call_api(stack, operator(2), "POST", path, {"answer": "postgres"}))
    status, page = call_api(stack, operator(2), "GET", f"/api/inbox?run={run_id}", None)
    assert status == 200 and page["items"] == [], page
    status, pending = call_api(stack, operator(2), "GET", f"/api/runs/{run_id}/interactions/pending", None)
    assert status == 200 and pending["pending"] == [], pending
    status, listed = call_api(stack, operator(2), "GET", f"/api/v1/interrupts?sessionId={run_id}", None)
    assert [i["status"] for i in listed["interrupts"]] == ["cancelled"] and listed["interrupts"][0]["reason"] == CAUSE
    wait = store.get_wait(run_id, interrupt.request.node)
    assert wait is not None and wait.status != "parked"
    _no_resume_after_the_end(stack, run_id)


def test_stopping_a_run_closes_its_plain_pause(stack: MotoStack) -> None:
    run_id = "stop-pause"
    stack.services.runs.start("human_pause", {"prompt": "Ship it?"}, run_id=run_id, caller="op")
    wait_for(lambda: stack.services.core.store.get_wait(run_id, "approve"), timeout=30)

    _stop(stack, run_id)

    resumed = call_api(stack, operator(2), "POST", f"/api/runs/{run_id}/resume", {"answers": {"ship": True}})
    _names_the_stop(*resumed)
    _no_resume_after_the_end(stack, run_id)


def test_a_stopped_runs_timers_are_aborted_not_left_to_fire(stack: MotoStack) -> None:
    """The stop stops what it closed: its hosted interrupt's wait's timer and its question's own (a
    default to take); left running, each would fire at its deadline (transitions, a gate_deadline
    invocation and a read) to find nothing to do, and hold a thread here until then."""
    run_id = "stop-timers"
    store = stack.services.core.store
    stack.services.runs.start("interrupt", {"prompt": "Ship?", "timeout_seconds": 600}, run_id=run_id, caller="op")
    [interrupt] = wait_for(lambda: store.list_run_interactions(run_id, kind="interrupt"), timeout=30)
    wait_for(lambda: store.get_wait(run_id, interrupt.request.node), timeout=30)
    request = AskRequest(
        node="draft", question="which db?", options=["pg", "mysql"], timeout_seconds=600, on_timeout={"default": "pg"}
    )
    stack.services.questions.ask(run_id, request, caller="agent")
    wait_for(lambda: timer_statuses(stack, run_id) == ["RUNNING", "RUNNING"], timeout=30)

    _stop(stack, run_id)

    wait_for(lambda: timer_statuses(stack, run_id) == ["ABORTED", "ABORTED"], timeout=30)
