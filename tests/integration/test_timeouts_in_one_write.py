"""A pause's time-out and its event are one conditional write (on moto, the real adapters, a fault injected
into the write): a tool-form await's with `await_timed_out`, a blocking ask's with `human_input_timed_out`.
A write refused leaves neither (no event without its state, no state without its event); the next one
writes both, once, and no write of its own for the event (a PutItem refused then would be an event lost)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from botocore.retries.standard import ExponentialBackoff

from baton.adapters.clients import MAX_ATTEMPTS
from baton.contracts import AskRequest, AwaitRequest, BlockingAskRequest
from baton.services.asks import AskService
from tests.conftest import FixedClock
from tests.integration.faults import THROTTLED, FaultInjector, on_every_client

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.integration.conftest import MotoStack


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultInjector]:
    """Requested before `moto_stack`, so the stack's clients get the injector; the backoff is not slept."""
    computed = ExponentialBackoff.delay_amount

    def unslept(self: ExponentialBackoff, context: Any) -> float:
        computed(self, context)
        return 0.0

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", unslept)
    yield on_every_client(monkeypatch)


def _past_deadlines(stack: MotoStack) -> None:
    clock = FixedClock(datetime.now(UTC))
    clock.advance(120)
    stack.services.core.clock = clock


def _events(stack: MotoStack, run_id: str) -> Counter[str]:
    return Counter(str(e.type) for e in stack.services.core.store.list_events(run_id, limit=1000))


def test_a_tool_awaits_time_out_and_its_event_land_together(faults: FaultInjector, moto_stack: MotoStack) -> None:
    questions, store, run_id = moto_stack.services.questions, moto_stack.services.core.store, "one-write-await"
    questions.ask(run_id, AskRequest(node="draft", question="Which DB?"), caller="agent")
    waiting = questions.await_tool(run_id, AwaitRequest(timeout_seconds=30), caller="agent")
    _past_deadlines(moto_stack)

    faults.queue("dynamodb.TransactWriteItems", *[THROTTLED] * MAX_ATTEMPTS)
    with faults.active(), pytest.raises(ClientError):
        questions.time_out_tool_await(run_id, waiting.interaction_id)
    stored = store.get_interaction(run_id, waiting.interaction_id)
    assert stored is not None and stored.state.status == "pending"
    assert _events(moto_stack, run_id)["await_timed_out"] == 0  # refused whole: neither landed

    faults.queue("dynamodb.PutItem", *[THROTTLED] * MAX_ATTEMPTS)  # what a separate event write would meet
    with faults.active():
        assert questions.time_out_tool_await(run_id, waiting.interaction_id) is True
    assert faults.attempts("dynamodb.PutItem") == []
    stored = store.get_interaction(run_id, waiting.interaction_id)
    assert stored is not None and stored.state.status == "timed_out"
    assert _events(moto_stack, run_id)["await_timed_out"] == 1
    assert questions.time_out_tool_await(run_id, waiting.interaction_id) is False  # ended: nothing more
    assert _events(moto_stack, run_id)["await_timed_out"] == 1


def test_a_blocking_asks_time_out_and_its_event_land_together(faults: FaultInjector, moto_stack: MotoStack) -> None:
    core, run_id = moto_stack.services.core, "one-write-ask"
    core.ensure_run(run_id)
    asks = AskService(core)
    request = BlockingAskRequest(node="agent", question="Drop the table?", timeout_seconds=60)
    iid = asks.ask(run_id, request, caller="agent").interaction_id
    _past_deadlines(moto_stack)

    faults.queue("dynamodb.TransactWriteItems", *[THROTTLED] * MAX_ATTEMPTS)
    with faults.active(), pytest.raises(ClientError):
        asks.get(run_id, iid)
    stored = core.store.get_interaction(run_id, iid)
    assert stored is not None and stored.state.status == "pending"
    assert _events(moto_stack, run_id)["human_input_timed_out"] == 0  # refused whole: neither landed
    run = core.store.get_run(run_id)
    assert run is not None and run.status == "paused_waiting_human"

    faults.queue("dynamodb.PutItem", *[THROTTLED] * MAX_ATTEMPTS)  # what a separate event write would meet
    with faults.active():
        assert asks.get(run_id, iid).state.status == "timed_out"
    assert faults.attempts("dynamodb.PutItem") == []
    assert _events(moto_stack, run_id)["human_input_timed_out"] == 1
    run = core.store.get_run(run_id)
    assert run is not None and run.status == "running"
    assert asks.get(run_id, iid).state.status == "timed_out"  # read again: ended once
    assert _events(moto_stack, run_id)["human_input_timed_out"] == 1
