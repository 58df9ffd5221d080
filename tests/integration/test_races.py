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

from baton.contracts import AskRequest, ClaimInterrupt
from baton.domain.interrupt_spec import InterruptSpec
from baton.services.claims import ClaimService
from tests.conftest import wait_for
from tests.integration.racing import RACERS, Result, call_api, event_types, operator, race

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
    asked = moto_stack.services.questions.ask(
        "race-answer", AskRequest(node="draft", question="which?"), caller="agent"
    )
    path = f"/api/runs/race-answer/interactions/{asked['interaction_id']}/answer"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {"answer": f"answer {n}"}))
    won, losers = _one_winner(results)
    for body in losers:
        assert body["error"] == "conflict" and body["answer"] == f"answer {won}"
        assert body["winner"]["value"] == f"answer {won}" and body["winner"]["by"] == operator(won)
        assert body["winner"]["at"] and body["interaction"]["interaction_id"] == asked["interaction_id"]


def test_fifty_identical_answers_from_one_caller_all_get_the_same_200(moto_stack: MotoStack) -> None:
    asked = moto_stack.services.questions.ask("race-same", AskRequest(node="draft", question="which?"), caller="agent")
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


def _hosted_interrupt(stack: MotoStack, run_id: str) -> str:
    """A hosted run parked at statemachines/interrupt.asl.json: its interrupt stored and its token parked."""
    stack.services.runs.start("interrupt", {"prompt": "Ship?", "timeout_seconds": 60}, run_id=run_id, caller="op")
    store = stack.services.core.store
    [interrupt] = wait_for(lambda: store.list_run_interactions(run_id, kind="interrupt"), timeout=30)
    wait_for(lambda: store.get_wait(run_id, interrupt.request.node), timeout=30)
    return interrupt.interaction_id


def test_fifty_cancels_of_a_hosted_interrupt_one_winner_every_loser_names_it(moto_stack: MotoStack) -> None:
    """Issue 28 defect 7: a cancel that came while the winner was still failing the parked task was taken
    for a retry of the winner's and answered 200."""
    iid = _hosted_interrupt(moto_stack, "race-hosted-cancel")
    path = f"/api/v1/interrupts/{iid}/cancel"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {"reason": f"reason {n}"}))
    won, losers = _one_winner(results, loser_status=410)
    assert results[won][1]["workflowFailed"] is True
    for body in losers:
        assert body["error"] == "gone" and body["interrupt"]["id"] == iid
        assert body["winner"]["value"] == f"reason {won}" and body["winner"]["by"] == operator(won)
    types = event_types(moto_stack, "race-hosted-cancel")
    assert types["interrupt_cancelled"] == 1


def test_fifty_same_value_resumes_of_a_hosted_interrupt_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    """The same value from 50 operators: a resume that came while the winner was still sending the token was
    taken for a retry of the winner's (its same value) and answered 200."""
    iid = _hosted_interrupt(moto_stack, "race-hosted-resume")
    path = f"/api/v1/interrupts/{iid}/resume"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {"input": "ship"}))
    won, losers = _one_winner(results)
    assert results[won][1]["resumed"] is True
    for body in losers:
        assert body["error"] == "conflict" and body["interrupt"]["id"] == iid
        assert body["winner"]["by"] == operator(won) and body["winner"]["value"] == "ship"
    types = event_types(moto_stack, "race-hosted-resume")
    assert types["interrupt_resumed"] == 1 and types["run_resumed"] == 1


def test_fifty_same_answer_run_resumes_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    """The same answers from 50 operators at a parked pause: a loser whose request made the winner's send
    (still due) was answered 200 as if the resume were its own."""
    moto_stack.services.runs.start("human_pause", {"prompt": "Ship it?"}, run_id="race-run-same", caller="op")
    wait_for(lambda: moto_stack.services.core.store.get_wait("race-run-same", "approve"), timeout=30)
    path = "/api/runs/race-run-same/resume"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {"answers": {"choice": "ship"}}))
    won, losers = _one_winner(results)
    for body in losers:
        assert body["error"] == "conflict" and body["winner"]["by"] == operator(won)
    assert event_types(moto_stack, "race-run-same")["run_resumed"] == 1


HOLDER = "arn:aws:sts::123456789012:assumed-role/operators/holder"


def _claimed(stack: MotoStack, run_id: str) -> str:
    iid = _interrupt(stack, run_id)
    ClaimService(stack.services.interrupts).claim(iid, ClaimInterrupt(), operator=HOLDER)
    return iid


def test_fifty_take_overs_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    """A take-over overrides the claim it saw (`holder`): of 50 at once over one holder, one takes it and
    every other is told who holds it now. Before, a take-over that read the winner's fresh claim took it
    over too (7-11 of 50 got 200)."""
    iid = _claimed(moto_stack, "race-takeover")
    path = f"/api/v1/interrupts/{iid}/claim"
    body = {"force": True, "holder": HOLDER}
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, body | {"reason": f"mine {n}"}))
    won, losers = _one_winner(results)
    for body in losers:
        assert body["error"] == "conflict" and body["claimedBy"] == operator(won)
        assert body["winner"]["status"] == "claimed" and body["winner"]["by"] == operator(won)
    assert event_types(moto_stack, "race-takeover")["interrupt_claimed"] == 2  # the holder's, the winner's


def test_fifty_reassigns_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    """50 operators reassigning one claim (`holder`) to 50 people at once: the first write wins; a reassign
    decided on a holder that changed before its write is a 409 naming the new holder, never a silent
    override (before: all 50 got 200, each overriding the last)."""
    iid = _claimed(moto_stack, "race-reassign")
    path = f"/api/v1/interrupts/{iid}/reassign"
    target = "arn:aws:sts::123456789012:assumed-role/operators/to-{}".format
    body = {"reason": "cover", "holder": HOLDER}
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, body | {"to": target(n)}))
    won, losers = _one_winner(results)
    assert results[won][1]["interrupt"]["claimedBy"] == target(won)
    for body in losers:
        assert body["error"] == "conflict" and body["claimedBy"] == target(won)
        assert body["winner"]["status"] == "claimed" and body["winner"]["value"] == target(won)
    assert event_types(moto_stack, "race-reassign")["interrupt_reassigned"] == 1
