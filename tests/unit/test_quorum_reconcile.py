"""A met quorum never waits (in-memory store): when the deciding voter's release fails after the vote
that met the tally was committed (an injected fault), the quorum is left met but unreleased; the
reconciler's pass finds it (`list_met_tallies`) and releases it exactly once, as the voter would have.
The DynamoDB adapter's sparse key and its Query are tested on moto in
tests/integration/test_quorum_reconcile.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts import AskRequest, CancelInterrupt
from baton.domain.approval import ApprovalPolicy
from baton.domain.gate_payloads import ParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.ports import QuorumMet
from baton.services.interrupts import InterruptService
from baton.services.pauses import Resume
from baton.services.questions import QuestionService
from baton.services.reconciler import Reconciler

if TYPE_CHECKING:
    from baton.services.core import Core

TWO_OF_THREE = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])


class DeciderDied(RuntimeError):
    """The deciding voter's process failing between its vote and the release."""


def _fail_first_release(monkeypatch: pytest.MonkeyPatch, core: Core) -> list[int]:
    """The first transition carrying a `QuorumMet` guard (a quorum's release) fails; returns the count."""
    store: Any = core.store
    real = store.transition_interaction
    failed: list[int] = []

    def transition(interaction: Any, new_state: Any, **kwargs: Any) -> Any:
        if not failed and any(isinstance(g, QuorumMet) for g in kwargs.get("guards", ())):
            failed.append(1)
            raise DeciderDied("the decider died before its release")
        return real(interaction, new_state, **kwargs)

    monkeypatch.setattr(store, "transition_interaction", transition)
    return failed


def _types(core: Core, run_id: str) -> list[str]:
    return [e.type for e in core.store.list_events(run_id)]


def test_a_met_question_quorum_whose_release_failed_is_released_once_by_the_reconciler(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    qs = QuestionService(core)
    iid = qs.ask("r1", AskRequest(node="deploy", question="Ship?", approval=TWO_OF_THREE), caller="agent")[
        "interaction_id"
    ]
    assert qs.answer("r1", iid, "approve", caller="alice")["status"] == "pending"
    failed = _fail_first_release(monkeypatch, core)
    with pytest.raises(DeciderDied):
        qs.answer("r1", iid, "approve", caller="bob")
    assert failed == [1]
    stuck = core.store.get_interaction("r1", iid)
    assert stuck is not None and stuck.state.status == "pending" and core.store.get_tally("r1", iid).approvals == 2
    assert [(m.run_id, m.interaction_id) for m in core.store.list_met_tallies()] == [("r1", iid)]
    reconciler = Reconciler(core)
    assert reconciler.reconcile().wire()["quorums"] == [{"run_id": "r1", "interaction_id": iid, "kind": "quorum"}]
    assert reconciler.reconcile()["quorums"] == []  # released once: off the list
    answered = core.store.get_interaction("r1", iid)
    assert answered is not None and answered.state.status == "answered"
    assert answered.state.answer == "approve" and answered.state.answered_by == "alice, bob"
    types = _types(core, "r1")
    assert types.count("quorum_reached") == 1 and types.count("interaction_answered") == 1
    assert types.count("approval_recorded") == 2 and not core.store.list_met_tallies()


def test_a_met_rejection_of_an_interrupt_is_settled_by_the_reconciler(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupts = InterruptService(core)
    spec = InterruptSpec(session_id="s1", prompt="Deploy?", approval=TWO_OF_THREE)
    created, _ = interrupts.create(spec, caller="agent")
    _fail_first_release(monkeypatch, core)
    with pytest.raises(DeciderDied):
        interrupts.cancel(
            created.interaction_id, CancelInterrupt(reason="no"), caller="alice"
        )  # `any` rule: one rejection decides
    reconciler = Reconciler(core)
    [released] = reconciler.reconcile()["quorums"]
    assert released["interaction_id"] == created.interaction_id
    found = core.store.get_interaction("s1", created.interaction_id)
    assert found is not None and found.state.status == "cancelled"
    assert _types(core, "s1").count("approval_rejected") == 1 and reconciler.reconcile()["quorums"] == []


def test_an_unmet_tally_and_a_released_quorum_are_left_alone(core: Core) -> None:
    qs = QuestionService(core)
    iid = qs.ask("r1", AskRequest(node="deploy", question="Ship?", approval=TWO_OF_THREE), caller="agent")[
        "interaction_id"
    ]
    qs.answer("r1", iid, "approve", caller="alice")
    assert core.store.list_met_tallies() == []  # one of two: nothing to release
    qs.answer("r1", iid, "approve", caller="bob")  # released by its decider
    assert core.store.list_met_tallies() == [] and Reconciler(core).reconcile()["quorums"] == []
    assert _types(core, "r1").count("quorum_reached") == 1


def test_a_met_park_quorum_whose_release_failed_sends_its_token_once_from_the_reconciler(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.services.runs import RunService
    from tests.fakes import RecordingTaskTokens

    runs = RunService(core)
    runs.park(
        ParkPayload(
            run_id="h1", node="approve", token="tok-h1", prompt="Ship?", timeout_seconds=600, approval=TWO_OF_THREE
        )
    )
    runs.resume(Resume("h1", {"decision": "approve"}, caller="alice"))
    _fail_first_release(monkeypatch, core)
    with pytest.raises(DeciderDied):
        runs.resume(Resume("h1", {"decision": "approve"}, caller="bob"))
    assert isinstance(core.tokens, RecordingTaskTokens) and core.tokens.sent == []
    reconciler = Reconciler(core, runs=runs)
    assert [q["kind"] for q in reconciler.reconcile()["quorums"]] == ["quorum"]
    assert reconciler.reconcile()["quorums"] == []
    [(kind, token, output)] = core.tokens.sent
    assert (kind, token, output["answered_by"]) == ("success", "tok-h1", "alice, bob")
    assert _types(core, "h1").count("quorum_reached") == 1
