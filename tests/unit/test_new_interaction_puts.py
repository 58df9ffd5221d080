"""A new interaction's put (a question, a pause, a tool await: `put_question`, `put_pause`) records the
events of its asking in its own transaction, never a decision: a decision is chained after the run's
head, and only `DynamoTable._write_chained` retries a lost race for it. The store refuses one as a
programming error before it writes anything (it was written unretried), and the memory fake does too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from baton.adapters.dynamo import DynamoStore
from baton.events import EventType
from baton.models import Event, Interaction, RunSummary, parse_request
from tests.fakes.memory import MemoryStore

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class _NoCalls:
    """A DynamoDB client that records each call and answers none (unit tests reach no AWS)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def call(**_: Any) -> dict[str, Any]:
            self.calls.append(name)
            return {}

        return call


def _pause(kind: str) -> Interaction:
    return Interaction(
        interaction_id="i1",
        run_id="r1",
        created_at="2026-11-30T12:00:00.000Z",
        request=parse_request({"kind": kind, "node": "draft", "prompt": "Which db?", "options": ["pg", "dynamo"]}),
    )


def _event(event_type: EventType) -> Event:
    return Event(event_id=f"e-{event_type}", run_id="r1", type=event_type, at="2026-11-30T12:00:00.000Z")


ASKED = _event(EventType.HUMAN_INPUT_REQUESTED)
DECIDED = _event(EventType.INTERACTION_ANSWERED)


@pytest.mark.parametrize("put", ["put_question", "put_pause"])
def test_the_dynamo_store_refuses_a_decision_with_a_new_interaction_and_writes_nothing(put: str) -> None:
    client = _NoCalls()
    store = DynamoStore("baton", cast("DynamoDBClient", client))
    with pytest.raises(ValueError, match="interaction_answered"):
        getattr(store, put)(_pause("question"), events=[ASKED, DECIDED])
    assert client.calls == []  # not the head's read, not the transaction


@pytest.mark.parametrize("put", ["put_question", "put_pause"])
def test_the_dynamo_store_puts_a_new_interaction_with_its_asking_in_one_transaction_and_no_head_read(
    put: str,
) -> None:
    client = _NoCalls()
    getattr(DynamoStore("baton", cast("DynamoDBClient", client)), put)(_pause("question"), events=[ASKED])
    assert client.calls == ["transact_write_items"]


@pytest.mark.parametrize("put", ["put_question", "put_pause"])
def test_the_memory_store_refuses_a_decision_with_a_new_interaction_as_the_dynamo_store_does(put: str) -> None:
    store = MemoryStore()
    store.create_run(RunSummary(run_id="r1", created_at="t", updated_at="t"))
    with pytest.raises(ValueError, match="interaction_answered"):
        getattr(store, put)(_pause("question"), events=[DECIDED])
    assert store.get_interaction("r1", "i1") is None and store.list_events("r1") == []
