"""Quorum on the plain human pause (in-memory store): an agent's blocking ask and a hosted run's `park`
pause, both answered with `RunService.resume` (baton/services/pause_answers.py). Each resume is one vote
under answers.decision; the requester (the asking agent; the hosted run's starter) and non-approvers get
a 403 that writes nothing; the same operator twice counts once; the quorum answers the pause with the
deciding approver's answers and sends the token once (also under 50 threads); a vote after it is a 409."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from baton.domain.approval import ApprovalPolicy
from baton.domain.gate_payloads import ParkPayload
from baton.errors import ConflictError, ForbiddenError, ValidationFailedError
from baton.models import RunSummary
from baton.services.asks import AskService, BlockingAsk
from baton.services.core import Core
from baton.services.pauses import Resume
from baton.services.runs import RunService
from tests.fakes import RecordingTaskTokens

TWO_OF_THREE = ApprovalPolicy(approvals=2, approvers=["alice", "bob", "carol"])


def _sent(core: Core) -> list[Any]:
    assert isinstance(core.tokens, RecordingTaskTokens)
    return list(core.tokens.sent)


def _types(core: Core, run_id: str) -> Counter[str]:
    return Counter(e.type for e in core.store.list_events(run_id, limit=500))


def _blocking(core: Core, policy: ApprovalPolicy = TWO_OF_THREE, options: list[str] | None = None) -> str:
    asked = AskService(core).ask(
        BlockingAsk(
            "agent-1",
            node="drop",
            question="Drop the table?",
            timeout_seconds=600,
            caller="agent",
            approval=policy,
            options=options,
        )
    )
    return asked.interaction_id


def _hosted(core: Core, runs: RunService, policy: ApprovalPolicy = TWO_OF_THREE) -> str:
    now = core.now()
    core.store.create_run(
        RunSummary(run_id="h1", status="running", created_at=now, updated_at=now, hosted=True, started_by="starter")
    )
    parked = runs.park(
        ParkPayload(run_id="h1", node="approve", token="tok-h1", prompt="Ship?", timeout_seconds=600, approval=policy)
    )
    return parked.interaction_id


def test_a_blocking_ask_needs_two_of_three_and_delivers_the_deciding_answers(core: Core, runs: RunService) -> None:
    iid = _blocking(core)
    first = runs.resume(Resume("agent-1", {"decision": "approve", "note": "ok"}, caller="alice"))
    assert first["status"] == "pending" and first["resumed"] is False and first["approval"]["approvals"] == 1
    again = runs.resume(Resume("agent-1", {"decision": "approve"}, caller="alice"))  # counted once
    assert again["approval"]["already_counted"] is True and again["approval"]["approvals"] == 1
    assert AskService(core).get("agent-1", iid).state.status == "pending"
    second = runs.resume(Resume("agent-1", {"decision": "approve", "note": "go"}, caller="bob"))
    assert second["status"] == "answered" and second["resumed"] is True
    assert second["approval"]["decision"] == "approved" and second["approval"]["approved_by"] == ["alice", "bob"]
    done = AskService(core).get("agent-1", iid)
    assert done.state.status == "answered" and done.state.answer == {"decision": "approve", "note": "go"}
    assert done.state.answered_by == "alice, bob"
    with pytest.raises(ConflictError):  # after the decision
        runs.resume(Resume("agent-1", {"decision": "approve"}, caller="carol"))
    types = _types(core, "agent-1")
    assert types["approval_recorded"] == 2 and types["quorum_reached"] == 1 and types["interaction_answered"] == 1
    assert types["run_resumed"] == 1


def test_the_asking_agent_and_a_non_approver_are_refused_and_nothing_is_written(core: Core, runs: RunService) -> None:
    policy = ApprovalPolicy(approvals=1)  # any operator but the requester
    iid = _blocking(core, policy)
    with pytest.raises(ForbiddenError) as refused:
        runs.resume(Resume("agent-1", {"decision": "approve"}, caller="agent"))
    assert refused.value.details["reason"] == "requester_cannot_approve"
    iid2 = _blocking(core)
    with pytest.raises(ForbiddenError) as outsider:
        runs.resume(Resume("agent-1", {"decision": "approve"}, caller="mallory", node="drop"))
    assert outsider.value.details["reason"] == "not_an_approver"
    with pytest.raises(ValidationFailedError):  # a vote must say approve or reject
        runs.resume(Resume("agent-1", {"ship": True}, caller="alice"))
    assert core.store.list_votes("agent-1", iid) == [] and core.store.list_votes("agent-1", iid2) == []


def test_a_rejection_answers_the_ask_with_the_rejecting_answers(core: Core, runs: RunService) -> None:
    iid = _blocking(core)
    result = runs.resume(Resume("agent-1", {"decision": "reject", "why": "no backup"}, caller="carol"))
    assert result["status"] == "answered" and result["approval"]["decision"] == "rejected"
    done = AskService(core).get("agent-1", iid)
    assert done.state.answer == {"decision": "reject", "why": "no backup"} and done.state.answered_by == "carol"
    assert _types(core, "agent-1")["approval_rejected"] == 1


def test_with_options_the_approve_option_approves(core: Core, runs: RunService) -> None:
    policy = ApprovalPolicy(approvals=1, approvers=["alice"], approve_option="yes")
    _blocking(core, policy, options=["no", "yes"])
    with pytest.raises(ValidationFailedError):
        runs.resume(Resume("agent-1", {"decision": "approve"}, caller="alice"))  # with options: one of them
    assert runs.resume(Resume("agent-1", {"decision": "yes"}, caller="alice"))["approval"]["decision"] == "approved"
    with pytest.raises(ValidationFailedError):  # an approve_option that is not an option: 422, nothing stored
        _blocking(core, ApprovalPolicy(approvals=1, approve_option="maybe"), options=["no", "yes"])


def test_a_hosted_park_pause_refuses_the_run_s_starter_and_sends_the_token_once(core: Core, runs: RunService) -> None:
    iid = _hosted(core, runs)
    with pytest.raises(ForbiddenError) as refused:
        runs.resume(Resume("h1", {"decision": "approve"}, caller="starter"))
    assert refused.value.details["reason"] == "requester_cannot_approve"
    assert runs.resume(Resume("h1", {"decision": "approve"}, caller="alice"))["resumed"] is False
    assert _sent(core) == []
    assert runs.resume(Resume("h1", {"decision": "approve", "env": "prod"}, caller="bob"))["resumed"] is True
    [(kind, token, output)] = _sent(core)
    assert (kind, token) == ("success", "tok-h1")
    assert output["answers"] == {"decision": "approve", "env": "prod"} and output["answered_by"] == "alice, bob"
    found = core.store.get_interaction("h1", iid)
    assert found is not None and found.state.status == "answered"


RACERS = 50


def test_fifty_concurrent_votes_on_a_two_of_three_park_send_the_token_once(core: Core, runs: RunService) -> None:
    iid = _hosted(core, runs)
    barrier = threading.Barrier(RACERS)
    voters = ["alice", "bob", "carol"]

    def vote(n: int) -> str:
        barrier.wait()
        try:
            return str(runs.resume(Resume("h1", {"decision": "approve"}, caller=voters[n % 3]))["status"])
        except ConflictError:
            return "409"

    with ThreadPoolExecutor(RACERS) as pool:
        outcomes = Counter(pool.map(vote, range(RACERS)))
    assert outcomes["answered"] >= 1 and set(outcomes) <= {"answered", "pending", "409"}, outcomes
    assert len(core.store.list_votes("h1", iid)) == 2 and core.store.get_tally("h1", iid).approvals == 2
    assert len(_sent(core)) == 1  # one release
    types = _types(core, "h1")
    assert types["approval_recorded"] == 2 and types["quorum_reached"] == 1 and types["interaction_answered"] == 1
