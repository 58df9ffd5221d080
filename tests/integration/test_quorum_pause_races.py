"""Quorum on the plain pause under concurrency on moto (the real adapter's transactions): 50 resumes at
once on a 2-of-3 blocking ask through the real API handler (IAM operators, Idempotency on the table),
and 50 at once on a hosted `human_pause` run whose input declares the quorum (the ASL passes it to the
park Lambda): each is answered exactly once with exactly two votes, the execution resumed once; the
run's starter is refused with a 403 naming requester_cannot_approve."""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from baton.local.http_adapter import to_proxy_event
from tests.conftest import wait_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.integration.conftest import MotoStack

RACERS = 50


def _operator(n: int) -> str:
    return f"arn:aws:sts::123456789012:assumed-role/operators/op-{n}"


def _call(stack: MotoStack, caller: str, path: str, body: Any) -> tuple[int, dict[str, Any]]:
    event = to_proxy_event("POST", path, {"Content-Type": "application/json"}, json.dumps(body).encode(), "10.0.0.1")
    event["requestContext"]["identity"]["userArn"] = caller
    payload, errored = stack.dispatcher.invoke("api", event)
    assert not errored, payload
    return payload["statusCode"], json.loads(payload["body"])


def _race(request: Callable[[int], Any]) -> list[Any]:
    barrier = threading.Barrier(RACERS)

    def one(n: int) -> Any:
        barrier.wait()
        return request(n)

    with ThreadPoolExecutor(RACERS) as pool:
        return list(pool.map(one, range(RACERS)))


def _types(stack: MotoStack, run_id: str) -> Counter[str]:
    return Counter(e.type for e in stack.services.core.store.list_events(run_id, limit=1000))


def test_fifty_resumes_on_a_two_of_three_blocking_ask_answer_it_once(moto_stack: MotoStack) -> None:
    approvers = [_operator(n) for n in range(3)]
    ask = {
        "node": "drop",
        "question": "Drop the table?",
        "timeout_seconds": 600,
        "approval": {"approvals": 2, "approvers": approvers},
    }
    status, asked = _call(moto_stack, _operator(9), "/api/runs/ask-quorum/asks", ask)
    assert status == 201, asked
    iid = asked["interaction_id"]
    refused = _call(moto_stack, _operator(9), "/api/runs/ask-quorum/resume", {"answers": {"decision": "approve"}})
    assert refused[0] == 403 and refused[1]["reason"] == "requester_cannot_approve", refused
    path = "/api/runs/ask-quorum/resume"
    results = _race(lambda n: (n % 3, *_call(moto_stack, _operator(n % 3), path, {"answers": {"decision": "approve"}})))
    by_operator: dict[int, set[int]] = defaultdict(set)
    for who, status, _ in results:
        by_operator[who].add(status)
    assert all(len(s) == 1 for s in by_operator.values()), by_operator  # the same request: the same result
    assert sorted(next(iter(s)) for s in by_operator.values()) == [200, 200, 409]
    store = moto_stack.services.core.store
    assert len(store.list_votes("ask-quorum", iid)) == 2 and store.get_tally("ask-quorum", iid).approvals == 2
    found = store.get_interaction("ask-quorum", iid)
    assert found is not None and found.state.status == "answered" and found.state.answer == {"decision": "approve"}
    types = _types(moto_stack, "ask-quorum")
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
            return str(runs.resume("park-quorum", {"decision": "approve"}, caller=approvers[n % 3])["status"])
        except Exception as err:  # the 409s after the decision
            return type(err).__name__

    outcomes = Counter(_race(vote))
    assert set(outcomes) <= {"answered", "pending", "ConflictError"}, outcomes
    assert len(store.list_votes("park-quorum", pause.interaction_id)) == 2
    sfn = moto_stack.clients["stepfunctions"]
    wait_for(lambda: sfn.describe_execution(executionArn=run.execution_arn)["status"] == "SUCCEEDED")
    output = json.loads(sfn.describe_execution(executionArn=run.execution_arn)["output"])
    assert output["answers"] == {"decision": "approve"} and len(output["answered_by"].split(", ")) == 2
    types = _types(moto_stack, "park-quorum")
    assert types["quorum_reached"] == 1 and types["interaction_answered"] == 1 and types["approval_recorded"] == 2
    assert types["run_resumed"] == 1
