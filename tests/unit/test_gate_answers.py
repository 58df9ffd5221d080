"""An await gate's answers carried on its wait (`baton/domain/gate_answers.py`), on the in-memory store:
the last answer sends the gate's output without reading the scope, and every ordering that could leave
the carried answers short falls back to the read (or decides again) instead of sending a short output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest
from baton.domain import gate_answers
from baton.domain.ladder import Ladder
from baton.ports import StillPending
from baton.services.at_deadline import end_at_deadline
from baton.services.questions import AwaitDeadline, QuestionService
from tests.fakes import MemoryStore, RecordingTaskTokens

if TYPE_CHECKING:
    from baton.services.core import Core


@pytest.fixture
def qs(core: Core) -> QuestionService:
    return QuestionService(core)


def _store(core: Core) -> MemoryStore:
    assert isinstance(core.store, MemoryStore)
    return core.store


def _sent(core: Core) -> list[tuple[str, str, Any]]:
    assert isinstance(core.tokens, RecordingTaskTokens)
    return core.tokens.sent


def _count_scope_reads(core: Core) -> list[str]:
    """The run ids of every read of a run's questions from now on (the read the carry saves; not the
    fake's snapshot, which lists the pending ones)."""
    store, reads = _store(core), []
    original = store.list_run_interactions

    def counted(run_id: str, **kwargs: Any) -> Any:
        if kwargs.get("status") is None:
            reads.append(run_id)
        return original(run_id, **kwargs)

    store.list_run_interactions = counted  # type: ignore[method-assign]
    return reads


def _ask(qs: QuestionService, question: str, node: str = "draft", **kwargs: Any) -> str:
    return qs.ask("r1", AskRequest(node=node, question=question, **kwargs), caller="agent").interaction_id


def _answers(core: Core) -> list[tuple[str, Any]]:
    [(_kind, _token, output)] = _sent(core)
    return [(a["question"], a["answer"]) for a in output["answers"]]


def test_the_last_answer_sends_the_carried_answers_without_reading_the_scope(qs: QuestionService, core: Core) -> None:
    early = _ask(qs, "Q1")
    qs.answer("r1", early, "before the park", caller="op")
    second, third = _ask(qs, "Q2"), _ask(qs, "Q3")
    _ask(qs, "elsewhere?", node="research")  # outside the gate's scope: never in its output
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60, from_node="draft")
    wait = core.store.get_wait("r1", "sync")
    assert wait is not None and wait.carry == "complete" and list(wait.answers) == [early]  # the park's merge
    qs.answer("r1", second, {"two": 2}, caller="op")
    reads = _count_scope_reads(core)
    result = qs.answer("r1", third, "three", caller="op")
    assert result["released"] == ["sync"] and reads == []
    assert _answers(core) == [("Q1", "before the park"), ("Q2", {"two": 2}), ("Q3", "three")]
    released = core.store.get_wait("r1", "sync")
    assert released is not None and released.status == "released" and released.answers == {}


def test_an_answer_that_never_saw_the_wait_is_merged_by_the_parks_recheck(qs: QuestionService, core: Core) -> None:
    """An answer landing between the park's read and its wait: it carried nothing (no wait to carry
    onto), so the park's re-check, reading after the wait, merges it before the carry counts as whole."""
    first, second = _ask(qs, "Q1"), _ask(qs, "Q2")
    store = _store(core)
    original_put_wait = store.put_wait

    def put_wait_after_an_answer(wait: Any, **joined: Any) -> None:
        qs.answer("r1", first, "racing", caller="op")
        original_put_wait(wait, **joined)

    store.put_wait = put_wait_after_an_answer  # type: ignore[method-assign]
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    store.put_wait = original_put_wait  # type: ignore[method-assign]
    reads = _count_scope_reads(core)
    assert qs.answer("r1", second, "two", caller="op")["released"] == ["sync"] and reads == []
    assert _answers(core) == [("Q1", "racing"), ("Q2", "two")]


def test_before_the_parks_merge_the_last_answer_reads_the_scope(qs: QuestionService, core: Core) -> None:
    """A carry still filling (the park's re-check not done) is not trusted: the release reads."""
    first, second = _ask(qs, "Q1"), _ask(qs, "Q2")
    qs.answer("r1", first, "one", caller="op")
    store = _store(core)
    store.merge_carried = lambda *_a, **_k: False  # type: ignore[method-assign]  # the park dies before its merge
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    assert store.get_wait("r1", "sync").carry == "filling"  # type: ignore[union-attr]
    reads = _count_scope_reads(core)
    assert qs.answer("r1", second, "two", caller="op")["released"] == ["sync"] and reads == ["r1"]
    assert _answers(core) == [("Q1", "one"), ("Q2", "two")]


def test_a_question_asked_while_the_last_answer_decides_holds_the_gate(qs: QuestionService, core: Core) -> None:
    """The last answer read the run, then a question joined the scope before its write: its write is
    refused by the run's ask count, it reads again, sees the new question pending and releases nothing."""
    only = _ask(qs, "Q1")
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    store = _store(core)
    original = store.snapshot_run
    joined: list[str] = []

    def snapshot_then_a_question(run_id: str) -> Any:
        snapshot = original(run_id)
        if not joined:
            joined.append(_ask(qs, "Q2"))
        return snapshot

    store.snapshot_run = snapshot_then_a_question  # type: ignore[method-assign]
    result = qs.answer("r1", only, "one", caller="op")
    assert result["resumed"] is False and _sent(core) == []
    store.snapshot_run = original  # type: ignore[method-assign]
    assert qs.answer("r1", joined[0], "two", caller="op")["released"] == ["sync"]
    assert _answers(core) == [("Q1", "one"), ("Q2", "two")]


def test_a_declared_default_is_carried_like_an_answer(qs: QuestionService, core: Core) -> None:
    defaulted = _ask(qs, "Q1", timeout_seconds=30, on_timeout={"default": "yes"})
    last = _ask(qs, "Q2")
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    assert qs.take_default("r1", defaulted) is True
    reads = _count_scope_reads(core)
    assert qs.answer("r1", last, "two", caller="op")["released"] == ["sync"] and reads == []
    assert _answers(core) == [("Q1", "yes"), ("Q2", "two")]


def test_a_carry_past_its_limit_stops_and_the_release_reads_the_scope(
    qs: QuestionService, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _ask(qs, "Q1"), _ask(qs, "Q2")
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    monkeypatch.setattr(gate_answers, "CARRY_LIMIT_BYTES", 100)
    qs.answer("r1", first, "x" * 200, caller="op")  # too large to carry: the wait stops carrying
    assert core.store.get_wait("r1", "sync").carry == "off"  # type: ignore[union-attr]
    reads = _count_scope_reads(core)
    assert qs.answer("r1", second, "two", caller="op")["released"] == ["sync"] and reads == ["r1"]
    assert _answers(core) == [("Q1", "x" * 200), ("Q2", "two")]


def test_a_wait_stored_before_waits_carried_answers_is_released_from_a_read(qs: QuestionService, core: Core) -> None:
    first, second = _ask(qs, "Q1"), _ask(qs, "Q2")
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)
    store = _store(core)
    wait = store.waits[("r1", "sync")]
    store.waits[("r1", "sync")] = wait.model_copy(update={"carry": None, "answers": {}})  # as stored before
    qs.answer("r1", first, "one", caller="op")
    reads = _count_scope_reads(core)
    assert qs.answer("r1", second, "two", caller="op")["released"] == ["sync"] and reads == ["r1"]
    assert _answers(core) == [("Q1", "one"), ("Q2", "two")]


def test_a_default_taken_at_one_gates_deadline_is_carried_onto_the_other_gates(qs: QuestionService, core: Core) -> None:
    """Gate `drafts` ends at its deadline taking its question's default; the whole-run gate waiting on
    the same question gets the default carried onto its wait, so its last answer still sends it."""
    defaulted = _ask(qs, "Q1", timeout_seconds=30, on_timeout={"default": "yes"})
    last = _ask(qs, "R1", node="research")
    qs.park_gate(
        run_id="r1",
        gate="drafts",
        token="t-drafts",
        timeout_seconds=60,
        from_node="draft",
        ladder=Ladder(on_timeout="use_question_defaults"),
    )
    qs.park_gate(run_id="r1", gate="all", token="t-all", timeout_seconds=60)
    closing = core.store.get_wait("r1", "drafts")
    assert closing is not None and end_at_deadline(AwaitDeadline(qs), closing) == "defaulted"  # released with it
    whole = core.store.get_wait("r1", "all")
    assert whole is not None and whole.carry == "complete" and list(whole.answers) == [defaulted]
    reads = _count_scope_reads(core)
    assert qs.answer("r1", last, "r", caller="op")["released"] == ["all"] and reads == []
    outputs = {token: [(a["question"], a["answer"]) for a in output["answers"]] for _, token, output in _sent(core)}
    assert outputs == {"t-drafts": [("Q1", "yes")], "t-all": [("Q1", "yes"), ("R1", "r")]}


def test_past_the_guard_limit_the_answer_guards_no_other_question_and_its_gates_release_from_a_read(
    qs: QuestionService, core: Core
) -> None:
    """More in-scope questions pending than one write can guard: none is guarded, none of the gates is sent
    from its carried answers, and every gate is left to the read after the write (it finds them pending)."""
    answering = _ask(qs, "Q0")
    for n in range(gate_answers.MAX_PENDING_GUARDS + 1):
        _ask(qs, f"Q{n + 1}")
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60, from_node="draft")
    snapshot = _store(core).snapshot_run("r1")
    [question] = [i for i in snapshot.pending if i.interaction_id == answering]
    on_gates = gate_answers.answer_on_gates(question, "A", snapshot.waits, snapshot, now=core.now())
    assert [w.gate for w in on_gates.ready] == ["sync"]
    assert on_gates.outputs == {}
    assert not [g for g in on_gates.guards if isinstance(g, StillPending)]
    qs.answer("r1", answering, "A", caller="op")
    assert _sent(core) == []  # the read after the write found the others pending
