"""Identical concurrent requests through the real API handler on moto, now that the deciding write
itself tells a repeat from a rival (no Powertools Idempotency record): 50 threads released by one
barrier send the same resume, or the same last answer of an await gate, as one operator. All get the
same 200; the answer is recorded once, the run resumed once, the gate released once."""

from __future__ import annotations

import json
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from baton.local.http_adapter import to_proxy_event
from tests.conftest import wait_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.integration.conftest import MotoStack

RACERS = 50
OPERATOR = "arn:aws:sts::123456789012:assumed-role/operators/op-0"
Result = tuple[int, dict[str, Any]]


def _call(stack: MotoStack, path: str, body: Any) -> Result:
    event = to_proxy_event("POST", path, {"Content-Type": "application/json"}, json.dumps(body).encode(), "10.0.0.1")
    event["requestContext"]["identity"]["userArn"] = OPERATOR
    payload, errored = stack.dispatcher.invoke("api", event)
    assert not errored, payload
    return payload["statusCode"], json.loads(payload["body"])


def _race(request: Callable[[], Result]) -> list[Result]:
    barrier = threading.Barrier(RACERS)

    def one(_: int) -> Result:
        barrier.wait()
        return request()

    with ThreadPoolExecutor(RACERS) as pool:
        return list(pool.map(one, range(RACERS)))


def _types(stack: MotoStack, run_id: str) -> Counter[str]:
    return Counter(e.type for e in stack.services.core.store.list_events(run_id, limit=1000))


def test_fifty_identical_resumes_all_get_the_same_200_and_resume_once(moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 120}, run_id="same-resume", caller="op")
    wait_for(lambda: moto_stack.services.core.store.get_wait("same-resume", "approve"), timeout=30)
    results = _race(lambda: _call(moto_stack, "/api/runs/same-resume/resume", {"answers": {"ship": True}}))
    assert Counter(status for status, _ in results) == {200: RACERS}, results
    assert len({json.dumps(body, sort_keys=True) for _, body in results}) == 1
    assert results[0][1]["resumed"] is True
    types = _types(moto_stack, "same-resume")
    assert types["interaction_answered"] == 1 and types["run_resumed"] == 1


def test_fifty_identical_last_answers_all_get_the_same_200_and_release_once(moto_stack: MotoStack) -> None:
    services = moto_stack.services
    services.runs.start(
        "await_answers",
        {"from": "draft", "node": "draft", "timeout_seconds": 120, "questions": [{"question": "DB?"}]},
        run_id="same-answer",
        caller="op",
    )
    wait_for(lambda: services.core.store.get_wait("same-answer", "await"), timeout=30)
    [question] = services.questions.pending("same-answer")
    path = f"/api/runs/same-answer/interactions/{question.interaction_id}/answer"
    results = _race(lambda: _call(moto_stack, path, {"answer": "pg"}))
    assert Counter(status for status, _ in results) == {200: RACERS}, results
    assert len({json.dumps(body, sort_keys=True) for _, body in results}) == 1
    assert results[0][1]["resumed"] is True and results[0][1]["released"] == ["await"]
    types = _types(moto_stack, "same-answer")
    assert types["interaction_answered"] == 1 and types["await_released"] == 1 and types["run_resumed"] == 1
