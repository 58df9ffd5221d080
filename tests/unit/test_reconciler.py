"""The reconciler re-sends a resume or cancel whose task-token send failed after the answer was stored,
exactly once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.adapters.companion_offline import OfflineCompanion
from baton.adapters.git_diff import GitDiffSource
from baton.cli.demo_repo import create_demo_repo
from baton.contracts import CancelInterrupt, ResumeInterrupt
from baton.contracts.deadline_tasks import WaitReconciled
from baton.domain.gate_payloads import ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.domain.review_decision import ReviewDecision
from baton.errors import GoneError
from baton.models import InteractionStatus
from baton.services.core import DEADLINE_ERROR, Core
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from baton.services.reconciler import Reconciler
from baton.services.review import ReviewService
from baton.services.runs import RunService
from tests.fakes import MemoryBuildRecords, RecordingTaskTokens


def _tokens(core: Core) -> RecordingTaskTokens:
    assert isinstance(core.tokens, RecordingTaskTokens)
    return core.tokens


@pytest.fixture
def reconciler(core: Core, runs: RunService) -> Reconciler:
    return Reconciler(core, runs=runs)


def _hosted(svc: InterruptService, token: str = "tok-int") -> str:
    spec = InterruptSpec(session_id="sess-1", prompt="Deploy?", state={"n": 1}, timeout_ms=60_000, node="gate")
    i, _ = svc.create(spec, caller="workflow", token=token)
    return i.interaction_id


def test_nothing_to_do_sends_nothing(core: Core, runs: RunService, reconciler: Reconciler) -> None:
    runs.park(ParkPayload(token="tok-ask", run_id="r1", node="approve", prompt="Ship?", timeout_seconds=60))
    _hosted(InterruptService(core))
    assert reconciler.reconcile()["released"] == []  # both still pending: nothing is sent
    assert _tokens(core).sent == []


def test_ask_resume_lost_to_a_failed_send_is_sent_once(core: Core, runs: RunService, reconciler: Reconciler) -> None:
    iid = runs.park(
        ParkPayload(token="tok-ask", run_id="r1", node="approve", prompt="Ship?", timeout_seconds=60)
    ).interaction_id
    _tokens(core).fail_next = RuntimeError("Step Functions throttled")
    stored = runs.resume(Resume("r1", {"ship": True}, caller="alice"))  # stored, its send pending: not an error
    assert (stored["resumed"], stored["delivery"]) == (False, "pending")
    assert _tokens(core).sent == []
    assert reconciler.reconcile().wire()["released"] == [{"run_id": "r1", "gate": "approve", "kind": "ask"}]
    assert reconciler.reconcile()["released"] == []
    ((kind, token, output),) = _tokens(core).sent
    assert (kind, token) == ("success", "tok-ask")
    assert output == {
        "interaction_id": iid,
        "node": "approve",
        "answers": {"ship": True},
        "answered_by": "alice",
        "answered_at": output["answered_at"],
    }
    assert core.store.get_wait("r1", "approve").status == "released"  # type: ignore[union-attr]
    assert core.require_run("r1").status == "running"


def test_interrupt_resume_lost_to_a_failed_send_is_sent_once(core: Core, reconciler: Reconciler) -> None:
    svc = InterruptService(core)
    iid = _hosted(svc)
    _tokens(core).fail_next = RuntimeError("network down")
    stored = svc.resume(
        iid, ResumeInterrupt(stateEdits=["n=2"]), caller="alice"
    )  # stored, its send pending: not an error
    assert (stored["resumed"], stored["delivery"]) == (False, "pending")
    assert reconciler.reconcile().wire()["released"] == [{"run_id": "sess-1", "gate": "gate", "kind": "interrupt"}]
    assert reconciler.reconcile()["released"] == []
    ((kind, token, output),) = _tokens(core).sent
    assert (kind, token) == ("success", "tok-int")
    assert output["interrupt_id"] == iid and output["state"] == {"n": 2} and output["state_edits"] == ["n=2"]
    assert output["resolved_by"] == "alice"


def test_interrupt_cancel_lost_to_a_failed_send_is_sent_once(core: Core, reconciler: Reconciler) -> None:
    svc = InterruptService(core)
    iid = _hosted(svc)
    _tokens(core).fail_next = RuntimeError("network down")
    with pytest.raises(RuntimeError):
        svc.cancel(iid, CancelInterrupt(reason="wrong target"), caller="bob")
    assert core.store.get_wait("sess-1", "gate").status == "parked"  # type: ignore[union-attr]
    assert reconciler.reconcile().wire()["released"] == [{"run_id": "sess-1", "gate": "gate", "kind": "interrupt"}]
    assert reconciler.reconcile()["released"] == []
    ((kind, token, output),) = _tokens(core).sent
    assert (kind, token) == ("failure", "tok-int")
    assert output == {"error": "InterruptCancelled", "cause": f"interrupt {iid} cancelled by bob: wrong target"}


def test_a_retried_cancel_resends_the_failure_instead_of_410(core: Core) -> None:
    svc = InterruptService(core)
    iid = _hosted(svc)
    _tokens(core).fail_next = RuntimeError("network down")
    with pytest.raises(RuntimeError):
        svc.cancel(iid, CancelInterrupt(reason="wrong target"), caller="bob")
    again = svc.cancel(iid, CancelInterrupt(reason="wrong target"), caller="bob")
    assert again["cancelled"] is True and again["workflowFailed"] is True
    assert [k for k, _, _ in _tokens(core).sent] == ["failure"]
    with pytest.raises(GoneError):  # now nothing is parked: a third cancel is the usual 410
        svc.cancel(iid, CancelInterrupt(reason="wrong target"), caller="bob")
    assert len(_tokens(core).sent) == 1


def test_store_deadline_timeout_of_a_hosted_interrupt_fails_its_task(core: Core, clock: Any) -> None:
    svc = InterruptService(core)
    iid = _hosted(svc)
    clock.advance(120)
    assert svc.sweep() == [iid]  # cancelled/timeout by the store deadline; the token is still parked
    assert Reconciler(core).reconcile().wire()["released"] == [
        {"run_id": "sess-1", "gate": "gate", "kind": "interrupt"}
    ]
    ((kind, _, output),) = _tokens(core).sent
    assert kind == "failure" and output == {"error": DEADLINE_ERROR, "cause": f"interrupt {iid} timed out"}


def test_reconciler_never_sends_a_stale_round_to_a_reparked_gate(
    core: Core, runs: RunService, reconciler: Reconciler
) -> None:
    iid = runs.park(
        ParkPayload(token="tok-1", run_id="r1", node="approve", prompt="Ship?", timeout_seconds=60)
    ).interaction_id
    stale = core.store.get_wait("r1", "approve")
    assert stale is not None
    i = core.store.get_interaction("r1", iid)
    assert i is not None
    core.store.transition_interaction(i, InteractionStatus(status="answered", answer={"x": 1}, version=i.state.version))
    core.store.release_wait(stale, "released")  # round 1 was delivered ...
    runs.park(
        ParkPayload(token="tok-2", run_id="r1", node="approve", prompt="Again?", timeout_seconds=60)
    )  # ... round 2 parks
    # the examined token is gone: nothing is sent (and nothing ended)
    assert reconciler.reconcile_one(stale) == WaitReconciled()
    assert _tokens(core).sent == []


def test_review_action_lost_to_a_failed_send_is_sent_once(core: Core, tmp_path: Path) -> None:
    review = ReviewService(
        core,
        companion=OfflineCompanion,
        runner=lambda: None,
        records=MemoryBuildRecords(),
        diffs=GitDiffSource(),
        merge_runner_kind="local",
    )
    repo = create_demo_repo(tmp_path / "repo")
    review.first_turn("r1", repo.gate_input())
    review.park("r1", "ship_review", "tok-rev")
    _tokens(core).fail_next = RuntimeError("network down")
    stored = review.act("r1", ReviewDecision(action="request_changes", message="no"), caller="op")
    assert (stored["resumed"], stored["delivery"]) == (False, "pending")  # stored: not an error
    reconciler = Reconciler(core, review=lambda: review)
    assert reconciler.reconcile().wire()["released"] == [{"run_id": "r1", "gate": "ship_review", "kind": "review"}]
    assert reconciler.reconcile()["released"] == []
    ((kind, token, output),) = _tokens(core).sent
    assert (kind, token) == ("success", "tok-rev")
    assert output["action"] == "request_changes" and output["message"] == "no" and output["answered_by"] == "op"
