"""Quorum questions on the in-memory store: each vote counted once, the requester and non-approvers
refused with a 403 that changes nothing, the rejection rules, the release exactly once (also under
threads), and an await gate released only when the quorum is met."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import ValidationError

from baton.contracts import AskRequest
from baton.domain.approval import ApprovalPolicy, vote_of
from baton.errors import ConflictError, ForbiddenError, ValidationFailedError
from baton.services.core import Core
from baton.services.questions import QuestionService
from tests.fakes import MemoryStore, RecordingTaskTokens


@pytest.fixture
def qs(core: Core) -> QuestionService:
    return QuestionService(core)


def _ask(qs: QuestionService, policy: ApprovalPolicy, *, options: list[str] | None = None, run: str = "r1") -> str:
    posted = qs.ask(
        run, AskRequest(node="deploy", question="Ship it?", options=options, approval=policy), caller="agent"
    )
    return str(posted["interaction_id"])


def _types(core: Core, run_id: str = "r1") -> list[str]:
    return [e.type for e in core.store.list_events(run_id)]


def _store(core: Core) -> MemoryStore:
    assert isinstance(core.store, MemoryStore)
    return core.store


TWO_OF_THREE = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])


def test_two_of_three_stays_pending_after_one_and_is_answered_by_the_second(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, TWO_OF_THREE)
    first = qs.answer("r1", iid, "approve", caller="alice")
    assert first["status"] == "pending" and first["approval"]["approvals"] == 1
    assert first["approval"]["approved_by"] == ["alice"] and first["approval"]["counted"] is True
    [still] = qs.pending("r1")
    assert still.interaction_id == iid  # the inbox item stays pending until the quorum is met
    second = qs.answer("r1", iid, "approve", caller="bob")
    assert second["status"] == "answered" and second["approval"]["decision"] == "approved"
    assert second["approval"]["approved_by"] == ["alice", "bob"]
    answered = core.store.get_interaction("r1", iid)
    assert answered is not None and answered.state.status == "answered"
    assert answered.state.answer == "approve" and answered.state.answered_by == "alice, bob"
    assert _types(core).count("approval_recorded") == 2 and _types(core).count("quorum_reached") == 1
    assert _types(core).count("interaction_answered") == 1
    with pytest.raises(ConflictError):  # the third approver comes after the decision
        qs.answer("r1", iid, "approve", caller="carol")
    assert len(core.store.list_votes("r1", iid)) == 2


def test_the_same_operator_twice_counts_once_and_is_told_so(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, TWO_OF_THREE)
    qs.answer("r1", iid, "approve", caller="alice")
    again = qs.answer("r1", iid, "approve", caller="alice")
    assert again["status"] == "pending" and again["approval"]["already_counted"] is True
    assert again["approval"]["counted"] is False and again["approval"]["approvals"] == 1
    flipped = qs.answer("r1", iid, "reject", caller="alice")  # a changed mind is not a second vote
    assert flipped["approval"]["already_counted"] is True and flipped["approval"]["rejections"] == 0
    assert core.store.get_tally("r1", iid).approvals == 1
    assert _types(core).count("approval_recorded") == 1


def test_the_requester_cannot_approve_and_nothing_changes(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, ApprovalPolicy(approvals=1))
    before = _types(core)
    with pytest.raises(ForbiddenError) as refused:
        qs.answer("r1", iid, "approve", caller="agent")
    assert refused.value.details["reason"] == "requester_cannot_approve"
    assert refused.value.details["requested_by"] == "agent"
    assert _types(core) == before and core.store.list_votes("r1", iid) == []
    found = core.store.get_interaction("r1", iid)
    assert found is not None and found.state.status == "pending"


def test_a_hosted_run_s_starter_is_the_requester(qs: QuestionService, core: Core) -> None:
    from baton.models import RunSummary

    now = core.now()
    core.store.create_run(
        RunSummary(run_id="h1", status="running", hosted=True, created_at=now, updated_at=now, started_by="dana")
    )
    iid = _ask(qs, ApprovalPolicy(approvals=1), run="h1")
    with pytest.raises(ForbiddenError) as refused:
        qs.answer("h1", iid, "approve", caller="dana")
    assert refused.value.details["reason"] == "requester_cannot_approve"
    assert qs.answer("h1", iid, "approve", caller="erin")["status"] == "answered"


def test_an_operator_not_in_approvers_nor_their_groups_gets_403(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, ApprovalPolicy(approvals=1, approvers=["alice", "group:release"]))
    with pytest.raises(ForbiddenError) as refused:
        qs.answer("r1", iid, "approve", caller="mallory", groups=frozenset({"interns"}))
    assert refused.value.details["reason"] == "not_an_approver"
    assert core.store.list_votes("r1", iid) == []
    done = qs.answer("r1", iid, "approve", caller="gus", groups=frozenset({"release"}))
    assert done["status"] == "answered" and done["approval"]["approved_by"] == ["gus"]


def test_any_rejection_rejects_and_delivers_the_rejection(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, TWO_OF_THREE, options=["ship", "hold"])
    qs.answer("r1", iid, "ship", caller="alice")
    rejected = qs.answer("r1", iid, "hold", caller="bob")
    assert rejected["status"] == "answered" and rejected["approval"]["decision"] == "rejected"
    found = core.store.get_interaction("r1", iid)
    assert found is not None and found.state.answer == "hold" and found.state.answered_by == "bob"
    assert "rejected" in (found.state.reason or "")
    assert _types(core).count("approval_rejected") == 1 and "quorum_reached" not in _types(core)


def test_majority_rejection_needs_a_majority_of_the_named_approvers(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"], rejection="majority"))
    one = qs.answer("r1", iid, "reject", caller="alice")
    assert one["status"] == "pending" and one["approval"]["rejections"] == 1
    two = qs.answer("r1", iid, "reject", caller="bob")
    assert two["status"] == "answered" and two["approval"]["decision"] == "rejected"
    found = core.store.get_interaction("r1", iid)
    assert found is not None and found.state.answer == "reject"


def test_majority_with_one_rejection_still_lets_the_quorum_approve(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"], rejection="majority"))
    qs.answer("r1", iid, "reject", caller="alice")
    qs.answer("r1", iid, "approve", caller="bob")
    done = qs.answer("r1", iid, "approve", caller="carol")
    assert done["approval"]["decision"] == "approved" and done["approval"]["rejected_by"] == ["alice"]


def test_an_approving_option_that_is_not_an_option_is_422(qs: QuestionService, core: Core) -> None:
    with pytest.raises(ValidationFailedError, match="approve_option"):
        _ask(qs, ApprovalPolicy(approve_option="yes"), options=["ship", "hold"])
    assert core.store.get_run("r1") is None  # refused before anything was written


def test_an_answer_that_casts_no_vote_is_422(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, TWO_OF_THREE)
    with pytest.raises(ValidationFailedError):
        qs.answer("r1", iid, "maybe", caller="alice")
    assert core.store.list_votes("r1", iid) == []


def test_policies_that_can_never_be_met_are_refused() -> None:
    with pytest.raises(ValidationError, match="can never be met"):
        ApprovalPolicy(approvals=3, approvers=["alice", "bob"])
    with pytest.raises(ValidationError):
        ApprovalPolicy(approvals=0)
    with pytest.raises(ValidationError, match="distinct"):
        ApprovalPolicy(approvals=1, approvers=["alice", "alice"])
    assert ApprovalPolicy(approvals=5, approvers=["group:release"]).rejections_needed == 1
    assert ApprovalPolicy(approvals=5, approvers=["group:release"], rejection="majority").rejections_needed == 5


def test_the_approving_option_defaults_to_the_first() -> None:
    policy = ApprovalPolicy(approvals=1)
    assert vote_of(policy, ["ship", "hold"], "ship") == ("approve", "ship")
    assert vote_of(policy, ["ship", "hold"], "hold") == ("reject", "hold")
    assert vote_of(ApprovalPolicy(approve_option="hold"), ["ship", "hold"], "hold") == ("approve", "hold")
    assert vote_of(policy, None, " Approve ") == ("approve", "approve")
    assert vote_of(policy, ["ship"], "other") is None


def test_threads_racing_on_two_of_three_release_once_with_two_votes(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, ApprovalPolicy(approvals=2, approvers=["group:ops"]))
    racers = 50
    barrier = threading.Barrier(racers)

    def vote(n: int) -> str:
        barrier.wait()
        try:
            return str(qs.answer("r1", iid, "approve", caller=f"op-{n}", groups=frozenset({"ops"}))["status"])
        except ConflictError:
            return "409"

    with ThreadPoolExecutor(racers) as pool:
        outcomes = list(pool.map(vote, range(racers)))
    assert len(core.store.list_votes("r1", iid)) == 2
    assert _types(core).count("quorum_reached") == 1 and _types(core).count("interaction_answered") == 1
    assert outcomes.count("409") == racers - 2


def test_an_await_gate_is_released_only_when_the_quorum_is_met(qs: QuestionService, core: Core) -> None:
    iid = _ask(qs, TWO_OF_THREE)
    parked: dict[str, Any] = qs.park_gate(run_id="r1", gate="g", token="tok-1", timeout_seconds=300, from_node="deploy")
    assert parked["released"] is False
    assert qs.answer("r1", iid, "approve", caller="alice")["resumed"] is False
    tokens = core.tokens
    assert isinstance(tokens, RecordingTaskTokens)
    assert tokens.sent == []
    done = qs.answer("r1", iid, "approve", caller="carol")
    assert done["resumed"] is True and done["released"] == ["g"]
    [(sent, token, output)] = tokens.sent
    assert (sent, token) == ("success", "tok-1") and output["answers"][0]["answer"] == "approve"
    wait = _store(core).get_wait("r1", "g")
    assert wait is not None and wait.status == "released"
