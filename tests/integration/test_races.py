"""50-way races through the real API handler (the dispatcher's handler copies,
moto as DynamoDB): 50 threads released by one barrier send answer, resume (an interrupt's, and a
run's `POST /api/runs/{id}/resume` at a parked ask), claim and cancel at once.

Exactly one request wins; every loser's conflict carries the winner (value, who, when) next to the
record in the route's shape; a holder re-claiming its own claim gets 200; identical concurrent
requests from one caller all get the first one's 200. The callers are IAM operators, as the deployed
machines' API sees them."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from baton.domain.interrupt_spec import InterruptSpec
from tests.conftest import wait_for
from tests.integration.racing import RACERS, Result, call_api, operator, race

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


def _one_winner(results: list[Result], loser_status: int = 409) -> tuple[int, list[dict[str, Any]]]:
    statuses = Counter(status for status, _ in results)
    assert statuses == {200: 1, loser_status: RACERS - 1}, statuses
    won = next(n for n, (status, _) in enumerate(results) if status == 200)
    return won, [body for status, body in results if status != 200]


def _interrupt(stack: MotoStack, run_id: str) -> str:
    created, _ = stack.services.interrupts.create(InterruptSpec(session_id=run_id, prompt="deploy?"), caller="agent")
    return created.interaction_id


def test_fifty_answers_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    asked = moto_stack.services.questions.ask("race-answer", node="draft", question="which?", caller="agent")
    path = f"/api/runs/race-answer/interactions/{asked['interaction_id']}/answer"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {"answer": f"answer {n}"}))
    won, losers = _one_winner(results)
    for body in losers:
        assert body["error"] == "conflict" and body["answer"] == f"answer {won}"
        assert body["winner"]["value"] == f"answer {won}" and body["winner"]["by"] == operator(won)
        assert body["winner"]["at"] and body["interaction"]["interaction_id"] == asked["interaction_id"]


def test_fifty_identical_answers_from_one_caller_all_get_the_same_200(moto_stack: MotoStack) -> None:
    asked = moto_stack.services.questions.ask("race-same", node="draft", question="which?", caller="agent")
    path = f"/api/runs/race-same/interactions/{asked['interaction_id']}/answer"
    results = race(lambda _: call_api(moto_stack, operator(0), "POST", path, {"answer": "postgres"}))
    assert Counter(status for status, _ in results) == {200: RACERS}
    assert len({json.dumps(body, sort_keys=True) for _, body in results}) == 1


def test_fifty_resumes_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    iid = _interrupt(moto_stack, "race-resume")
    path = f"/api/v1/interrupts/{iid}/resume"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {"input": f"value {n}"}))
    won, losers = _one_winner(results)
    for body in losers:
        assert body["error"] == "conflict" and body["interrupt"]["id"] == iid  # the route's shape
        assert body["interrupt"]["value"] == f"value {won}"
        assert body["winner"]["value"] == f"value {won}" and body["winner"]["by"] == operator(won)
        assert body["winner"]["at"]


def test_fifty_claims_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    iid = _interrupt(moto_stack, "race-claim")
    path = f"/api/v1/interrupts/{iid}/claim"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {}))
    won, losers = _one_winner(results)
    for body in losers:
        assert body["error"] == "conflict" and body["claimedBy"] == operator(won)
        assert body["winner"] == {
            "status": "claimed",
            "value": operator(won),
            "by": operator(won),
            "at": body["claimedAt"],
        }
        assert body["interrupt"]["id"] == iid


def test_fifty_self_reclaims_are_all_200(moto_stack: MotoStack) -> None:
    iid = _interrupt(moto_stack, "race-reclaim")
    path = f"/api/v1/interrupts/{iid}/claim"
    results = race(lambda _: call_api(moto_stack, operator(7), "POST", path, {}))
    assert Counter(status for status, _ in results) == {200: RACERS}
    assert Counter(body["changed"] for _, body in results) == {True: 1, False: RACERS - 1}
    assert {body["interrupt"]["claimedBy"] for _, body in results} == {operator(7)}


def test_fifty_cancels_one_winner_every_loser_names_it(moto_stack: MotoStack) -> None:
    iid = _interrupt(moto_stack, "race-cancel")
    path = f"/api/v1/interrupts/{iid}/cancel"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {"reason": f"reason {n}"}))
    # A cancel that comes second finds the interrupt cancelled: 410 (as a sequential second cancel does).
    won, losers = _one_winner(results, loser_status=410)
    for body in losers:
        assert body["error"] == "gone" and body["interrupt"]["id"] == iid
        assert body["winner"]["value"] == f"reason {won}" and body["winner"]["by"] == operator(won)
        assert body["winner"]["status"] == "cancelled" and body["winner"]["at"]


def test_fifty_run_resumes_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    moto_stack.services.runs.start("human_pause", {"prompt": "Ship it?"}, run_id="race-run-resume", caller="op")
    wait_for(lambda: moto_stack.services.core.store.get_wait("race-run-resume", "approve"), timeout=30)
    path = "/api/runs/race-run-resume/resume"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {"answers": {"choice": n}}))
    won, losers = _one_winner(results)
    assert results[won][1]["resumed"] is True
    for body in losers:
        assert body["error"] == "conflict" and body["interaction"]["request"]["node"] == "approve"  # the route's shape
        assert body["interaction"]["status"] == "answered" and body["interaction"]["answer"] == {"choice": won}
        assert body["winner"]["value"] == {"choice": won} and body["winner"]["by"] == operator(won)
        assert body["winner"]["status"] == "answered" and body["winner"]["at"]
    wait = moto_stack.services.core.store.get_wait("race-run-resume", "approve")
    assert wait is not None and wait.status == "released"  # one send, recorded once
    events = moto_stack.services.core.store.list_events("race-run-resume", limit=1000)
    assert [e.type for e in events].count("run_resumed") == 1
