"""Claim leases on the DynamoDB adapter (moto): the claim write is conditional on the holder seen (a
free one: no live lease at `now`), the inbox's claim filters count a claim only while its lease runs,
and pending items stored before the all-pending index get its keys (`DynamoStore.backfill_all_pending`,
which `baton migrate index-keys` runs on a deployed table and the local stack on the table it restores)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.adapters.dynamo import DynamoStore
from baton.errors import ConflictError
from baton.local import persist
from baton.models import Interaction, InteractionStatus, PendingQuery, parse_request
from baton.runtime.migrations import index_key_migrations
from baton.services.core import Core
from baton.workflows.table import create_table_kwargs
from tests.conftest import FixedClock
from tests.fakes import FakeWorkflows, RecordingNotifier, RecordingTaskTokens

TABLE = "lease-it"


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with mock_aws():
        db = boto3.client("dynamodb", region_name="us-east-1")
        db.create_table(**create_table_kwargs(TABLE))
        yield db


def _interrupt(n: int, **state: Any) -> Interaction:
    return Interaction(
        interaction_id=f"01L{n:023d}",
        run_id="sess-1",
        created_at=f"2026-11-30T12:00:{n:02d}.000Z",
        request=parse_request({"kind": "interrupt", "node": "interrupt", "prompt": "Ship?"}),
        state=InteractionStatus(**state),
    )


def _asked(n: int, request: dict[str, Any]) -> Interaction:
    return _interrupt(n).model_copy(update={"request": parse_request(request)})


def test_claim_write_is_conditional_on_the_lease(client: Any) -> None:
    store = DynamoStore(TABLE, client)
    lapsed = _interrupt(1, claimed_by="alice", lease_expires_at="2026-11-30T12:05:00.000Z")
    store.put_interaction(lapsed)
    bob = lapsed.state.model_copy(update={"claimed_by": "bob", "lease_expires_at": "2026-11-30T12:30:00.000Z"})
    with pytest.raises(ConflictError):  # at 12:04 alice's lease still runs: a write for a free one loses
        store.write_claim(lapsed, bob, expected_holder=None, now="2026-11-30T12:04:59.000Z")
    claimed = store.write_claim(lapsed, bob, expected_holder=None, now="2026-11-30T12:05:00.000Z")
    stored = store.get_interaction("sess-1", lapsed.interaction_id)
    assert stored is not None and stored.state.claimed_by == "bob" and stored.state.version == claimed.state.version
    renew = stored.state.model_copy(update={"lease_expires_at": "2026-11-30T13:00:00.000Z"})
    with pytest.raises(ConflictError):  # the holder condition: not alice's any more
        store.write_claim(stored, renew, expected_holder="alice", now="2026-11-30T12:06:00.000Z")
    store.write_claim(stored, renew, expected_holder="bob", now="2026-11-30T12:06:00.000Z")


def test_claim_filters_count_only_live_leases(client: Any) -> None:
    store = DynamoStore(TABLE, client)
    live = _interrupt(1, claimed_by="alice", lease_expires_at="2026-11-30T13:00:00.000Z")
    lapsed = _interrupt(2, claimed_by="alice", lease_expires_at="2026-11-30T12:10:00.000Z")
    legacy = _interrupt(3, claimed_by="alice")  # stored before leases: not held
    free = _interrupt(4)
    for i in (live, lapsed, legacy, free):
        store.put_interaction(i)
    now = "2026-11-30T12:30:00.000Z"
    mine, _ = store.page_all_pending(PendingQuery(claimed_by="alice", now=now))
    unclaimed, _ = store.page_all_pending(PendingQuery(unclaimed=True, now=now, kinds=("interrupt",)))
    assert [i.interaction_id for i in mine] == [live.interaction_id]
    assert [i.interaction_id for i in unclaimed] == [free.interaction_id, legacy.interaction_id, lapsed.interaction_id]


def test_items_stored_before_the_index_get_its_keys(client: Any) -> None:
    store = DynamoStore(TABLE, client)
    old = _interrupt(1)
    store.put_interaction(old)
    client.update_item(  # as it was stored before the all-pending index
        TableName=TABLE,
        Key={"PK": {"S": "RUN#sess-1"}, "SK": {"S": f"INT#{old.interaction_id}"}},
        UpdateExpression="REMOVE GSI3PK, GSI3SK",
    )
    assert store.page_all_pending(PendingQuery())[0] == []
    assert [i.interaction_id for i in store.page_pending("interrupt", PendingQuery())[0]] == [old.interaction_id]
    assert store.backfill_all_pending(["interrupt", "question"]) == 1
    assert store.backfill_all_pending(["interrupt"]) == 0  # once is enough
    assert [i.interaction_id for i in store.page_all_pending(PendingQuery())[0]] == [old.interaction_id]


def test_the_local_stack_brings_saved_items_to_the_current_key_layout(client: Any) -> None:
    store = DynamoStore(TABLE, client)
    due = "2026-12-01T00:00:00.000Z"
    asked = [
        _interrupt(1),
        _asked(2, {"kind": "question", "node": "draft", "prompt": "ship?", "ladder": {"on_timeout": {"default": "y"}}}),
        _asked(3, {"kind": "question", "node": "draft", "prompt": "name?"}),
        _interrupt(4, status="answered"),
        _asked(5, {"kind": "ask", "node": "agent", "prompt": "Drop the table?"}),  # a blocking ask, pending
    ]
    for interaction in asked:
        store.put_interaction(interaction.model_copy(update={"expires_at": due}))
    saved = client.scan(TableName=TABLE)["Items"]
    for attrs in saved:  # as saved before the all-pending (GSI3) and due (GSI4) indexes
        for name in ("GSI3PK", "GSI3SK", "GSI4PK", "GSI4SK"):
            attrs.pop(name, None)
    client.delete_table(TableName=TABLE)
    client.create_table(**create_table_kwargs(TABLE))
    persist.restore(TABLE, saved)
    core = Core(
        store=store,
        tokens=RecordingTaskTokens(),
        workflows=FakeWorkflows(),
        notifier=RecordingNotifier(),
        clock=FixedClock(),
    )
    index_key_migrations(core)
    loaded = {a["SK"]["S"]: a for a in client.scan(TableName=TABLE)["Items"]}
    keys = [
        tuple(loaded[f"INT#{i.interaction_id}"].get(name, {}).get("S") for name in ("GSI3PK", "GSI4PK", "GSI4SK"))
        for i in asked
    ]
    assert keys == [
        ("PENDING", "DUE#interrupt", f"{due}#{asked[0].interaction_id}"),
        ("PENDING", "DUE#question", f"{due}#{asked[1].interaction_id}"),
        ("PENDING", None, None),  # nothing happens at its deadline: no sweep reads it
        (None, None, None),  # not pending: no pending keys
        ("PENDING", "DUE#ask", f"{due}#{asked[4].interaction_id}"),  # the reconciler ends it (its agent died)
    ]
    first = loaded[f"INT#{asked[0].interaction_id}"]
    assert first["GSI3SK"] == first["GSI1SK"]


def test_a_restart_writes_nothing_to_items_that_already_have_their_due_keys(client: Any) -> None:
    """The local stack migrates its table at every restart: items written with their keys cost no write."""
    store = DynamoStore(TABLE, client)
    for n in (1, 2):
        store.put_interaction(_interrupt(n).model_copy(update={"expires_at": "2026-12-01T00:00:00.000Z"}))
    updates: list[str] = []
    client.meta.events.register("before-call.dynamodb.UpdateItem", lambda **_: updates.append("UpdateItem"))
    assert store.backfill_due() == 0
    assert updates == []
