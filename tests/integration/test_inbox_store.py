"""The inbox on the DynamoDB adapter (moto): the same pages as the in-memory fake, from Queries on the
sparse pending index only, and the first page of 1,000 pending questions across 100 runs in ONE Query
(what each item blocks is written on the item by the park that waits on it, not read from the waits)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from baton.adapters.dynamo import DynamoStore
from baton.contracts import AskRequest
from baton.contracts.inbox import InboxQuery
from baton.ids import iso
from baton.local.moto_fixes import atomic_dynamodb_writes
from baton.local.moto_scale import dynamodb_at_scale
from baton.models import Interaction, InteractionStatus, ParkedWait, PendingQuery, parse_request
from baton.runtime.migrations import index_key_migrations, mark_parked_blocks
from baton.services.core import Core
from baton.services.inbox import InboxService
from baton.services.questions import QuestionService
from baton.workflows.table import create_table_kwargs
from tests.conftest import FixedClock
from tests.fakes import FakeWorkflows, MemoryStore, RecordingNotifier, RecordingTaskTokens

KINDS = ("question", "interrupt", "ask", "review", "await")


@pytest.fixture
def dynamo(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[DynamoStore, list[dict[str, Any]]]]:
    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    # moto's transactions copy the whole table (quadratic over 1,000 puts): the local stack's scale fixes
    with mock_aws(), atomic_dynamodb_writes(), dynamodb_at_scale():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**create_table_kwargs("inbox-it"))
        queries: list[dict[str, Any]] = []
        client.meta.events.register(
            "provide-client-params.dynamodb.*",
            lambda params, model, **_: queries.append({"op": model.name, **params}),
        )
        yield DynamoStore("inbox-it", client), queries


def _interaction(n: int, clock: FixedClock, *, kind: str = "question", runs: int = 100) -> Interaction:
    request: dict[str, Any] = {"kind": kind, "node": f"node-{n % 7}", "prompt": f"question {n}?"}
    if kind == "interrupt":
        request["schema"] = {"type": "string"}
    claimed = "alice" if n % 5 == 0 else ("bob" if n % 5 == 1 else None)
    # a claim holds while its lease runs: most for a day, every 15th's lease ended a minute in
    lease = iso(clock.now() + timedelta(seconds=60 if n % 15 == 0 else 86400)) if claimed else None
    return Interaction(
        interaction_id=f"01I{n:023d}",
        run_id=f"run-{n % runs:03d}",
        created_at=iso(clock.now() + timedelta(seconds=n)),
        request=parse_request(request),
        state=InteractionStatus(claimed_by=claimed, lease_expires_at=lease),
    )


def _core(store: Any, clock: FixedClock) -> Core:
    return Core(
        store=store, tokens=RecordingTaskTokens(), workflows=FakeWorkflows(), notifier=RecordingNotifier(), clock=clock
    )


def _walk(service: InboxService, query: InboxQuery, caller: str = "alice") -> list[list[str]]:
    pages, token = [], None
    while True:
        page = service.page(query.model_copy(update={"next_token": token}), caller=caller)
        pages.append([item.id for item in page.items])
        token = page.next
        if token is None:
            return pages


def test_pages_match_the_in_memory_fake(dynamo: tuple[DynamoStore, list[dict[str, Any]]]) -> None:
    store, queries = dynamo
    clock, memory = FixedClock(), MemoryStore()
    for n in range(60):
        interaction = _interaction(n, clock, kind=KINDS[n % len(KINDS)], runs=6)
        store.put_interaction(interaction)
        memory.put_interaction(interaction)
    answered = _interaction(99, clock, runs=6).model_copy(update={"state": InteractionStatus(status="answered")})
    store.put_interaction(answered)
    memory.put_interaction(answered)
    clock.advance(60)
    real, fake = InboxService(_core(store, clock)), InboxService(_core(memory, clock))
    cases = [
        InboxQuery(limit=7),
        InboxQuery(limit=7, order="oldest"),
        InboxQuery(kinds=("question", "interrupt"), limit=4),
        InboxQuery(run_id="run-002", limit=3),
        InboxQuery(run_id="run-002", order="oldest", limit=3, kinds=("question",)),
        InboxQuery(node="node-3", limit=2),
        InboxQuery(claimed="me", limit=3),
        InboxQuery(claimed="unclaimed", limit=5, order="oldest"),
        InboxQuery(claimed="unclaimed", limit=6),
        InboxQuery(claimed="me", limit=4, order="oldest", kinds=("question", "review")),
        InboxQuery(min_age_s=45, limit=4),
        InboxQuery(min_age_s=45, limit=4, order="oldest", run_id="run-001"),
    ]
    for case in cases:
        expected = _walk(fake, case)
        assert _walk(real, case) == expected, case
        assert sum(len(p) for p in expected) == len({i for p in expected for i in p})  # no item twice
    assert answered.interaction_id not in {i for p in _walk(real, InboxQuery(limit=200)) for i in p}
    assert {q["op"] for q in queries} >= {"Query"} and "Scan" not in {q["op"] for q in queries}


def test_first_page_of_1000_pending_across_100_runs_is_one_query_of_the_pending_index(
    dynamo: tuple[DynamoStore, list[dict[str, Any]]],
) -> None:
    store, queries = dynamo
    clock = FixedClock()
    for n in range(1000):
        store.put_interaction(_interaction(n, clock))
    for r in range(100):  # every run's await gate waits on its questions (named in the wait, as a park does)
        run_id = f"run-{r:03d}"
        store.put_wait(
            ParkedWait(
                run_id=run_id,
                gate="await_answers",
                task_token=f"token-{r}",
                kind="await",
                interaction_ids=[f"01I{n:023d}" for n in range(r, 1000, 100)],
                parked_at=iso(clock.now()),
            )
        )
    clock.advance(2000)
    service = InboxService(_core(store, clock))
    queries.clear()
    page = service.page(InboxQuery(kinds=("question",), limit=50), caller="alice")
    assert [item.id for item in page.items] == [f"01I{n:023d}" for n in range(999, 949, -1)]
    assert page.next is not None and all(item.blocks.gate == "await_answers" for item in page.items)
    # ONE Query of the kind's partition: no read of the parked gates
    assert [(q["op"], q.get("IndexName")) for q in queries] == [("Query", "pending")]
    assert "PENDING#question" in str(queries[0]) and queries[0]["Limit"] == 52
    queries.clear()
    every_kind = service.page(InboxQuery(limit=50), caller="alice")
    assert [i.id for i in every_kind.items] == [i.id for i in page.items]
    # ONE Query of the all-pending index (GSI3) for every kind, and nothing else
    assert [(q["op"], q.get("IndexName")) for q in queries] == [("Query", "all_pending")]
    assert all(item.blocks.gate == "await_answers" for item in every_kind.items)
    assert "FilterExpression" not in queries[0] and queries[0]["Limit"] == 52
    queries.clear()
    two_kinds = service.page(InboxQuery(kinds=("question", "interrupt"), limit=50), caller="alice")
    assert [i.id for i in two_kinds.items] == [i.id for i in page.items]
    assert [(q["op"], q.get("IndexName")) for q in queries] == [("Query", "all_pending")]


def test_store_page_bounds_are_exclusive_after_and_inclusive_age(
    dynamo: tuple[DynamoStore, list[dict[str, Any]]],
) -> None:
    store, _ = dynamo
    clock = FixedClock()
    made = [_interaction(n, clock) for n in range(5)]
    for interaction in made:
        store.put_interaction(interaction)
    query = PendingQuery(limit=2)
    first, more = store.page_pending("question", query)
    assert [i.interaction_id for i in first] == [made[4].interaction_id, made[3].interaction_id] and more
    after = PendingQuery(limit=10, after=query.position(first[-1]))
    rest, more = store.page_pending("question", after)
    assert [i.interaction_id for i in rest] == [m.interaction_id for m in reversed(made[:3])] and not more
    aged, _ = store.page_pending("question", PendingQuery(limit=10, created_before=made[1].created_at))
    assert [i.interaction_id for i in aged] == [made[1].interaction_id, made[0].interaction_id]


def _blocks(store: DynamoStore, ids: list[str]) -> dict[str, str | None]:
    found = {i.interaction_id: i.blocks for i in store.page_all_pending(PendingQuery(limit=200))[0]}
    return {iid: found.get(iid) for iid in ids}


def test_what_an_item_blocks_is_on_the_item_whenever_the_question_was_asked(
    dynamo: tuple[DynamoStore, list[dict[str, Any]]],
) -> None:
    store, queries = dynamo
    clock = FixedClock()
    core = _core(store, clock)
    questions = QuestionService(core)
    before = questions.ask("run-a", AskRequest(node="draft", question="Before the park?"), caller="agent")[
        "interaction_id"
    ]
    other = questions.ask("run-a", AskRequest(node="review", question="Out of scope?"), caller="agent")[
        "interaction_id"
    ]
    # one asked between the park's read of its scope and its wait (its own read of the waits came first too)
    raced: list[str] = []
    put_wait = store.put_wait

    def racing_put_wait(wait: ParkedWait, **joined: Any) -> None:
        late = _interaction(7, clock, runs=1).model_copy(update={"run_id": "run-a"})
        late = late.model_copy(update={"request": parse_request({"kind": "question", "node": "draft", "prompt": "?"})})
        store.put_interaction(late)
        raced.append(late.interaction_id)
        put_wait(wait, **joined)

    store.put_wait = racing_put_wait  # type: ignore[method-assign]
    questions.park_gate(run_id="run-a", gate="await_draft", token="T-1", timeout_seconds=300, from_node="draft")
    store.put_wait = put_wait  # type: ignore[method-assign]
    after = questions.ask("run-a", AskRequest(node="draft", question="After the park?"), caller="agent")[
        "interaction_id"
    ]
    assert _blocks(store, [before, *raced, after, other]) == {
        before: "await_draft",  # named in the wait: marked in the park's own transaction
        raced[0]: "await_draft",  # missed by the park's first read: marked by its re-read
        after: "await_draft",  # asked while the gate is parked: marked by the ask
        other: None,  # not in the gate's scope
    }
    queries.clear()
    page = InboxService(core).page(InboxQuery(), caller="alice")
    assert [(q["op"], q.get("IndexName")) for q in queries] == [("Query", "all_pending")]
    assert {i.id: i.blocks.gate for i in page.items}[after] == "await_draft"


def test_a_park_marks_every_interaction_it_names_even_past_one_transaction(
    dynamo: tuple[DynamoStore, list[dict[str, Any]]],
) -> None:
    store, _ = dynamo
    clock = FixedClock()
    made = [_interaction(n, clock, runs=1) for n in range(150)]
    for interaction in made:
        store.put_interaction(interaction)
    named = [i.interaction_id for i in made] + ["01I-never-stored"]
    wait = ParkedWait(
        run_id="run-000", gate="g", task_token="t", kind="await", interaction_ids=named, parked_at=iso(clock.now())
    )
    store.put_wait(wait)
    assert set(_blocks(store, named[:-1]).values()) == {"g"}
    assert store.get_interaction("run-000", "01I-never-stored") is None  # no stub item made
    assert store.get_wait("run-000", "g") == wait


def test_backfill_and_the_local_load_write_what_saved_items_block(
    dynamo: tuple[DynamoStore, list[dict[str, Any]]],
) -> None:
    store, _ = dynamo
    clock = FixedClock()
    core = _core(store, clock)
    asked = [_interaction(n, clock, runs=1) for n in range(3)]
    for interaction in asked:
        store.put_interaction(interaction)
    store.put_wait(
        ParkedWait(
            run_id="run-000",
            gate="await_all",
            task_token="t",
            kind="await",
            interaction_ids=[asked[0].interaction_id],
            parked_at=iso(clock.now()),
        )
    )
    client = store._db
    ids = [i.interaction_id for i in asked]

    def as_stored_before_blocks() -> None:
        for iid in ids:
            key = {"PK": {"S": "RUN#run-000"}, "SK": {"S": f"INT#{iid}"}}
            client.update_item(TableName="inbox-it", Key=key, UpdateExpression="REMOVE blocks")
        assert set(_blocks(store, ids).values()) == {None}

    as_stored_before_blocks()
    index_key_migrations(core)  # what the local stack runs on the table it restored
    assert set(_blocks(store, ids).values()) == {"await_all"}
    as_stored_before_blocks()
    assert mark_parked_blocks(core) == 3  # the named one and the two of its scope
    assert set(_blocks(store, ids).values()) == {"await_all"}
