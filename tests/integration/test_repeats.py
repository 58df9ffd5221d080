"""Identical concurrent requests through the real API handler on moto, now that the deciding write
itself tells a repeat from a rival (no Powertools Idempotency record): 50 threads released by one
barrier send the same resume, or the same last answer of an await gate, as one operator. All get the
same 200; the answer is recorded once, the run resumed once, the gate released once."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from tests.conftest import wait_for
from tests.integration.racing import RACERS, call_api, event_types, operator, race

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

OPERATOR = operator(0)


def test_fifty_identical_resumes_all_get_the_same_200_and_resume_once(moto_stack: MotoStack) -> None:
    runs = moto_stack.services.runs
    runs.start("human_pause", {"prompt": "Ship?", "timeout_seconds": 120}, run_id="same-resume", caller="op")
    wait_for(lambda: moto_stack.services.core.store.get_wait("same-resume", "approve"), timeout=30)
    results = race(
        lambda _: call_api(moto_stack, OPERATOR, "POST", "/api/runs/same-resume/resume", {"answers": {"ship": True}})
    )
    assert Counter(status for status, _ in results) == {200: RACERS}, results
    assert len({json.dumps(body, sort_keys=True) for _, body in results}) == 1
    assert results[0][1]["resumed"] is True
    types = event_types(moto_stack, "same-resume")
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
    results = race(lambda _: call_api(moto_stack, OPERATOR, "POST", path, {"answer": "pg"}))
    assert Counter(status for status, _ in results) == {200: RACERS}, results
    assert len({json.dumps(body, sort_keys=True) for _, body in results}) == 1
    assert results[0][1]["resumed"] is True and results[0][1]["released"] == ["await"]
    types = event_types(moto_stack, "same-answer")
    assert types["interaction_answered"] == 1 and types["await_released"] == 1 and types["run_resumed"] == 1
