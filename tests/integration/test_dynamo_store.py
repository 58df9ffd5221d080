"""The DynamoDB adapter on moto: conditional writes decide every race; no Scan."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from baton.errors import ConflictError, NotFoundError
from baton.models import Interaction, InteractionStatus, Message, ParkedWait, RunSummary, parse_request
from tests.integration.conftest import MotoStack


def _interaction(run_id: str = "r1", iid: str = "i1", kind: str = "question") -> Interaction:
    return Interaction(
        interaction_id=iid,
        run_id=run_id,
        created_at="2026-11-30T12:00:00.000Z",
        request=parse_request({"kind": kind, "node": "draft", "prompt": "Which db?", "options": ["pg", "dynamo"]}),
    )


@pytest.fixture
def store(moto_stack: MotoStack) -> Any:
    store = moto_stack.services.core.store
    store.create_run(RunSummary(run_id="r1", created_at="t", updated_at="t"))
    return store


@pytest.fixture
def operations(moto_stack: MotoStack) -> list[str]:
    seen: list[str] = []
    client = moto_stack.services.core.store._db  # type: ignore[attr-defined]
    client.meta.events.register("before-call.dynamodb.*", lambda model, **_: seen.append(model.name))
    return seen


def test_run_create_is_conditional_and_update_checks_status(store: Any) -> None:
    with pytest.raises(ConflictError):
        store.create_run(RunSummary(run_id="r1", created_at="t", updated_at="t"))
    updated = store.update_run("r1", {"status": "running"}, allowed_from={"created"})
    assert updated.status == "running" and updated.version == 1
    with pytest.raises(ConflictError) as err:
        store.update_run("r1", {"status": "succeeded"}, allowed_from={"created"})
    assert err.value.details["current"]["status"] == "running"
    with pytest.raises(NotFoundError):
        store.update_run("ghost", {"status": "running"})


def test_interaction_request_and_status_round_trip(store: Any) -> None:
    store.put_interaction(_interaction())
    got = store.get_interaction("r1", "i1")
    assert got.request.options == ["pg", "dynamo"] and got.state.status == "pending" and got.state.version == 0
    assert [i.interaction_id for i in store.list_pending("question")] == ["i1"]
    assert [i.interaction_id for i in store.list_by_status("question", "pending", run_id="r1")] == ["i1"]
    answered = store.transition_interaction(got, InteractionStatus(status="answered", answer="pg", answered_by="a"))
    assert answered.state.version == 1
    assert store.list_pending("question") == []  # the sparse index entry is gone
    assert [i.interaction_id for i in store.list_by_status("question", "answered")] == ["i1"]


def test_twenty_racing_transitions_exactly_one_wins(store: Any) -> None:
    store.put_interaction(_interaction())
    read = store.get_interaction("r1", "i1")
    results: list[Any] = []
    barrier = threading.Barrier(20)

    def answer(n: int) -> None:
        barrier.wait()
        try:
            store.transition_interaction(read, InteractionStatus(status="answered", answer=f"a{n}"))
            results.append(("won", n))
        except ConflictError as err:
            results.append(("lost", err.details["interaction"]["answer"]))

    threads = [threading.Thread(target=answer, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [n for kind, n in results if kind == "won"]
    assert len(winners) == 1
    final = store.get_interaction("r1", "i1").state.answer
    assert final == f"a{winners[0]}"
    assert all(v == final for kind, v in results if kind == "lost")


def test_messages_drain_exactly_once_in_order(store: Any) -> None:
    for n in range(3):
        store.put_message(Message(message_id=f"m{n}", run_id="r1", node="draft", text=f"t{n}", created_at="t"))
    first = store.drain_messages("r1", "draft", drained_at="now")
    assert [m.text for m in first] == ["t0", "t1", "t2"]
    assert store.drain_messages("r1", "draft", drained_at="later") == []


def test_a_parked_gate_is_never_overwritten_by_another_token(store: Any) -> None:
    wait = ParkedWait(run_id="r1", gate="g", task_token="tok-1", kind="await", parked_at="t")
    store.put_wait(wait)
    store.put_wait(wait)  # the same registration again (a retried Lambda) is fine
    with pytest.raises(ConflictError, match="already parked"):
        store.put_wait(wait.model_copy(update={"task_token": "tok-2"}))
    assert store.get_wait("r1", "g").task_token == "tok-1"
    assert store.release_wait(wait, "released")
    store.put_wait(wait.model_copy(update={"task_token": "tok-2"}))  # a new round after release
    assert store.get_wait("r1", "g").task_token == "tok-2"


def test_wait_release_is_conditional_on_the_token(store: Any) -> None:
    wait = ParkedWait(run_id="r1", gate="g", task_token="tok", kind="ask", parked_at="t")
    store.put_wait(wait)
    assert [w.gate for w in store.list_parked()] == ["g"]
    stale = wait.model_copy(update={"task_token": "old"})
    assert store.release_wait(stale, "released") is False
    assert store.release_wait(wait, "released") is True
    assert store.release_wait(wait, "released") is False
    assert store.list_parked() == []


def test_no_scan_is_ever_issued(store: Any, operations: list[str]) -> None:
    store.put_interaction(_interaction())
    store.list_pending("question")
    store.list_by_status("question", "pending", run_id="r1")
    store.list_run_interactions("r1")
    store.list_events("r1")
    store.list_parked()
    assert operations and "Scan" not in operations


def test_update_run_with_none_clears_a_field(store: Any) -> None:
    store.update_run("r1", {"merged_into": "main", "merge_status": "merged"})
    cleared = store.update_run("r1", {"merged_into": None, "merge_status": "merged"})
    assert cleared.merged_into is None and cleared.merge_status == "merged"
    assert store.get_run("r1").merged_into is None


@pytest.mark.parametrize("store_kind", ["dynamo", "memory"])
def test_page_interactions_pages_by_status_and_by_run(store: Any, store_kind: str) -> None:
    from tests.fakes import MemoryStore

    target = store if store_kind == "dynamo" else MemoryStore()
    for n in range(5):
        target.put_interaction(_interaction("r1", f"i{n}", kind="interrupt"))
    target.put_interaction(_interaction("r1", "q1", kind="question"))  # another kind: never listed
    target.put_interaction(_interaction("r2", "j1", kind="interrupt"))

    def drain(**kw: Any) -> list[str]:
        seen: list[str] = []
        start = None
        while True:
            page, start = target.page_interactions("interrupt", limit=2, start=start, **kw)
            assert len(page) <= 2
            seen += [i.interaction_id for i in page]
            if start is None:
                return seen

    assert sorted(drain(run_id="r1")) == [f"i{n}" for n in range(5)]
    assert sorted(drain(status="pending")) == sorted([f"i{n}" for n in range(5)] + ["j1"])
    assert sorted(drain(status="pending", run_id="r2")) == ["j1"]
    with pytest.raises(ValueError):
        target.page_interactions("interrupt")


def test_an_answer_its_message_and_its_event_are_written_together_or_not_at_all(store: Any) -> None:
    from baton.models import Event

    store.put_interaction(_interaction())
    read = store.get_interaction("r1", "i1")

    def records(n: int) -> list[Any]:
        return [
            Message(message_id=f"m{n}", run_id="r1", node="draft", text=f"A{n}", created_at="t", interaction_id="i1"),
            Event(event_id=f"e{n}", run_id="r1", type="interaction_answered", at="2026-11-30T12:00:00.000Z"),
        ]

    store.transition_interaction(read, InteractionStatus(status="answered", answer="pg"), with_records=records(1))
    with pytest.raises(ConflictError) as lost:
        store.transition_interaction(read, InteractionStatus(status="answered", answer="dy"), with_records=records(2))
    assert lost.value.details["interaction"]["answer"] == "pg"
    # Only the winner's message and event exist: the loser's transaction wrote nothing.
    assert [m.text for m in store.drain_messages("r1", "draft", drained_at="now")] == ["A1"]
    assert [e.event_id for e in store.list_events("r1")] == ["e1"]


def test_a_release_records_its_if_moved_events_only_when_the_run_moved(moto_stack: MotoStack, store: Any) -> None:
    """Issue 28 item 11: `run_resumed` is written with the run's move, never for a run that was not paused
    (the release's transaction runs again without the move, and without the events that say it moved)."""
    from baton.events import AwaitReleased, RunResumed

    core = moto_stack.services.core
    # "ended": the send let the run finish before the release's bookkeeping: it did resume, and stays ended
    for gate, status, after in (
        ("not-paused", "running", "running"),
        ("paused", "paused_waiting_human", "running"),
        ("ended", "succeeded", "succeeded"),
    ):
        store.update_run("r1", {"status": status})
        wait = ParkedWait(run_id="r1", gate=gate, task_token=f"tok-{gate}", kind="await", parked_at="t")
        store.put_wait(wait)
        released = store.record_release(
            wait,
            run_status="running",
            run_from={"paused_waiting_human"},
            events=[core.new_event("r1", AwaitReleased(gate=gate, answers=0))],
            if_moved=[core.new_event("r1", RunResumed(gate=gate, kind="await"))],
        )
        assert released and store.get_run("r1").status == after
    types = [(e.type, e.data["gate"]) for e in store.list_events("r1") if e.type in ("await_released", "run_resumed")]
    assert types == [
        ("await_released", "not-paused"),
        ("await_released", "paused"),
        ("run_resumed", "paused"),
        ("await_released", "ended"),
        ("run_resumed", "ended"),
    ]


def test_a_runs_update_and_its_events_are_one_write_refused_whole(
    moto_stack: MotoStack, store: Any, operations: list[str]
) -> None:
    """`update_run_recording` (a merge's record, a tool await's resume): the run's update and its events,
    a decision chained after the head, in one transaction; a run elsewhere is refused whole."""
    from baton.events import ReviewMerged, RunResumed

    core = moto_stack.services.core
    store.update_run("r1", {"status": "running"})
    operations.clear()
    merged = core.new_event("r1", ReviewMerged(gate="g", merge_status="merged"))
    store.update_run_recording("r1", {"merge_status": "merged"}, events=[merged])
    assert operations == ["GetItem", "TransactWriteItems"]  # the chain head, then the one write
    assert store.get_run("r1").merge_status == "merged"
    assert store.read_audit("r1").head.seq == 1  # the decision chained
    resumed = core.new_event("r1", RunResumed(gate="await_answers", kind="await"))
    with pytest.raises(ConflictError):
        store.update_run_recording("r1", {"status": "running"}, events=[resumed], allowed_from={"paused_waiting_human"})
    with pytest.raises(ConflictError):
        store.update_run_recording("ghost", {"status": "running"}, events=[resumed])
    assert store.get_run("r1").version == 2 and store.get_run("ghost") is None
    assert [e.type for e in store.list_events("r1")] == ["review_merged"]  # the refused ones wrote nothing
