"""Quorum on the plain pause under concurrency on moto (the real adapter's transactions): 50 resumes at
once on a 2-of-3 blocking ask through the real API handler (IAM operators),
and 50 at once on a hosted `human_pause` run whose input declares the quorum (the ASL passes it to the
park Lambda): each is answered exactly once with exactly two votes, the execution resumed once; the
run's starter is refused with a 403 naming requester_cannot_approve."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from baton.errors import ConflictError
from baton.services.pauses import Resume
from tests.conftest import wait_for
from tests.integration.racing import call_api, event_types, operator, race

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


def test_fifty_resumes_on_a_two_of_three_blocking_ask_answer_it_once(moto_stack: MotoStack) -> None:
    approvers = [operator(n) for n in range(3)]
    ask = {
        "node": "drop",
        "question": "Drop the table?",
        "timeout_seconds": 600,
        "approval": {"approvals": 2, "approvers": approvers},
    }
    status, asked = call_api(moto_stack, operator(9), "POST", "/api/runs/ask-quorum/asks", ask)
    assert status == 201, asked
    iid = asked["interaction_id"]
    refused = call_api(
        moto_stack, operator(9), "POST", "/api/runs/ask-quorum/resume", {"answers": {"decision": "approve"}}
    )
    assert refused[0] == 403 and refused[1]["reason"] == "requester_cannot_approve", refused
    path = "/api/runs/ask-quorum/resume"
    results = race(
        lambda n: (n % 3, *call_api(moto_stack, operator(n % 3), "POST", path, {"answers": {"decision": "approve"}}))
    )
    by_operator: dict[int, set[int]] = defaultdict(set)
    for who, status, _ in results:
        by_operator[who].add(status)
    assert all(len(s) == 1 for s in by_operator.values()), by_operator  # the same request: the same result
    assert sorted(next(iter(s)) for s in by_operator.values()) == [200, 200, 409]
    store = moto_stack.services.core.store
    assert len(store.list_votes("ask-quorum", iid)) == 2 and store.get_tally("ask-quorum", iid).approvals == 2
    found = store.get_interaction("ask-quorum", iid)
    assert found is not None and found.state.status == "answered" and found.state.answer == {"decision": "approve"}
    types = event_types(moto_stack, "ask-quorum")
    assert types["approval_recorded"] == 2 and types["quorum_reached"] == 1 and types["interaction_answered"] == 1
    assert types["run_resumed"] == 1


def test_fifty_resumes_on_a_hosted_two_of_three_pause_resume_the_execution_once(moto_stack: MotoStack) -> None:
    runs, store = moto_stack.services.runs, moto_stack.services.core.store
    approvers = ["alice", "bob", "carol"]
    run = runs.start(
        "human_pause",
        {"prompt": "Ship?", "timeout_seconds": 600, "approval": {"approvals": 2, "approvers": approvers}},
        run_id="park-quorum",
        caller="starter",
    )
    wait_for(lambda: runs.get("park-quorum")["status"] == "paused_waiting_human")
    [pause] = store.list_run_interactions("park-quorum", kind="ask")
    assert pause.request.model_dump().get("approval", {}).get("approvals") == 2  # from the run input, via the ASL

    def vote(n: int) -> str:
        try:
            return str(runs.resume(Resume("park-quorum", {"decision": "approve"}, caller=approvers[n % 3]))["status"])
        except Exception as err:  # the 409s after the decision
            return type(err).__name__

    outcomes = Counter(race(vote))
    assert set(outcomes) <= {"answered", "pending", "ConflictError"}, outcomes
    assert len(store.list_votes("park-quorum", pause.interaction_id)) == 2
    sfn = moto_stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=run.execution_arn)["status"] == "SUCCEEDED")
    output = json.loads(sfn.describe_execution(executionArn=run.execution_arn)["output"])
    assert output["answers"] == {"decision": "approve"} and len(output["answered_by"].split(", ")) == 2
    types = event_types(moto_stack, "park-quorum")
    assert types["quorum_reached"] == 1 and types["interaction_answered"] == 1 and types["approval_recorded"] == 2
    assert types["run_resumed"] == 1


def test_a_vote_after_the_quorum_before_its_send_is_refused_not_taken_for_the_winners_resume(
    moto_stack: MotoStack,
) -> None:
    """The third approver's resume lands after two votes decided the pause but before their send: its answer
    equals the stored one, so it was taken for a repeat of the deciding resume (200, no `status`, 1 run in ~5
    of the 50-way race above). It is a vote that was not counted: a 409 naming the winner; and its request
    still delivers the stored answer (the send the deciders had not made yet)."""
    runs, store, core = moto_stack.services.runs, moto_stack.services.core.store, moto_stack.services.core
    approvers = ["alice", "bob", "carol"]
    run = runs.start(
        "human_pause",
        {"prompt": "Ship?", "timeout_seconds": 600, "approval": {"approvals": 2, "approvers": approvers}},
        run_id="late-voter",
        caller="starter",
    )
    wait_for(lambda: runs.get("late-voter")["status"] == "paused_waiting_human")
    [pause] = store.list_run_interactions("late-voter", kind="ask")
    pause_id = pause.interaction_id
    sends = core.release_gate
    core.release_gate = lambda *args, **kwargs: False  # type: ignore[method-assign]  # the deciders' send, not yet made
    try:
        assert runs.resume(Resume("late-voter", {"decision": "approve"}, caller="alice"))["status"] == "pending"
        assert runs.resume(Resume("late-voter", {"decision": "approve"}, caller="bob"))["status"] == "answered"
    finally:
        core.release_gate = sends  # type: ignore[method-assign]
    try:
        late = runs.resume(Resume("late-voter", {"decision": "approve"}, caller="carol"))
    except ConflictError as refused:
        assert refused.details["winner"]["by"] == store.get_interaction("late-voter", pause_id).state.answered_by
        assert set(str(refused.details["winner"]["by"]).split(", ")) == {"alice", "bob"}
    else:
        raise AssertionError(f"carol's uncounted vote answered 200: {late}")
    assert len(store.list_votes("late-voter", pause_id)) == 2
    sfn = moto_stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=run.execution_arn)["status"] == "SUCCEEDED")
