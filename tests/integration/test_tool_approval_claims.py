"""Claims on tool approvals (issue 30 item 1) on moto with the real store, through the real resolver:
claim, a second claimer's 409 naming the holder, a take-over with force and a reason, renew, release,
reassign, a lapsed lease read as free, answering open to any operator while claimed, and 50 claims at
once with exactly one winner."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from baton.api import deps
from baton.api.auth import operator_token
from tests.integration.racing import RACERS, call_api, event_types, operator, race
from tests.integration.test_tool_approvals import RUN, TOKEN, Api

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


def _as(api: Api, who: str, verb: str, approval: str, body: Any = None) -> tuple[int, Any]:
    path = f"/api/runs/{RUN}/tool-approvals/{approval}/{verb}"
    return api.call("POST", path, body if body is not None else {}, token=operator_token(TOKEN, who))


def _pending(api: Api) -> str:
    status, asked = api.ask({"path": "notes.md"}, timeout_seconds=600)  # outlives a 60 s lease
    assert status == 201, asked
    return str(asked["interaction_id"])


def test_claim_conflict_take_over_release_and_the_answer_stays_open(api: Api) -> None:
    approval = _pending(api)
    status, claimed = _as(api, "alice", "claim", approval)
    assert status == 200 and claimed["claimed"] is True and claimed["changed"] is True, claimed
    assert claimed["approval"]["claimed_by"] == "alice" and claimed["approval"]["lease_expires_at"]
    assert api.get(approval)["claimed_by"] == "alice"
    status, again = _as(api, "alice", "claim", approval)
    assert (status, again["changed"]) == (200, False)

    status, refused = _as(api, "bob", "claim", approval)
    assert status == 409 and refused["claimedBy"] == "alice" and "alice" in refused["message"], refused
    assert refused["winner"]["status"] == "claimed" and refused["winner"]["by"] == "alice"
    assert refused["interaction"]["interaction_id"] == approval
    assert _as(api, "bob", "claim", approval, {"force": True})[0] == 422  # a take-over needs a reason
    status, taken = _as(api, "bob", "claim", approval, {"force": True, "reason": "alice is out"})
    assert status == 200 and taken["approval"]["claimed_by"] == "bob", taken

    status, refused = _as(api, "alice", "claim/release", approval)
    assert status == 409 and refused["claimedBy"] == "bob"
    status, renewed = _as(api, "bob", "claim/renew", approval, {"leaseSeconds": 600})
    assert status == 200 and renewed["approval"]["claimed_by"] == "bob"
    assert _as(api, "alice", "claim/renew", approval)[0] == 409
    status, released = _as(api, "bob", "claim/release", approval)
    assert status == 200 and released["claimed"] is False and released["approval"]["claimed_by"] is None
    assert _as(api, "bob", "claim/release", approval)[1]["changed"] is False

    status, assigned = _as(api, "carol", "reassign", approval, {"to": "dave"})
    assert status == 200 and assigned["approval"]["claimed_by"] == "dave"
    # advisory: an operator who does not hold the claim still answers it
    status, answered = api.answer(approval, {"decision": "deny", "reason": "no"}, by="erin")
    assert status == 200 and answered["status"] == "answered", answered
    status, refused = _as(api, "alice", "claim", approval)
    assert status == 409 and "already decided" in refused["message"], refused

    types = [e.type for e in api.core.store.list_events(RUN)]
    assert types.count("interrupt_claimed") == 2 and types.count("interrupt_claim_released") == 1
    assert types.count("interrupt_claim_renewed") == 1 and types.count("interrupt_reassigned") == 1


def test_a_lapsed_lease_is_read_as_free_and_claimed_without_force(api: Api) -> None:
    approval = _pending(api)
    assert _as(api, "alice", "claim", approval, {"leaseSeconds": 60})[0] == 200
    api.clock.advance(61)
    assert api.get(approval)["claimed_by"] is None
    status, claimed = _as(api, "bob", "claim", approval)
    assert status == 200 and claimed["approval"]["claimed_by"] == "bob", claimed


def test_unknown_approval_is_404(api: Api) -> None:
    assert _as(api, "alice", "claim", "nope")[0] == 404


def test_fifty_claims_one_winner_every_409_names_it(moto_stack: MotoStack) -> None:
    run_id = "race-tool-claim"
    call = {"tool": "run_shell", "arguments": {"command": "make deploy"}}
    asked = {"call": call, "reason": "deploy", "timeout_seconds": 600, "session": "s1"}
    status, created = call_api(moto_stack, operator(0), "POST", f"/api/runs/{run_id}/tool-approvals", asked)
    assert status == 201, created
    approval = created["interaction_id"]
    path = f"/api/runs/{run_id}/tool-approvals/{approval}/claim"
    results = race(lambda n: call_api(moto_stack, operator(n), "POST", path, {}))
    statuses = Counter(status for status, _ in results)
    assert statuses == {200: 1, 409: RACERS - 1}, statuses
    won = next(n for n, (status, _) in enumerate(results) if status == 200)
    for status, body in results:
        if status == 409:
            assert body["error"] == "conflict" and body["claimedBy"] == operator(won)
            assert body["winner"] == {
                "status": "claimed",
                "value": operator(won),
                "by": operator(won),
                "at": body["claimedAt"],
            }
            assert body["interaction"]["interaction_id"] == approval
    assert event_types(moto_stack, run_id)["interrupt_claimed"] == 1
