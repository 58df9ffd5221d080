"""Quorum interrupts on the in-memory store: a resume is an approval and a cancel a rejection; the
waiter is released by the vote that meets the quorum (with that vote's value), exactly once; the
creator and non-approvers get a 403 that changes nothing; the vote is the authenticated caller's."""

from __future__ import annotations

import pytest

from baton.contracts import CancelInterrupt, ResumeInterrupt
from baton.domain.approval import ApprovalPolicy
from baton.domain.ballot import Voter
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import ConflictError, ForbiddenError
from baton.services.core import Core
from baton.services.interrupts import InterruptService


@pytest.fixture
def svc(core: Core) -> InterruptService:
    return InterruptService(core)


def _create(svc: InterruptService, policy: ApprovalPolicy) -> str:
    spec = InterruptSpec(session_id="s1", prompt="deploy?", state={"env": "prod"}, approval=policy)
    created, _ = svc.create(spec, caller="agent")
    return created.interaction_id


def _types(core: Core) -> list[str]:
    return [e.type for e in core.store.list_events("s1")]


TWO = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])


def test_two_resumes_release_it_once_with_the_deciding_value(svc: InterruptService, core: Core) -> None:
    iid = _create(svc, TWO)
    first = svc.resume(iid, ResumeInterrupt(input="v-alice"), caller="alice")
    assert first["resumed"] is False and first["interrupt"]["status"] == "pending"
    assert first["approval"]["approvals"] == 1 and first["approval"]["approved_by"] == ["alice"]
    again = svc.resume(iid, ResumeInterrupt(input="v-alice"), caller="alice")
    assert again["approval"]["already_counted"] is True and again["approval"]["approvals"] == 1
    done = svc.resume(iid, ResumeInterrupt(input="v-bob", stateEdits=["env=staging"]), caller="bob")
    assert done["resumed"] is True and done["interrupt"]["status"] == "answered"
    assert done["interrupt"]["value"] == "v-bob" and done["interrupt"]["editedState"] == {"env": "staging"}
    assert done["interrupt"]["resolvedBy"] == "alice, bob"
    assert _types(core).count("interrupt_resumed") == 1 and _types(core).count("quorum_reached") == 1
    with pytest.raises(ConflictError):
        svc.resume(iid, ResumeInterrupt(input="v-carol"), caller="carol")
    assert len(core.store.list_votes("s1", iid)) == 2


def test_one_cancel_rejects_under_the_any_rule(svc: InterruptService, core: Core) -> None:
    iid = _create(svc, TWO)
    svc.resume(iid, ResumeInterrupt(input="ok"), caller="alice")
    rejected = svc.cancel(iid, CancelInterrupt(reason="not today"), caller="bob")
    assert rejected["cancelled"] is True and rejected["interrupt"]["status"] == "cancelled"
    assert "rejected" in rejected["interrupt"]["reason"]
    assert _types(core).count("approval_rejected") == 1 and _types(core).count("interrupt_cancelled") == 1


def test_majority_needs_two_cancels_of_three(svc: InterruptService, core: Core) -> None:
    iid = _create(svc, ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"], rejection="majority"))
    one = svc.cancel(iid, CancelInterrupt(reason="no"), caller="alice")
    assert one["cancelled"] is False and one["approval"]["rejections"] == 1
    two = svc.cancel(iid, CancelInterrupt(reason="no"), caller="carol")
    assert two["cancelled"] is True and two["approval"]["decision"] == "rejected"


def test_the_creator_and_outsiders_cannot_vote(svc: InterruptService, core: Core) -> None:
    iid = _create(svc, TWO)
    with pytest.raises(ForbiddenError) as requester:
        svc.resume(iid, ResumeInterrupt(input="x"), caller="agent")
    assert requester.value.details["reason"] == "requester_cannot_approve"
    with pytest.raises(ForbiddenError) as outsider:
        svc.cancel(iid, CancelInterrupt(reason="x"), caller="mallory")
    assert outsider.value.details["reason"] == "not_an_approver"
    # a local body may name another operator, but the vote is the authenticated caller's
    with pytest.raises(ForbiddenError):
        svc.resume(iid, ResumeInterrupt(input="x"), caller="alice", voter=Voter("mallory"))
    assert core.store.list_votes("s1", iid) == []
    found = core.store.get_interaction("s1", iid)
    assert found is not None and found.state.status == "pending"
