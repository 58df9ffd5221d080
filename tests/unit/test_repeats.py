"""A repeat of an accepted answer (issue 15: idempotency folded into the deciding write): the same
caller sending the same answer again (a client's retry after a lost response) gets the first one's
200, decided from the stored answer with no idempotency record; another caller, or another answer, is
the 409 naming the winner. Nothing is recorded or delivered twice, and a repeat after a failed send
delivers the stored answer."""

from __future__ import annotations

import pytest

from baton.contracts import AskRequest, ResumeInterrupt
from baton.domain.gate_payloads import ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.pause_rules import parked_pause
from baton.errors import ConflictError
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from baton.services.questions import QuestionService
from baton.services.runs import RunService
from tests.fakes import RecordingTaskTokens


def _tokens(core: Core) -> RecordingTaskTokens:
    assert isinstance(core.tokens, RecordingTaskTokens)
    return core.tokens


def _count(core: Core, run_id: str, event_type: str) -> int:
    return sum(1 for e in core.store.list_events(run_id) if e.type == event_type)


def test_a_repeated_answer_gets_the_first_200_and_others_the_409(core: Core) -> None:
    qs = QuestionService(core)
    iid = qs.ask("r1", AskRequest(node="draft", question="Which DB?"), caller="agent")["interaction_id"]
    first = qs.answer("r1", iid, "postgres", caller="alice")
    assert qs.answer("r1", iid, "postgres", caller="alice") == first
    with pytest.raises(ConflictError) as other_caller:
        qs.answer("r1", iid, "postgres", caller="bob")
    assert other_caller.value.details["winner"]["by"] == "alice"
    with pytest.raises(ConflictError):
        qs.answer("r1", iid, "mysql", caller="alice")
    assert _count(core, "r1", "interaction_answered") == 1
    assert len(qs.drain("r1", "draft")) == 1  # one message queued


def test_a_repeated_last_answer_reports_its_gate_released_and_sends_once(core: Core) -> None:
    qs = QuestionService(core)
    iid = qs.ask("r1", AskRequest(node="draft", question="Which DB?"), caller="agent")["interaction_id"]
    qs.park_gate(run_id="r1", gate="wait", token="tok-gate", timeout_seconds=60, from_node="draft")
    first = qs.answer("r1", iid, "postgres", caller="alice")
    assert first["resumed"] is True and first["released"] == ["wait"]
    assert qs.answer("r1", iid, "postgres", caller="alice") == first
    assert [token for _, token, _ in _tokens(core).sent] == ["tok-gate"]
    assert _count(core, "r1", "await_released") == 1


def test_a_repeat_after_a_failed_send_delivers_the_stored_answer(core: Core) -> None:
    qs = QuestionService(core)
    iid = qs.ask("r1", AskRequest(node="draft", question="Which DB?"), caller="agent")["interaction_id"]
    qs.park_gate(run_id="r1", gate="wait", token="tok-gate", timeout_seconds=60, from_node="draft")
    _tokens(core).fail_next = RuntimeError("network down")
    assert qs.answer("r1", iid, "postgres", caller="alice")["resumed"] is False  # stored, not delivered
    again = qs.answer("r1", iid, "postgres", caller="alice")
    assert again["resumed"] is True and again["released"] == ["wait"]
    ((_, token, output),) = _tokens(core).sent
    assert token == "tok-gate" and output["answers"][0]["answer"] == "postgres"


def test_a_repeated_resume_gets_the_first_200_and_others_the_409(runs: RunService, core: Core) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    runs.park(ParkPayload(run_id="r1", node="approve", token="tok-1", prompt="Ship it?", timeout_seconds=60))
    first = runs.resume(Resume("r1", {"ship": True}, caller="alice"))
    assert first["resumed"] is True
    assert runs.resume(Resume("r1", {"ship": True}, caller="alice")) == first
    with pytest.raises(ConflictError):
        runs.resume(Resume("r1", {"ship": True}, caller="bob"))
    with pytest.raises(ConflictError):
        runs.resume(Resume("r1", {"ship": False}, caller="alice"))
    assert len(_tokens(core).sent) == 1
    assert _count(core, "r1", "interaction_answered") == 1 and _count(core, "r1", "run_resumed") == 1


def test_a_resume_names_its_pause_from_what_is_parked(runs: RunService, core: Core) -> None:
    runs.start("human_pause", {}, run_id="r1", caller="op")
    runs.park(ParkPayload(run_id="r1", node="approve", token="tok-1", prompt="Ship it?", timeout_seconds=60))
    snapshot = core.store.snapshot_run("r1")
    wait = parked_pause(snapshot)
    assert wait is not None and wait.gate == "approve" and wait.kind == "ask"
    assert parked_pause(snapshot, "elsewhere") is None
    assert runs.resume(Resume("r1", {"ship": True}, caller="alice"), snapshot=snapshot)["resumed"] is True
    assert parked_pause(core.store.snapshot_run("r1")) is None  # released: nothing parked


def test_a_repeated_interrupt_resume_gets_the_first_200(core: Core) -> None:
    svc = InterruptService(core)
    created, _ = svc.create(InterruptSpec(session_id="s1", prompt="Where?"), caller="agent")
    first = svc.resume(created.interaction_id, ResumeInterrupt(input="production"), caller="alice")
    assert svc.resume(created.interaction_id, ResumeInterrupt(input="production"), caller="alice") == first
    with pytest.raises(ConflictError):
        svc.resume(created.interaction_id, ResumeInterrupt(input="production"), caller="bob")
    with pytest.raises(ConflictError):
        svc.resume(created.interaction_id, ResumeInterrupt(input="staging"), caller="alice")
    assert _count(core, "s1", "interrupt_resumed") == 1
