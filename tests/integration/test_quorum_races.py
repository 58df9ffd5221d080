"""Quorum under concurrency on moto (the real DynamoDB adapter's transactions): 50 approvals at once on
a 2-of-3 question, through the real API handler (IAM operators), and 50
members of one approver group voting at once through the service. Each answers the question exactly
once with exactly two approvals recorded; every vote after the quorum is a 409."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from baton.contracts import AskRequest
from baton.domain.approval import ApprovalPolicy
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import ConflictError
from tests.integration.racing import RACERS, call_api, event_types, operator, race

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


def test_fifty_approvals_on_two_of_three_release_once_with_two_recorded(moto_stack: MotoStack) -> None:
    approvers = [operator(n) for n in range(3)]
    policy = ApprovalPolicy(approvals=2, approvers=approvers)
    asked = moto_stack.services.questions.ask(
        "quorum-api", AskRequest(node="deploy", question="ship?", approval=policy), caller="agent"
    )
    iid = asked["interaction_id"]
    path = f"/api/runs/quorum-api/interactions/{iid}/answer"
    results = race(lambda n: (n % 3, *call_api(moto_stack, operator(n % 3), "POST", path, {"answer": "approve"})))
    by_operator: dict[int, set[int]] = defaultdict(set)
    for who, status, _ in results:
        by_operator[who].add(status)
    assert all(len(statuses) == 1 for statuses in by_operator.values()), by_operator  # twins agree
    assert sorted(next(iter(s)) for s in by_operator.values()) == [200, 200, 409]
    store = moto_stack.services.core.store
    votes = store.list_votes("quorum-api", iid)
    assert len(votes) == 2 and {v.operator for v in votes} < set(approvers)
    assert store.get_tally("quorum-api", iid).approvals == 2
    found = store.get_interaction("quorum-api", iid)
    assert found is not None and found.state.status == "answered" and found.state.answer == "approve"
    types = event_types(moto_stack, "quorum-api")
    assert types["approval_recorded"] == 2 and types["quorum_reached"] == 1 and types["interaction_answered"] == 1
    conflict = next(body for _, status, body in results if status == 409)
    assert conflict["error"] == "conflict" and conflict["winner"]["status"] == "answered"


def test_fifty_group_members_at_once_answer_it_once_with_two_votes(moto_stack: MotoStack) -> None:
    questions = moto_stack.services.questions
    policy = ApprovalPolicy(approvals=2, approvers=["group:release"])
    iid = questions.ask("quorum-group", AskRequest(node="deploy", question="ship?", approval=policy), caller="agent")[
        "interaction_id"
    ]

    def vote(n: int) -> str:
        try:
            return str(
                questions.answer("quorum-group", iid, "approve", caller=f"op-{n}", groups=frozenset({"release"}))[
                    "status"
                ]
            )
        except ConflictError:
            return "409"

    outcomes = Counter(race(vote))
    assert outcomes["409"] == RACERS - 2, outcomes
    store = moto_stack.services.core.store
    assert len(store.list_votes("quorum-group", iid)) == 2
    types = event_types(moto_stack, "quorum-group")
    assert types["quorum_reached"] == 1 and types["interaction_answered"] == 1 and types["approval_recorded"] == 2


def test_fifty_resumes_on_a_two_of_three_interrupt_resume_it_once(moto_stack: MotoStack) -> None:
    approvers = [operator(n) for n in range(3)]
    spec = InterruptSpec(
        session_id="quorum-int", prompt="deploy?", approval=ApprovalPolicy(approvals=2, approvers=approvers)
    )
    created, _ = moto_stack.services.interrupts.create(spec, caller="agent")
    path = f"/api/v1/interrupts/{created.interaction_id}/resume"
    results = race(lambda n: (n % 3, *call_api(moto_stack, operator(n % 3), "POST", path, {"input": "go"})))
    statuses = sorted({(who, status) for who, status, _ in results})
    assert sorted(status for _, status in statuses) == [200, 200, 409], statuses
    store = moto_stack.services.core.store
    assert len(store.list_votes("quorum-int", created.interaction_id)) == 2
    found = store.get_interaction("quorum-int", created.interaction_id)
    assert found is not None and found.state.status == "answered"
    types = event_types(moto_stack, "quorum-int")
    assert types["interrupt_resumed"] == 1 and types["quorum_reached"] == 1 and types["approval_recorded"] == 2
