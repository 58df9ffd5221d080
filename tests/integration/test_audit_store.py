"""The decision log on the DynamoDB adapter (moto): every decision chained with its run's head in the
same write, concurrent decisions forming one chain, and records edited or deleted in the table (direct
UpdateItem / DeleteItem, as someone with table access would) named by verify."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from baton.contracts import AskRequest, CancelInterrupt, ClaimInterrupt, ResumeInterrupt
from baton.domain.interrupt_spec import InterruptSpec
from baton.events import InteractionAnswered
from baton.services.audit import AuditService
from baton.services.claims import ClaimService
from baton.workflows.table import TTL_ATTRIBUTE

if TYPE_CHECKING:
    from baton.contracts.audit import AuditRecordView
    from tests.integration.conftest import MotoStack

RUN = "audit-run"


def _decide(stack: MotoStack) -> None:
    """Two answers, a claim, a resume with state edits and a cancel on one run."""
    questions, interrupts = stack.services.questions, stack.services.interrupts
    for n in range(2):
        asked = questions.ask(RUN, AskRequest(node="draft", question=f"Q{n}?"), caller="agent")
        questions.answer(RUN, asked["interaction_id"], f"a{n}", caller="alice")
    first, _ = interrupts.create(InterruptSpec(session_id=RUN, prompt="Deploy?", state={"env": "dev"}), caller="agent")
    ClaimService(interrupts).claim(first.interaction_id, ClaimInterrupt(), operator="bob")
    interrupts.resume(first.interaction_id, ResumeInterrupt(input="yes", stateEdits=["env=prod"]), caller="bob")
    second, _ = interrupts.create(InterruptSpec(session_id=RUN, prompt="Again?"), caller="agent")
    interrupts.cancel(second.interaction_id, CancelInterrupt(reason="not today"), caller="carol")


def _records(stack: MotoStack) -> list[AuditRecordView]:
    return AuditService(stack.services.core.store).page(RUN, limit=500).records


def _key(record: AuditRecordView) -> dict[str, Any]:
    return {"PK": {"S": f"RUN#{record.run_id}"}, "SK": {"S": f"EVT#{record.event_id}"}}


def test_every_decision_is_chained_in_its_write_and_verifies(moto_stack: MotoStack) -> None:
    _decide(moto_stack)
    records = _records(moto_stack)
    assert [(r.seq, r.type) for r in records] == [
        (1, "interaction_answered"),
        (2, "interaction_answered"),
        (3, "interrupt_claimed"),
        (4, "interrupt_resumed"),
        (5, "interrupt_cancelled"),
    ]
    assert records[3].data["state_edits"] == ["env=prod"]
    verdict = AuditService(moto_stack.services.core.store).verify(RUN)
    assert verdict.valid and verdict.records == 5 and verdict.head_seq == 5 and verdict.head_hash == records[-1].hash
    # the head comes with the answer path's one Query, and a chained record never expires
    assert moto_stack.services.core.store.snapshot_run(RUN).audit_head.seq == 5  # type: ignore[union-attr]
    item = moto_stack.clients["dynamodb"].get_item(TableName=moto_stack.provisioned.table_name, Key=_key(records[0]))
    assert TTL_ATTRIBUTE not in item["Item"] and item["Item"]["hash"]["S"] == records[0].hash
    # the event log reads as before
    events = moto_stack.services.core.store.list_events(RUN)
    assert "seq" not in events[0].model_dump() and sum(e.type == "interaction_answered" for e in events) == 2


def test_a_record_edited_in_the_table_is_named_by_verify(moto_stack: MotoStack) -> None:
    _decide(moto_stack)
    claimed = _records(moto_stack)[2]
    forged = {**claimed.data, "by": "mallory"}
    moto_stack.clients["dynamodb"].update_item(
        TableName=moto_stack.provisioned.table_name,
        Key=_key(claimed),
        UpdateExpression="SET #d = :d",
        ExpressionAttributeNames={"#d": "data"},
        ExpressionAttributeValues={":d": {"S": json.dumps(forged)}},
    )
    verdict = AuditService(moto_stack.services.core.store).verify(RUN)
    bad = verdict.first_mismatch
    assert not verdict.valid and bad is not None
    assert (bad.seq, bad.event_id, bad.problem, bad.stored) == (3, claimed.event_id, "hash", claimed.hash)
    assert bad.expected != claimed.hash


def test_a_deleted_record_is_named_as_the_gap_and_a_deleted_last_one_through_the_head(moto_stack: MotoStack) -> None:
    _decide(moto_stack)
    records = _records(moto_stack)
    db, table = moto_stack.clients["dynamodb"], moto_stack.provisioned.table_name
    db.delete_item(TableName=table, Key=_key(records[-1]))
    bad = AuditService(moto_stack.services.core.store).verify(RUN).first_mismatch
    assert bad is not None and (bad.seq, bad.problem) == (5, "missing")
    db.delete_item(TableName=table, Key=_key(records[1]))
    bad = AuditService(moto_stack.services.core.store).verify(RUN).first_mismatch
    assert bad is not None and (bad.seq, bad.problem) == (2, "missing") and records[2].event_id in bad.stored


RACERS = 16


def test_concurrent_decisions_on_one_run_form_one_unbroken_chain(moto_stack: MotoStack) -> None:
    questions, interrupts = moto_stack.services.questions, moto_stack.services.interrupts
    asked = [questions.ask(RUN, AskRequest(node="draft", question=f"Q{n}?"), caller="agent") for n in range(RACERS)]
    created = [
        interrupts.create(InterruptSpec(session_id=RUN, prompt=f"I{n}?"), caller="agent")[0] for n in range(RACERS)
    ]

    def answer(n: int) -> None:  # the answer path (a transaction with the head from snapshot_run)
        questions.answer(RUN, asked[n]["interaction_id"], f"a{n}", caller=f"op-{n}")

    def claim(n: int) -> None:  # Core.record (the event and the head in their own transaction)
        ClaimService(interrupts).claim(created[n].interaction_id, ClaimInterrupt(), operator=f"op-{n}")

    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(answer, n) for n in range(RACERS)] + [pool.submit(claim, n) for n in range(RACERS)]
        for future in futures:
            future.result()
    records = _records(moto_stack)
    assert [r.seq for r in records] == list(range(1, 2 * RACERS + 1))  # no gap, no fork
    assert len({r.event_id for r in records}) == 2 * RACERS
    verdict = AuditService(moto_stack.services.core.store).verify(RUN)
    assert verdict.valid and verdict.head_seq == 2 * RACERS, verdict.first_mismatch


def test_a_decision_written_with_a_stale_head_chains_after_the_one_that_won(moto_stack: MotoStack) -> None:
    """The race made deterministic: the answer read the head, another decision advanced it, then the
    answer's transaction runs with the head it read: its head condition fails, it reads the head
    again and chains after the winner (seq 2, prev_hash = the winner's hash)."""
    questions, interrupts = moto_stack.services.questions, moto_stack.services.interrupts
    store = moto_stack.services.core.store
    asked = questions.ask(RUN, AskRequest(node="draft", question="Q?"), caller="agent")
    created, _ = interrupts.create(InterruptSpec(session_id=RUN, prompt="I?"), caller="agent")
    stale = store.snapshot_run(RUN)
    ClaimService(interrupts).claim(
        created.interaction_id, ClaimInterrupt(), operator="bob"
    )  # seq 1, after the snapshot
    [question] = [i for i in stale.pending if i.interaction_id == asked["interaction_id"]]
    core = moto_stack.services.core
    event = core.new_event(RUN, InteractionAnswered(interaction_id=question.interaction_id, node="draft", answer="pg"))
    store.transition_interaction(
        question,
        question.state.model_copy(update={"status": "answered", "answer": "pg", "answered_by": "alice"}),
        with_records=[event],
        audit_head=stale.audit_head,
    )
    claimed, answered = _records(moto_stack)
    assert (claimed.seq, claimed.type, answered.seq, answered.event_id) == (1, "interrupt_claimed", 2, event.event_id)
    assert answered.prev_hash == claimed.hash and AuditService(store).verify(RUN).valid


def test_a_decision_stored_before_the_chain_is_reported_unchained_not_skipped(moto_stack: MotoStack) -> None:
    """An `interaction_answered` item as the table held it before the chain existed (no seq, no hashes,
    a TTL) is read by verify and reported as unchained; the chain after it verifies."""
    db, table = moto_stack.clients["dynamodb"], moto_stack.provisioned.table_name
    db.put_item(
        TableName=table,
        Item={
            "PK": {"S": f"RUN#{RUN}"},
            "SK": {"S": "EVT#00000000000000000000000000"},
            "record": {"S": "event"},
            "event_id": {"S": "00000000000000000000000000"},
            "run_id": {"S": RUN},
            "type": {"S": "interaction_answered"},
            "at": {"S": "2020-01-01T00:00:00Z"},
            "data": {"S": json.dumps({"answer": "old", "by": "alice"})},
            TTL_ATTRIBUTE: {"N": "4102444800"},
        },
    )
    _decide(moto_stack)
    verdict = AuditService(moto_stack.services.core.store).verify(RUN)
    assert verdict.valid and verdict.records == 5, verdict.first_mismatch
    [note] = verdict.unchained
    assert note.event_id == "00000000000000000000000000" and note.type == "interaction_answered"
    assert note.message == "unchained (recorded before the chain began at seq 1)"
    assert [r.seq for r in _records(moto_stack)] == [1, 2, 3, 4, 5]  # export stays the chain
