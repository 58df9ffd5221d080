"""Async questions and await gates on the in-memory store: every ordering of answer vs. park."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from baton.api.routes_questions import AwaitRequest
from baton.contracts import AskRequest, AwaitAnswered, AwaitPending
from baton.domain.questions import MAX_QUESTION_CHARS, answer_text
from baton.errors import (
    ConflictError,
    GoneError,
    NotFoundError,
    PayloadTooLargeError,
    ValidationFailedError,
)
from baton.models import status_of
from baton.services.core import Core
from baton.services.questions import QuestionService
from baton.services.reconciler import Reconciler
from baton.workflows.asl import check_definition
from baton.workflows.gate_states import await_gate_states
from tests.fakes import MemoryStore, RecordingTaskTokens


@pytest.fixture
def qs(core: Core) -> QuestionService:
    return QuestionService(core)


def _tokens(core: Core) -> RecordingTaskTokens:
    assert isinstance(core.tokens, RecordingTaskTokens)
    return core.tokens


def _store(core: Core) -> MemoryStore:
    assert isinstance(core.store, MemoryStore)
    return core.store


def _types(core: Core, run_id: str = "r1") -> list[str]:
    return [e.type for e in core.store.list_events(run_id)]


def test_ask_stores_a_pending_question_records_async_and_notifies(qs: QuestionService, core: Core) -> None:
    posted = qs.ask(
        "r1", AskRequest(node="draft", question="Which database?", options=["pg", "dynamo"]), caller="agent"
    )
    assert posted["message"] == "question posted; keep working" and posted["status"] == "pending"
    [pending] = qs.pending("r1")
    assert pending.request.kind == "question" and pending.request.allow_free_text is False
    requested = [e for e in core.store.list_events("r1") if e.type == "human_input_requested"]
    assert requested[0].data["async"] is True and requested[0].data["prompt"] == "Which database?"
    assert core.notifier.notifications[0].event == "human_input_requested"  # type: ignore[attr-defined]


def test_answer_queues_the_message_and_a_second_answer_is_409_with_the_winner(qs: QuestionService, core: Core) -> None:
    iid = qs.ask("r1", AskRequest(node="draft", question="Which database?", options=["pg", "dynamo"]), caller="a")[
        "interaction_id"
    ]
    result = qs.answer("r1", iid, "pg", caller="alice")
    assert result["queued"] is True and result["resumed"] is False
    with pytest.raises(ConflictError) as second:
        qs.answer("r1", iid, "dynamo", caller="bob")
    assert second.value.details["answer"] == "pg"
    assert core.store.get_interaction("r1", iid).state.answer == "pg"  # type: ignore[union-attr]
    [message] = qs.drain("r1", "draft")
    assert message.text == f'[Answer to question {iid}] Q: "Which database?" — A: pg'
    assert qs.drain("r1", "draft") == []
    answered = [e for e in core.store.list_events("r1") if e.type == "interaction_answered"]
    assert answered[0].data["answer"] == "pg" and answered[0].data["answer_text"] == "pg"


def test_non_string_answers_are_compact_json_in_the_message() -> None:
    assert answer_text({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    assert answer_text("as is") == "as is"


def test_bad_input_is_refused_and_changes_nothing(qs: QuestionService, core: Core) -> None:
    iid = qs.ask("r1", AskRequest(node="draft", question="Pick", options=["a", "b"]), caller="x")["interaction_id"]
    before = len(core.store.list_events("r1"))
    with pytest.raises(ValidationFailedError, match="one of the options"):
        qs.answer("r1", iid, "c", caller="op")
    for empty in ("", "   ", None, {}, []):
        with pytest.raises(ValidationFailedError, match="empty"):
            qs.answer("r1", iid, empty, caller="op")
    with pytest.raises(NotFoundError):
        qs.answer("r1", "nope", "a", caller="op")
    with pytest.raises(NotFoundError):
        qs.answer("ghost", iid, "a", caller="op")
    with pytest.raises(PayloadTooLargeError):
        qs.ask("r1", AskRequest(node="draft", question="x" * (MAX_QUESTION_CHARS + 1)), caller="x")
    with pytest.raises(ValidationFailedError, match="empty"):
        qs.ask("r1", AskRequest(node="draft", question="  "), caller="x")
    with pytest.raises(ValidationFailedError, match="free text"):
        qs.ask("r1", AskRequest(node="draft", question="?", options=[], allow_free_text=False), caller="x")
    with pytest.raises(ValidationFailedError, match="distinct"):
        qs.ask("r1", AskRequest(node="draft", question="?", options=["a", "a"]), caller="x")
    with pytest.raises(ValidationFailedError, match="node"):  # the request model is the door for names
        AskRequest(node="bad node!", question="?")
    assert len(core.store.list_events("r1")) == before
    assert [i.interaction_id for i in qs.pending("r1")] == [iid]
    assert qs.drain("r1", "draft") == []


def test_free_text_allowed_with_options_accepts_other_answers(qs: QuestionService) -> None:
    iid = qs.ask("r1", AskRequest(node="n", question="?", options=["a"], allow_free_text=True), caller="x")[
        "interaction_id"
    ]
    assert qs.answer("r1", iid, "something else", caller="op")["queued"] is True


def test_question_from_inside_a_map_iteration_is_refused_with_the_reason(qs: QuestionService, core: Core) -> None:
    with pytest.raises(ValidationFailedError) as err:
        qs.ask("r1", AskRequest(node="draft", question="?", map_item=3), caller="x")
    assert "replays ONE node id for every item" in err.value.message
    assert err.value.details["reason"] == "inside_map_iteration"
    assert core.store.get_run("r1") is None  # nothing was created


def test_gate_parks_then_the_last_answer_resumes_it_with_all_answers(qs: QuestionService, core: Core) -> None:
    a = qs.ask("r1", AskRequest(node="draft", question="Q1"), caller="x")["interaction_id"]
    b = qs.ask("r1", AskRequest(node="draft", question="Q2"), caller="x")["interaction_id"]
    parked = qs.park_gate(run_id="r1", gate="sync", token="tok-1", timeout_seconds=60)
    assert parked["released"] is False and parked["pending"] == [a, b]
    assert core.store.get_run("r1").status == "paused_waiting_human"  # type: ignore[union-attr]
    assert qs.answer("r1", a, "one", caller="op")["resumed"] is False
    assert _tokens(core).sent == []
    result = qs.answer("r1", b, {"two": 2}, caller="op")
    assert result["resumed"] is True and result["released"] == ["sync"]
    [(kind, token, output)] = _tokens(core).sent
    assert kind == "success" and token == "tok-1"
    assert output["answers"] == [
        {"interaction_id": a, "node": "draft", "question": "Q1", "answer": "one"},
        {"interaction_id": b, "node": "draft", "question": "Q2", "answer": {"two": 2}},
    ]
    assert core.store.get_run("r1").status == "running"  # type: ignore[union-attr]
    types = _types(core)
    assert "await_started" in types and types.count("await_released") == 1


def test_answer_before_park_releases_at_once_on_the_gates_recheck(qs: QuestionService, core: Core) -> None:
    a = qs.ask("r1", AskRequest(node="draft", question="Q1"), caller="x")["interaction_id"]
    qs.answer("r1", a, "early", caller="op")
    parked = qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    assert parked["released"] is True
    assert _tokens(core).sent[0][2]["answers"][0]["answer"] == "early"


def test_answer_landing_between_the_gates_read_and_its_park_is_not_lost(qs: QuestionService, core: Core) -> None:
    """The interleaving that loses resumes without the re-check: gate reads 'pending', answer stores and
    finds no parked gate, then the gate parks. The re-check after parking sees the answer."""
    a = qs.ask("r1", AskRequest(node="draft", question="Q1"), caller="x")["interaction_id"]
    store = _store(core)
    original_put_wait = store.put_wait

    def put_wait_after_an_answer(wait: Any, **joined: Any) -> None:
        qs.answer("r1", a, "racing", caller="op")  # lands before the token is parked
        original_put_wait(wait, **joined)

    store.put_wait = put_wait_after_an_answer  # type: ignore[method-assign]
    parked = qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    assert parked["released"] is True and len(_tokens(core).sent) == 1


def test_scoped_from_waits_only_for_that_nodes_questions(qs: QuestionService, core: Core) -> None:
    d = qs.ask("r1", AskRequest(node="draft", question="D?"), caller="x")["interaction_id"]
    r = qs.ask("r1", AskRequest(node="research", question="R?"), caller="x")["interaction_id"]
    qs.park_gate(run_id="r1", gate="g-draft", token="t-draft", timeout_seconds=60, from_node="draft")
    qs.park_gate(run_id="r1", gate="g-all", token="t-all", timeout_seconds=60)
    assert qs.answer("r1", d, "d", caller="op")["released"] == ["g-draft"]
    assert [t for _, t, _ in _tokens(core).sent] == ["t-draft"]
    expected = [{"interaction_id": d, "node": "draft", "question": "D?", "answer": "d"}]
    assert _tokens(core).sent[0][2]["answers"] == expected
    assert qs.answer("r1", r, "r", caller="op")["released"] == ["g-all"]


def test_failed_send_is_recovered_by_the_reconciler_exactly_once(qs: QuestionService, core: Core) -> None:
    a = qs.ask("r1", AskRequest(node="draft", question="Q1"), caller="x")["interaction_id"]
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    _tokens(core).fail_next = RuntimeError("Step Functions throttled")
    result = qs.answer("r1", a, "stored anyway", caller="op")
    assert result["queued"] is True and result["resumed"] is False
    assert core.store.get_interaction("r1", a).state.status == "answered"  # type: ignore[union-attr]
    reconciler = Reconciler(core)
    assert reconciler.reconcile().wire()["released"] == [{"run_id": "r1", "gate": "sync", "kind": "await"}]
    assert reconciler.reconcile()["released"] == []  # nothing left parked: no second resume
    assert len(_tokens(core).sent) == 1 and _types(core).count("await_released") == 1


def test_concurrent_senders_resume_once(qs: QuestionService, core: Core) -> None:
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)  # nothing pending: released
    assert Reconciler(core).reconcile()["released"] == []
    a = qs.ask("r1", AskRequest(node="draft", question="Q"), caller="x")["interaction_id"]
    qs.park_gate(run_id="r1", gate="sync2", token="tok2", timeout_seconds=60)
    core.store.transition_interaction(
        core.store.get_interaction("r1", a),  # type: ignore[arg-type]
        core.store.get_interaction("r1", a).state.model_copy(update={"status": "answered", "answer": "x"}),  # type: ignore[union-attr]
    )
    threads = [threading.Thread(target=Reconciler(core).reconcile) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [t for _, t, _ in _tokens(core).sent] == ["tok", "tok2"]
    assert _types(core).count("await_released") == 2


def test_twenty_concurrent_answers_exactly_one_wins(qs: QuestionService, core: Core) -> None:
    iid = qs.ask("r1", AskRequest(node="draft", question="Q"), caller="x")["interaction_id"]
    barrier = threading.Barrier(20)
    outcomes: list[Any] = []

    def go(n: int) -> None:
        barrier.wait()
        try:
            qs.answer("r1", iid, f"a{n}", caller=f"op{n}")
            outcomes.append(("won", f"a{n}"))
        except ConflictError as err:
            outcomes.append(("lost", err.details["answer"]))

    threads = [threading.Thread(target=go, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [a for k, a in outcomes if k == "won"]
    assert len(winners) == 1 and all(a == winners[0] for _, a in outcomes)
    assert len(qs.drain("r1", "draft")) == 1


def test_gate_timeout_lists_the_unanswered_questions(qs: QuestionService, core: Core) -> None:
    a = qs.ask("r1", AskRequest(node="draft", question="Still needed?"), caller="x")["interaction_id"]
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=5, from_node="draft")
    result = qs.record_gate_timeout("r1", "sync")
    assert [u.model_dump() for u in result.unanswered] == [
        {"interaction_id": a, "node": "draft", "question": "Still needed?"}
    ]
    assert "timed out after 5s" in result["cause"] and a in result["cause"] and "Still needed?" in result["cause"]
    event = next(e for e in core.store.list_events("r1") if e.type == "await_timed_out")
    assert event.data["unanswered"][0]["interaction_id"] == a
    assert core.store.get_run("r1").status == "failed"  # type: ignore[union-attr]
    assert core.store.get_wait("r1", "sync").status == "timed_out"  # type: ignore[union-attr]


def test_answer_after_the_gate_timed_out_is_410_and_kept_as_late(qs: QuestionService, core: Core) -> None:
    # Issue 17 (one clock): past the await gate's deadline the answer is refused with a 410 (it used to
    # be a 200 `resumed: false` while the run failed) and kept as an `answer_late` event.
    a = qs.ask("r1", AskRequest(node="draft", question="Q"), caller="x")["interaction_id"]
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=5)
    core.clock.advance(6)  # type: ignore[attr-defined]
    with pytest.raises(GoneError, match="deadline"):
        qs.answer("r1", a, "late", caller="op")
    assert core.store.get_interaction("r1", a).state.status == "pending"  # type: ignore[union-attr]
    late = [e for e in core.store.list_events("r1") if e.type == "answer_late"]
    assert len(late) == 1 and late[0].data["answer"] == "late"
    # The gate's own timeout path (await_timeout, or Baton's deadline) marks the wait.
    assert core.store.get_wait("r1", "sync").status == "parked"  # type: ignore[union-attr]


def test_map_gate_names_are_per_item(qs: QuestionService, core: Core) -> None:
    d = qs.ask("r1", AskRequest(node="draft", question="D?"), caller="x")["interaction_id"]
    qs.ask("r1", AskRequest(node="research", question="R?"), caller="x")
    qs.park_gate(run_id="r1", gate="item", token="t0", timeout_seconds=60, from_node="research", map_item=0)
    qs.park_gate(run_id="r1", gate="item", token="t1", timeout_seconds=60, from_node="draft", map_item=1)
    assert qs.answer("r1", d, "go", caller="op")["released"] == ["item-1"]
    assert core.store.get_wait("r1", "item-0").status == "parked"  # type: ignore[union-attr]
    timed_out = qs.record_gate_timeout("r1", "item", map_item=0)
    assert "item-0" in timed_out["cause"] and core.store.get_run("r1").status != "failed"  # type: ignore[union-attr]


def test_tool_form_200_when_answered_else_pending_and_last_answer_resumes(qs: QuestionService, core: Core) -> None:
    with pytest.raises(NotFoundError):
        qs.await_tool("ghost", AwaitRequest(timeout_seconds=60), caller="agent")
    a = qs.ask("r1", AskRequest(node="draft", question="Q"), caller="x")["interaction_id"]
    result = qs.await_tool("r1", AwaitRequest(timeout_seconds=60), caller="agent")
    assert isinstance(result, AwaitPending) and result.pending == [a]
    assert core.store.get_run("r1").status == "paused_waiting_human"  # type: ignore[union-attr]
    second = qs.await_tool("r1", AwaitRequest(timeout_seconds=60), caller="agent")
    assert (
        isinstance(second, AwaitPending) and second["interaction_id"] == result["interaction_id"]
    )  # reused, not a new await
    assert qs.answer("r1", a, "yes", caller="op")["released"] == [f"tool:{result['interaction_id']}"]
    assert core.store.get_run("r1").status == "running"  # type: ignore[union-attr]
    answered = qs.await_tool("r1", AwaitRequest(timeout_seconds=60), caller="agent")
    assert isinstance(answered, AwaitAnswered) and answered.answers[0].answer == "yes"
    with pytest.raises(ValidationFailedError, match="Map iteration"):
        qs.await_tool("r1", AwaitRequest(timeout_seconds=60, map_item=0), caller="agent")
    with pytest.raises(ValidationFailedError, match="timeout"):  # the request model is the door for bounds
        AwaitRequest(timeout_seconds=0)


def test_a_200_from_the_tool_await_never_leaves_the_run_paused(qs: QuestionService, core: Core) -> None:
    """The answer is stored before its request completes the tool await: a poll in that gap gets the
    answers, and it must not leave the run marked paused_waiting_human behind it."""
    a = qs.ask("r1", AskRequest(node="draft", question="Q"), caller="x")["interaction_id"]
    waiting = qs.await_tool("r1", AwaitRequest(timeout_seconds=60), caller="agent")
    question = core.store.get_interaction("r1", a)
    assert question is not None
    # The answer's conditional write has landed; its completion of the tool await has not run yet.
    core.store.transition_interaction(question, status_of(question.state, "answered", answer="yes", by="op", at="t"))
    result = qs.await_tool("r1", AwaitRequest(timeout_seconds=60), caller="agent")
    assert isinstance(result, AwaitAnswered) and result.answers[0].answer == "yes"
    assert core.store.get_run("r1").status == "running"  # type: ignore[union-attr]
    awaiting = core.store.get_interaction("r1", waiting["interaction_id"])
    assert awaiting is not None and awaiting.state.status == "answered"


def test_tool_await_times_out_through_the_reconciler(qs: QuestionService, core: Core, clock: Any) -> None:
    a = qs.ask("r1", AskRequest(node="draft", question="Q"), caller="x")["interaction_id"]
    result = qs.await_tool("r1", AwaitRequest(timeout_seconds=30), caller="agent")
    reconciler = Reconciler(core)
    assert reconciler.reconcile()["timed_out"] == []
    clock.advance(31)
    assert reconciler.reconcile()["timed_out"] == [result["interaction_id"]]
    event = next(e for e in core.store.list_events("r1") if e.type == "await_timed_out")
    assert event.data["unanswered"][0]["interaction_id"] == a


def test_answering_a_finished_hosted_run_is_410(qs: QuestionService, core: Core) -> None:
    a = qs.ask("r1", AskRequest(node="draft", question="Q"), caller="x")["interaction_id"]
    core.store.update_run("r1", {"status": "failed", "hosted": True})
    with pytest.raises(GoneError):
        qs.answer("r1", a, "too late", caller="op")
    with pytest.raises(ConflictError):
        qs.ask("r1", AskRequest(node="draft", question="more?"), caller="x")


def test_await_gate_snippet_passes_the_asl_rule() -> None:
    states = await_gate_states("Sync", gate="sync", from_node="draft", timeout_seconds=1800, next="Ship")
    definition = {"StartAt": "Sync", "States": {**states, "Ship": {"Type": "Succeed"}}}
    assert check_definition(definition, "snippet") == []
    with pytest.raises(ValueError, match="must end"):
        await_gate_states("Sync", gate="sync", next=None)


def test_a_tool_await_completed_leaves_the_run_paused_while_another_still_waits(
    qs: QuestionService, core: Core
) -> None:
    """Two tool awaits on one run (each its own node's questions): the first completed does not resume
    the run the second still holds paused; the second's completion does."""
    a = qs.ask("r1", AskRequest(node="a", question="Qa"), caller="x")["interaction_id"]
    b = qs.ask("r1", AskRequest(node="b", question="Qb"), caller="x")["interaction_id"]
    on_a = qs.await_tool("r1", AwaitRequest.model_validate({"timeout_seconds": 60, "from": "a"}), caller="agent")
    on_b = qs.await_tool("r1", AwaitRequest.model_validate({"timeout_seconds": 60, "from": "b"}), caller="agent")
    assert isinstance(on_a, AwaitPending) and isinstance(on_b, AwaitPending)
    assert qs.answer("r1", a, "yes", caller="op")["released"] == [f"tool:{on_a.interaction_id}"]
    assert core.store.get_run("r1").status == "paused_waiting_human"  # type: ignore[union-attr]
    assert "run_resumed" not in _types(core)
    qs.answer("r1", b, "no", caller="op")
    assert core.store.get_run("r1").status == "running"  # type: ignore[union-attr]
    assert _types(core).count("run_resumed") == 1
