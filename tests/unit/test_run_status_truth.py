"""Issue 28 item 11: the run's status and its run_paused / run_resumed events tell the truth. A hosted
await gate that parks on pending questions records `run_paused`; a `run_resumed` is recorded only when
the run really resumes (never for a gate that never paused it); a fan-out (Map items, each parking its
own gate) reads `paused_waiting_human` while any branch is still parked."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from baton.services.asks import AskService, BlockingAsk
from baton.services.pauses import Resume
from baton.services.questions import QuestionService

if TYPE_CHECKING:
    from baton.services.core import Core
    from baton.services.runs import RunService


@pytest.fixture
def qs(core: Core) -> QuestionService:
    return QuestionService(core)


def _pauses(core: Core, run_id: str = "r1") -> list[tuple[str, str]]:
    return [
        (e.type, str(e.data.get("gate")))
        for e in core.store.list_events(run_id, limit=500)
        if e.type in ("run_paused", "run_resumed")
    ]


def _status(core: Core, run_id: str = "r1") -> str:
    run = core.store.get_run(run_id)
    assert run is not None
    return run.status


def _each_resume_follows_a_pause(pauses: list[tuple[str, str]]) -> bool:
    """run_paused and run_resumed alternate, starting with a pause: no resume of a run never paused."""
    expected = "run_paused"
    for kind, _ in pauses:
        if kind != expected:
            return False
        expected = "run_resumed" if kind == "run_paused" else "run_paused"
    return True


def test_a_hosted_await_gate_records_run_paused_before_its_run_resumed(qs: QuestionService, core: Core) -> None:
    a = qs.ask("r1", node="draft", question="Q1", caller="agent")["interaction_id"]
    qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60, from_node="draft")
    assert _status(core) == "paused_waiting_human"
    assert _pauses(core) == [("run_paused", "sync")]
    assert qs.answer("r1", a, "yes", caller="op")["released"] == ["sync"]
    assert _status(core) == "running"
    assert _pauses(core) == [("run_paused", "sync"), ("run_resumed", "sync")]


def test_a_gate_released_at_once_never_paused_the_run_and_records_no_resume(qs: QuestionService, core: Core) -> None:
    a = qs.ask("r1", node="draft", question="Q1", caller="agent")["interaction_id"]
    qs.answer("r1", a, "early", caller="op")
    assert qs.park_gate(run_id="r1", gate="sync", token="tok", timeout_seconds=60)["released"] is True
    assert _status(core) == "running"
    assert _pauses(core) == []


def test_a_fan_out_reads_paused_while_any_branch_is_parked(qs: QuestionService, core: Core) -> None:
    research = qs.ask("r1", node="research", question="R?", caller="agent")["interaction_id"]
    draft = qs.ask("r1", node="draft", question="D?", caller="agent")["interaction_id"]
    qs.park_gate(run_id="r1", gate="item", token="t0", timeout_seconds=60, from_node="research", map_item=0)
    qs.park_gate(run_id="r1", gate="item", token="t1", timeout_seconds=60, from_node="draft", map_item=1)
    assert _status(core) == "paused_waiting_human"

    assert qs.answer("r1", draft, "go", caller="op")["released"] == ["item-1"]
    assert _status(core) == "paused_waiting_human"  # item 0 is still parked on its question

    assert qs.answer("r1", research, "done", caller="op")["released"] == ["item-0"]
    assert _status(core) == "running"
    pauses = _pauses(core)
    assert _each_resume_follows_a_pause(pauses), pauses
    assert pauses[-1] == ("run_resumed", "item-0")


def test_two_branches_released_at_once_leave_the_run_running(qs: QuestionService, core: Core) -> None:
    """Two releases racing, each having read the other branch as still parked (so neither moves the run
    in its write): the second to finish reads again and resumes the run, not left paused for nothing."""
    qs.ask("r1", node="research", question="R?", caller="agent")
    qs.ask("r1", node="draft", question="D?", caller="agent")
    qs.park_gate(run_id="r1", gate="item", token="t0", timeout_seconds=60, from_node="research", map_item=0)
    qs.park_gate(run_id="r1", gate="item", token="t1", timeout_seconds=60, from_node="draft", map_item=1)
    both_parked = core.store.list_run_waits("r1")
    for wait in both_parked:  # each release's bookkeeping, with the waits it read before the other's
        assert core.complete_release(wait, siblings=both_parked)
    assert _status(core) == "running"
    pauses = _pauses(core)
    assert _each_resume_follows_a_pause(pauses) and pauses[-1][0] == "run_resumed", pauses


def test_answering_a_blocking_ask_of_a_run_not_paused_records_no_run_resumed(core: Core, runs: RunService) -> None:
    """An agent's blocking ask answered while its run is not paused (here: set running by hand, as a stop
    or another answer would): the waiter is let go, but nothing says the run resumed."""
    AskService(core).ask(
        BlockingAsk("agent-1", node="cleanup", question="Drop?", options=["yes", "no"], timeout_seconds=60, caller="a")
    )
    core.set_run_status("agent-1", "running", allowed_from={"paused_waiting_human"})
    assert runs.resume(Resume("agent-1", {"drop": "no"}, caller="alice"))["resumed"] is True
    assert [kind for kind, _ in _pauses(core, "agent-1")] == ["run_paused"]
