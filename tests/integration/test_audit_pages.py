"""A page of the decision log reads what the page needs (moto, counted from each response's
`ScannedCount`, never timed): one consistent GetItem of the head and one consistent Query of the records'
copies (`AUD#<seq>`, in the run's partition, no index) after the cursor, whatever the run's history; its
cursor walks every record once. A record chained before the copies (none of its own) makes the page read
the chain whole, as before."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.adapters.dynamo_items import audit_record_sk
from baton.ids import UlidGenerator
from baton.models import Event
from baton.services.audit import AuditService

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

RUN = "audit-pages"
AT = "2026-01-01T00:00:00.000Z"


def _history(stack: MotoStack, decisions: int, others_each: int) -> list[Event]:
    """`decisions` chained decisions, each after `others_each` events that are not decisions."""
    store, ids = stack.services.core.store, UlidGenerator()
    chained = []
    for n in range(decisions):
        for _ in range(others_each):
            store.append_event(Event(event_id=ids.new_id(), run_id=RUN, type="human_input_requested", at=AT, data={}))
        decision = Event(event_id=ids.new_id(), run_id=RUN, type="interaction_answered", at=AT, data={"n": n, "m": 0})
        store.append_event(decision)
        chained.append(decision)
    return chained


def _recorded(stack: MotoStack) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    client = stack.services.core.store._db  # type: ignore[attr-defined]

    def read(parsed: Any, model: Any, **_: Any) -> None:
        calls.append({"op": model.name, "read": int(parsed.get("ScannedCount", 1 if parsed.get("Item") else 0))})

    client.meta.events.register("after-call.dynamodb.*", read)
    return calls


def test_an_audit_page_reads_its_records_and_the_head_whatever_the_history(moto_stack: MotoStack) -> None:
    chained = _history(moto_stack, decisions=25, others_each=8)
    service = AuditService(moto_stack.services.core.store)
    calls = _recorded(moto_stack)
    walked, after, pages = [], 0, 0
    while True:
        calls.clear()
        page = service.page(RUN, after=after, limit=10)
        # the head (GetItem) and one Query reading the page's records only: never the 225 events
        assert [(c["op"], c["read"]) for c in calls] == [("GetItem", 1), ("Query", len(page.records))]
        walked += [r.event_id for r in page.records]
        pages += 1
        if page.next is None:
            break
        after = page.next
    assert walked == [e.event_id for e in chained] and pages == 3
    assert [r.seq for r in service.page(RUN, after=20, limit=500).records] == [21, 22, 23, 24, 25]
    calls.clear()
    assert service.page(RUN, after=25).records == [] and [c["op"] for c in calls] == ["GetItem"]


def test_records_chained_before_their_copies_are_read_whole(moto_stack: MotoStack) -> None:
    chained = _history(moto_stack, decisions=6, others_each=2)
    store = moto_stack.services.core.store
    store._db.delete_item(  # type: ignore[attr-defined]  # record 3 as written before the copies
        TableName=moto_stack.provisioned.table_name,
        Key={"PK": {"S": f"RUN#{RUN}"}, "SK": {"S": audit_record_sk(3)}},
    )
    service = AuditService(store)
    first = service.page(RUN, limit=4)
    assert [r.seq for r in first.records] == [1, 2, 3, 4] and first.next == 4
    rest = service.page(RUN, after=4, limit=4)
    assert [r.event_id for r in first.records + rest.records] == [e.event_id for e in chained]
    assert rest.next is None


def test_the_copies_are_neither_events_nor_records_twice(moto_stack: MotoStack) -> None:
    chained = _history(moto_stack, decisions=4, others_each=1)
    store = moto_stack.services.core.store
    assert len(store.list_events(RUN, limit=100)) == 8  # the event log: each event once, no AUD# copy
    verdict = AuditService(store).verify(RUN)
    assert verdict.valid and verdict.records == verdict.head_seq == 4 and not verdict.unchained
    assert [r.event_id for r in AuditService(store).page(RUN).records] == [e.event_id for e in chained]


def test_a_copy_changed_apart_from_its_record_is_not_shown(moto_stack: MotoStack) -> None:
    chained = _history(moto_stack, decisions=3, others_each=0)
    store = moto_stack.services.core.store
    store._db.update_item(  # type: ignore[attr-defined]  # record 2's copy edited, its hash left as it was
        TableName=moto_stack.provisioned.table_name,
        Key={"PK": {"S": f"RUN#{RUN}"}, "SK": {"S": audit_record_sk(2)}},
        UpdateExpression="SET #data = :data",
        ExpressionAttributeNames={"#data": "data"},
        ExpressionAttributeValues={":data": {"S": '{"n": 1, "m": 0, "by": "mallory"}'}},
    )
    page = AuditService(store).page(RUN)
    assert [r.event_id for r in page.records] == [e.event_id for e in chained]
    assert page.records[1].data == {"n": 1, "m": 0}  # the record itself, read whole
