"""Faults moto never makes (tests/integration/faults.py), through the real adapters and the API handler.

Each targeted test queues one fault where AWS can return it and checks that Baton's call still does its
work once, with its attempts counted: a single write refused for a transaction on its item, a
transaction cancelled for a conflict on one of its items. The seeded job drives questions, answers,
resumes and interrupts through the API with faults at a fixed rate and checks that no answer is lost or
doubled and that every retry is bounded."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest
from botocore.retries.standard import ExponentialBackoff

from baton.domain.interrupt_spec import InterruptSpec
from baton.local.http_adapter import to_proxy_event
from tests.conftest import wait_for
from tests.integration.faults import CANCELLED_FOR_CONFLICT, TRANSACTION_CONFLICT, FaultInjector

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.integration.conftest import MotoStack

OPERATOR = "arn:aws:sts::123456789012:assumed-role/operators/op-1"


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultInjector]:
    """Every botocore client created while the test runs gets the injector. Requested before
    `moto_stack`, so the stack's clients and its handler copies' get it too. botocore's backoff is
    computed as always and not slept (the retries are counted, not timed)."""
    import botocore.session

    injector = FaultInjector()
    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = original(self, *args, **kwargs)
        injector.attach(client)
        return client

    computed = ExponentialBackoff.delay_amount

    def unslept(self: ExponentialBackoff, context: Any) -> float:
        computed(self, context)
        return 0.0

    monkeypatch.setattr(botocore.session.Session, "create_client", create_client)
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", unslept)
    yield injector


def _api(stack: MotoStack, method: str, path: str, body: Any = None, caller: str = OPERATOR) -> tuple[int, Any]:
    raw = json.dumps(body).encode() if body is not None else b""
    event = to_proxy_event(method, path, {"Content-Type": "application/json"}, raw, "10.0.0.1")
    event["requestContext"]["identity"]["userArn"] = caller
    payload, errored = stack.dispatcher.invoke("api", event)
    assert not errored, payload
    return payload["statusCode"], json.loads(payload["body"])


def test_single_write_refused_for_a_transaction_is_retried(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """DynamoDB refuses a PutItem on an item a transaction is writing (TransactionConflictException, HTTP
    400), and botocore's standard mode does not retry it: Baton's DynamoDB client does, as throttling."""
    questions = moto_stack.services.questions
    faults.queue("dynamodb.PutItem", TRANSACTION_CONFLICT)
    with faults.active():
        asked = questions.ask("conflict-put", node="draft", question="Which DB?", caller="agent")
    assert [q.interaction_id for q in questions.pending("conflict-put")] == [asked["interaction_id"]]
    assert faults.injected == {"dynamodb.PutItem TransactionConflictException": 1}
    assert faults.attempts("dynamodb.PutItem")[0] == 2  # refused, then written


def test_interrupt_whose_transaction_met_a_conflict_is_created(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """A new interrupt (its item and its id's pointer in one transaction) cancelled for TransactionConflict
    was reported as "already exists" (409) and never stored. A cancelled transaction wrote nothing, so it
    is sent again."""
    interrupts = moto_stack.services.interrupts
    faults.queue("dynamodb.TransactWriteItems", CANCELLED_FOR_CONFLICT)
    with faults.active():
        created, _ = interrupts.create(InterruptSpec(session_id="conflict-int", prompt="deploy?"), caller="agent")
    stored = moto_stack.services.core.store.find_interaction(created.interaction_id)
    assert stored is not None and stored.state.status == "pending"
    assert faults.attempts("dynamodb.TransactWriteItems") == [1, 1]  # cancelled, then sent again


def test_answer_whose_transaction_met_a_conflict_is_recorded_once(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """The deciding transaction of an answer cancelled for TransactionConflict on one of its items was a
    500 (botocore's ClientError, unhandled); it is sent again and the answer is recorded once."""
    asked = moto_stack.services.questions.ask("conflict-answer", node="draft", question="Which?", caller="agent")
    path = f"/api/runs/conflict-answer/interactions/{asked['interaction_id']}/answer"
    _api(moto_stack, "GET", "/api/runs/conflict-answer/interactions/pending")  # the handler copy is warm
    faults.queue("dynamodb.TransactWriteItems", replace(CANCELLED_FOR_CONFLICT, item=0))  # the question's item
    with faults.active():
        status, body = _api(moto_stack, "POST", path, {"answer": "postgres"})
    assert status == 200 and body["status"] == "answered", body
    assert faults.attempts("dynamodb.TransactWriteItems") == [1, 1]
    answered = moto_stack.services.core.store.get_interaction("conflict-answer", asked["interaction_id"])
    assert answered is not None and answered.state.answer == "postgres"
    events = moto_stack.services.core.store.list_events("conflict-answer", limit=100)
    assert [str(e.type) for e in events].count("interaction_answered") == 1


def test_claim_whose_transaction_met_a_conflict_is_taken(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """A claim's transaction (the interrupt's conditional put and its decision chained on the run's log)
    cancelled for TransactionConflict on the interrupt's item was a 500; it is sent again and the claim
    holds."""
    created, _ = moto_stack.services.interrupts.create(
        InterruptSpec(session_id="conflict-claim", prompt="deploy?"), caller="agent"
    )
    _api(moto_stack, "GET", "/api/runs/conflict-claim/interactions/pending")  # the handler copy is warm
    faults.queue("dynamodb.TransactWriteItems", replace(CANCELLED_FOR_CONFLICT, item=0))
    with faults.active():
        status, body = _api(moto_stack, "POST", f"/api/v1/interrupts/{created.interaction_id}/claim", {})
    assert status == 200 and body["interrupt"]["claimedBy"] == OPERATOR, body
    assert faults.attempts("dynamodb.TransactWriteItems") == [1, 1]
    events = moto_stack.services.core.store.list_events("conflict-claim", limit=100)
    assert [str(e.type) for e in events].count("interrupt_claimed") == 1


def test_resume_whose_transaction_met_a_conflict_resumes_once(faults: FaultInjector, moto_stack: MotoStack) -> None:
    """A run's resume at a human pause whose deciding transaction was cancelled for TransactionConflict on
    the pause's item: sent again, the run resumed once."""
    runs = moto_stack.services.runs
    runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 60}, run_id="conflict-pause", caller="op")
    wait_for(lambda: runs.get("conflict-pause")["status"] == "paused_waiting_human")
    _api(moto_stack, "GET", "/api/runs/conflict-pause/interactions/pending")
    faults.queue("dynamodb.TransactWriteItems", replace(CANCELLED_FOR_CONFLICT, item=0))
    with faults.active():
        status, body = _api(moto_stack, "POST", "/api/runs/conflict-pause/resume", {"answers": {"ship": True}})
    assert status == 200 and body["resumed"] is True, body
    assert faults.attempts("sfn.SendTaskSuccess") == [1]
    events = moto_stack.services.core.store.list_events("conflict-pause", limit=100)
    assert [str(e.type) for e in events].count("run_resumed") == 1
