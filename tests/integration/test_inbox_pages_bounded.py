"""Every inbox page is O(page) on the DynamoDB adapter (moto): what each Query reads is counted from its
response (`ScannedCount`), never timed. The node filter is a key condition (the `pending_by_node` index,
GSI5), so a rare node's page reads only its own items; the claim filters stay filters (a lease ends with
time, so no key says "held now"), and a filtered page stops after `FILTERED_READ_BUDGET` items read with a
cursor past what it read: walking the cursor still lists every match exactly once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.adapters import dynamo_interaction_reads
from baton.adapters.dynamo import DynamoStore
from baton.contracts.inbox import InboxQuery
from baton.ids import iso
from baton.local.moto_fixes import atomic_dynamodb_writes
from baton.local.moto_scale import dynamodb_at_scale
from baton.models import Interaction, InteractionStatus, PendingQuery, parse_request
from baton.services.core import Core
from baton.services.inbox import InboxService
from baton.workflows.table import NODE_PK_ATTRIBUTE, NODE_SK_ATTRIBUTE, create_table_kwargs
from tests.conftest import FixedClock
from tests.fakes import FakeWorkflows, MemoryStore, RecordingNotifier, RecordingTaskTokens

BUDGET = 30  # FILTERED_READ_BUDGET, small here so that a few hundred items show the cut


@pytest.fixture
def dynamo(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[DynamoStore, list[dict[str, Any]]]]:
    """The store and, per Query, its arguments and the items it read (`ScannedCount`)."""
    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setattr(dynamo_interaction_reads, "FILTERED_READ_BUDGET", BUDGET)
    with mock_aws(), atomic_dynamodb_writes(), dynamodb_at_scale():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**create_table_kwargs("bounded-it"))
        queries: list[dict[str, Any]] = []

        def sent(params: Any, model: Any, **_: Any) -> None:
            if model.name == "Query":
                queries.append({"params": dict(params)})

        def read(parsed: Any, model: Any, **_: Any) -> None:
            if model.name == "Query":
                queries[-1]["scanned"] = int(parsed["ScannedCount"])

        client.meta.events.register("provide-client-params.dynamodb.*", sent)
        client.meta.events.register("after-call.dynamodb.*", read)
        yield DynamoStore("bounded-it", client), queries


def _interaction(n: int, clock: FixedClock, *, node: str, kind: str = "question", claimed: bool = False) -> Interaction:
    request: dict[str, Any] = {"kind": kind, "node": node, "prompt": f"question {n}?"}
    lease = iso(clock.now() + timedelta(days=1))
    return Interaction(
        interaction_id=f"01I{n:023d}",
        run_id=f"run-{n % 3:03d}",
        created_at=iso(clock.now() + timedelta(seconds=n)),
        request=parse_request(request),
        state=InteractionStatus(claimed_by="alice", lease_expires_at=lease) if claimed else InteractionStatus(),
    )


def _seed(stores: tuple[Any, ...], clock: FixedClock, count: int, *, rare: set[int], claimed: set[int]) -> None:
    for n in range(count):
        node = "rare" if n in rare else f"node-{n % 4}"
        kind = "ask" if n % 2 else "question"
        for store in stores:
            store.put_interaction(_interaction(n, clock, node=node, kind=kind, claimed=n in claimed))
    clock.advance(count + 60)


def _core(store: Any, clock: FixedClock) -> Core:
    return Core(
        store=store, tokens=RecordingTaskTokens(), workflows=FakeWorkflows(), notifier=RecordingNotifier(), clock=clock
    )


def _walk(service: InboxService, query: InboxQuery) -> list[list[str]]:
    pages, token = [], None
    while True:
        page = service.page(query.model_copy(update={"next_token": token}), caller="alice")
        pages.append([item.id for item in page.items])
        token = page.next
        if token is None:
            return pages


def test_a_rare_node_page_reads_only_that_nodes_items(dynamo: tuple[DynamoStore, list[dict[str, Any]]]) -> None:
    store, queries = dynamo
    clock = FixedClock()
    _seed((store,), clock, 200, rare={7, 99, 150}, claimed=set())
    service = InboxService(_core(store, clock))
    queries.clear()
    page = service.page(InboxQuery(node="rare", limit=10), caller="alice")
    assert [i.id for i in page.items] == [f"01I{n:023d}" for n in (150, 99, 7)] and page.next is None
    # one Query of the node's partition (the node a key, not a filter): 3 items read of 200 pending
    assert [(q["params"]["IndexName"], q["scanned"]) for q in queries] == [("pending_by_node", 3)]
    assert "#node" not in q_names(queries[0])
    queries.clear()
    one_kind = service.page(InboxQuery(kinds=("question",), node="node-2", limit=10), caller="alice")
    assert len(one_kind.items) == 10 and one_kind.next is not None
    assert [q["params"]["IndexName"] for q in queries] == ["pending_by_node"]
    assert all(q["scanned"] <= 10 + 2 for q in queries)


def q_names(query: dict[str, Any]) -> set[str]:
    return set(query["params"].get("ExpressionAttributeNames", {}))


def test_a_filtered_page_reads_at_most_the_budget_and_its_cursor_walks_every_match_once(
    dynamo: tuple[DynamoStore, list[dict[str, Any]]],
) -> None:
    store, queries = dynamo
    clock, memory = FixedClock(), MemoryStore()
    claimed = {3, 120, 121, 260}
    _seed((store, memory), clock, 300, rare=set(), claimed=claimed)
    real, fake = InboxService(_core(store, clock)), InboxService(_core(memory, clock))
    cases = [
        InboxQuery(claimed="me", limit=5),
        InboxQuery(claimed="me", limit=2, order="oldest"),
        InboxQuery(claimed="me", kinds=("question",), limit=5),
        InboxQuery(claimed="me", kinds=("question", "ask"), run_id="run-000", limit=1),
        InboxQuery(claimed="me", kinds=("question", "ask"), run_id="run-000", limit=1, order="oldest"),
        InboxQuery(claimed="unclaimed", kinds=("question", "ask"), run_id="run-001", limit=40),
        InboxQuery(node="node-1", claimed="me", limit=3),
    ]
    for case in cases:
        queries.clear()
        pages = _walk(real, case)
        listed = [i for p in pages for i in p]
        expected = [i for p in _walk(fake, case) for i in p]
        assert listed == expected, case  # every match, in order, exactly once
        assert all(len(p) <= case.limit for p in pages)
        # each Query reads at most the page and two more; each page stops once it has read the budget
        assert all(q["scanned"] <= case.limit + 2 for q in queries), case
        per_page = BUDGET + case.limit + 2
        per_kind = 2 if case.run_id is not None and len(case.kinds) > 1 else 1
        assert sum(q["scanned"] for q in queries) <= len(pages) * per_page * per_kind, case
    # the rare claims: the newest (260) is 40 items down, past the budget: the first page is empty, with a
    # cursor past what it read (not all 300 read at once); the next one finds it
    queries.clear()
    first = real.page(InboxQuery(claimed="me", limit=5), caller="alice")
    assert first.items == [] and first.next is not None
    assert BUDGET <= sum(q["scanned"] for q in queries) <= BUDGET + 5 + 2
    second = real.page(InboxQuery(claimed="me", limit=5, next_token=first.next), caller="alice")
    assert [i.id for i in second.items] == [f"01I{260:023d}"]


def test_pending_items_without_node_keys_get_them_from_the_backfill(
    dynamo: tuple[DynamoStore, list[dict[str, Any]]],
) -> None:
    store, _ = dynamo
    clock = FixedClock()
    _seed((store,), clock, 4, rare={2}, claimed=set())
    old = _interaction(2, clock, node="rare")
    store._db.update_item(  # written before the node index: no GSI5 keys
        TableName="bounded-it",
        Key={"PK": {"S": f"RUN#{old.run_id}"}, "SK": {"S": f"INT#{old.interaction_id}"}},
        UpdateExpression=f"REMOVE {NODE_PK_ATTRIBUTE}, {NODE_SK_ATTRIBUTE}",
    )
    assert store.page_all_pending(PendingQuery(node="rare")).items == []
    assert store.backfill_all_pending(("question", "ask")) == 1
    assert [i.interaction_id for i in store.page_all_pending(PendingQuery(node="rare")).items] == [old.interaction_id]
    assert store.backfill_all_pending(("question", "ask")) == 0
