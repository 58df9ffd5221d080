"""Stopping a hosted run (baton.services.run_stop) on the fakes: the end is recorded before the call
returns, with who stopped it; what cannot be stopped is a 409 that changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.contracts import AskRequest, BlockingAskRequest, ResumeInterrupt
from baton.domain.review_decision import ReviewDecision
from baton.errors import ConflictError, NotFoundError
from baton.services.core import Core
from baton.services.pauses import Resume
from baton.services.run_stop import STOP_ERROR, stop_run
from baton.services.runs import RunService


def test_stop_records_run_aborted_at_once_with_who_and_why(runs: RunService, core: Core) -> None:
    run = runs.start("human_pause", {"prompt": "Deploy?"}, run_id="r1", caller="op")
    stopped = stop_run(runs, "r1", caller="alice", reason="wrong branch")
    assert stopped.status == "aborted" and stopped.reason == "stopped by alice: wrong branch"
    assert stopped.ended_at
    described = core.workflows.describe(run.execution_arn or "")
    assert described["status"] == "ABORTED" and described["error"] == STOP_ERROR
    ends = [e for e in core.store.list_events("r1") if e.type == "run_aborted"]
    assert [e.data["reason"] for e in ends] == ["stopped by alice: wrong branch"]


def test_what_cannot_be_stopped_is_a_409_or_404_and_changes_nothing(runs: RunService, core: Core) -> None:
    with pytest.raises(NotFoundError):
        stop_run(runs, "ghost", caller="alice", reason=None)
    core.ensure_run("ext-1")  # an agent's own run: no execution behind it
    with pytest.raises(ConflictError, match="not a hosted run"):
        stop_run(runs, "ext-1", caller="alice", reason=None)
    runs.start("human_pause", {}, run_id="r2", caller="op")
    stop_run(runs, "r2", caller="alice", reason=None)
    events = core.store.list_events("r2")
    with pytest.raises(ConflictError, match=r"already ended \(aborted\)"):
        stop_run(runs, "r2", caller="bob", reason="again")
    assert core.store.list_events("r2") == events
    assert core.require_run("r2").reason == "stopped by alice"


def test_stop_closes_every_pending_item_and_each_answer_after_it_is_a_410_naming_the_stop(
    runs: RunService, core: Core
) -> None:
    """Issue 28 defect 6 on the fakes: the run's question, blocking ask and interrupt are closed by the stop
    (who and why kept on each), leave the pending lists, and answering or resuming one is a 410 naming it."""
    from baton.domain.interrupt_spec import InterruptSpec
    from baton.errors import GoneError
    from baton.services.asks import AskService
    from baton.services.interrupts import InterruptService
    from baton.services.questions import QuestionService

    runs.start("human_pause", {"prompt": "Deploy?"}, run_id="r3", caller="op")
    questions, interrupts = QuestionService(core), InterruptService(core)
    asked = questions.ask("r3", AskRequest(node="draft", question="which db?"), caller="agent")
    AskService(core).ask("r3", BlockingAskRequest(node="check", question="ok?", timeout_seconds=60), caller="agent")
    interrupt, _ = interrupts.create(InterruptSpec(session_id="r3", prompt="ship?"), caller="agent")

    stop_run(runs, "r3", caller="alice", reason="wrong branch")

    cause = "stopped by alice: wrong branch"
    closed = core.store.list_run_interactions("r3")
    assert {(i.state.status, i.state.answered_by, i.state.reason) for i in closed} == {("cancelled", "alice", cause)}
    assert core.store.list_run_interactions("r3", status="pending") == []
    with pytest.raises(GoneError, match=cause):
        questions.answer("r3", asked["interaction_id"], "postgres", caller="bob")
    with pytest.raises(GoneError, match=cause):
        runs.resume(Resume("r3", {"ok": True}, caller="bob", node="check"))
    with pytest.raises(GoneError, match=cause):
        interrupts.resume(interrupt.interaction_id, ResumeInterrupt(input="go"), caller="bob")


class _NoRunner:
    def start(self, token: str, request: object) -> str:
        raise AssertionError("a closed review never merges")


def test_a_closed_review_gate_refuses_its_actions_with_a_410_naming_the_stop(core: Core, tmp_path: Path) -> None:
    """A review gate parked when its run is stopped: closed (its wait released), and an operator's action on
    it afterwards is a 410 naming the stop, not a 409 saying to try again shortly."""
    from baton.adapters.companion_offline import OfflineCompanion
    from baton.adapters.git_diff import GitDiffSource
    from baton.cli.demo_repo import create_demo_repo
    from baton.errors import GoneError
    from baton.services.review import ReviewService
    from baton.services.run_stop import close_pauses
    from tests.fakes import MemoryBuildRecords

    core.ensure_run("r4")
    review = ReviewService(
        core,
        companion=OfflineCompanion,
        runner=_NoRunner(),
        records=MemoryBuildRecords(),
        diffs=GitDiffSource(),
        merge_runner_kind="local",
    )
    review.first_turn("r4", create_demo_repo(tmp_path / "repo").gate_input(timeout_seconds=60))
    iid = review.park("r4", "ship_review", "tok-r", core.clock.now())["interaction_id"]
    assert close_pauses(core, "r4", by="alice", cause="stopped by alice") == [iid]
    wait = core.store.get_wait("r4", "ship_review")
    assert wait is not None and wait.status == "released"
    with pytest.raises(GoneError, match="stopped by alice"):
        review.act("r4", ReviewDecision(action="approve_merge"), caller="bob")
