"""Review turns on the DynamoDB adapter (moto): one item each, read back in order, a taken n is a 409."""

from __future__ import annotations

import pytest

from baton.errors import ConflictError
from baton.events import ReviewStarted, ReviewTurnRecorded
from baton.models import Event, ReviewRequest, ReviewTurn, RunSummary
from tests.integration.conftest import MotoStack


def _turn(n: int, text: str = "hello") -> ReviewTurn:
    return ReviewTurn(
        run_id="r1",
        interaction_id="i1",
        n=n,
        role="companion" if n % 2 == 0 else "operator",
        text=text,
        at="2026-11-30T12:00:00.000Z",
        verdict={"decision": "approve", "confidence": 0.9, "blockers": []} if n % 2 == 0 else None,
    )


def test_turns_are_separate_items_read_back_in_order(moto_stack: MotoStack) -> None:
    store = moto_stack.services.core.store
    store.create_run(RunSummary(run_id="r1", created_at="t", updated_at="t"))
    # 24 turns of ~60 KB: ~1.4 MB of dialogue, far past the 400 KB item limit of a single item.
    big = "x" * 60_000
    for n in reversed(range(24)):  # written out of order on purpose
        store.put_turn(_turn(n, f"{n}:{big}"))
    store.put_turn(ReviewTurn(run_id="r1", interaction_id="i2", n=0, role="companion", text="other", at="t"))
    turns = store.list_turns("r1", "i1")
    assert [t.n for t in turns] == list(range(24))  # numeric order, not string order (n=10 after n=9)
    assert turns[10].text.startswith("10:") and turns[0].verdict == {
        "decision": "approve",
        "confidence": 0.9,
        "blockers": [],
    }
    assert [t.text for t in store.list_turns("r1", "i2")] == ["other"]
    with pytest.raises(ConflictError):
        store.put_turn(_turn(3))


def test_a_dialogue_begun_under_the_old_turn_keys_reads_back_whole(moto_stack: MotoStack) -> None:
    """Turns stored before they moved (SK=TURN#<iid>#<n>) are read with the ones stored after, in order."""
    store = moto_stack.services.core.store
    db = moto_stack.clients["dynamodb"]
    table = moto_stack.provisioned.table_name
    store.create_run(RunSummary(run_id="r1", created_at="t", updated_at="t"))
    for n in range(3):  # as the adapter wrote them before
        old = _turn(n, f"old {n}")
        item = {"PK": "RUN#r1", "SK": f"TURN#i1#{n:06d}", "record": "turn", "turn": old.model_dump_json()}
        db.put_item(TableName=table, Item={k: {"S": v} for k, v in item.items()})
    assert [t.text for t in store.list_turns("r1", "i1")] == ["old 0", "old 1", "old 2"]
    store.put_turn(_turn(3, "new 3"))
    store.put_turn(_turn(4, "new 4"))
    assert [t.n for t in store.list_turns("r1", "i1")] == [0, 1, 2, 3, 4]
    store.put_turn(ReviewTurn(run_id="r1", interaction_id="i3", n=0, role="companion", text="fresh", at="t"))
    assert [t.text for t in store.list_turns("r1", "i3")] == ["fresh"]
    assert [t.text for t in store.list_turns("r1", "i1")][2:] == ["old 2", "new 3", "new 4"]


def test_a_first_turn_stores_its_review_and_events_in_one_write_or_nothing(moto_stack: MotoStack) -> None:
    """`put_turn` with the new review and its events: all written; a taken n (or a stored review) writes
    none of them."""
    core = moto_stack.services.core
    store = core.store
    store.create_run(RunSummary(run_id="r1", created_at="t", updated_at="t"))
    review = core.new_interaction("r1", ReviewRequest(node="ship", prompt="Review?"), expires_at=None)
    turn = _turn(0).model_copy(update={"interaction_id": review.interaction_id})

    def event(n: int) -> Event:
        return core.new_event(
            "r1", ReviewTurnRecorded(gate="ship", interaction_id=review.interaction_id, n=n, role="companion", text="t")
        )

    first = [core.new_event("r1", ReviewStarted(gate="ship", interaction_id=review.interaction_id)), event(0)]
    store.put_turn(turn, review=review, events=first)
    assert store.get_interaction("r1", review.interaction_id) == review
    assert store.list_turns("r1", review.interaction_id) == [turn]
    assert [e.event_id for e in store.list_events("r1")] == [e.event_id for e in first]
    with pytest.raises(ConflictError):  # the review is there: nothing of this write lands
        store.put_turn(turn.model_copy(update={"n": 1}), review=review, events=[event(1)])
    with pytest.raises(ConflictError):  # turn 0 is taken: its event is not recorded
        store.put_turn(turn, events=[event(0)])
    assert len(store.list_turns("r1", review.interaction_id)) == 1 and len(store.list_events("r1")) == 2
