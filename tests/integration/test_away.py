"""Operators away (issue 32 item 4) on moto with the real store, through the real resolver: an operator
sets, reads and clears their own away; bad times, themself as delegate, an agent and a delegate who is
away too are refused; a quorum seat of an away approver is filled by their delegate once (the vote's
event names both), never by the requester; the decision log still verifies."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest

from baton.api import deps
from baton.api.auth import agent_token, operator_token
from baton.contracts import AskRequest
from baton.domain.approval import ApprovalPolicy
from baton.domain.deadline import INTERACTION_GATE
from baton.domain.gate_payloads import GateDeadlinePayload
from baton.ids import iso, parse_iso
from baton.models import RunSummary
from baton.services.audit import AuditService
from baton.services.deadline_timers import Deadlines
from baton.services.reconciler import Reconciler
from tests.fakes.notifier import RecordingNotifier
from tests.integration.resolver import TOKEN, ResolverOnMoto

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

PATH = "/api/me/away"
RUN = "away-1"
BACK = {"operator": "alice", "away": False, "until": None, "delegate": None, "set_at": None, "standing_in_for": []}


def as_(name: str) -> str:
    return operator_token(TOKEN, name)


class Api(ResolverOnMoto):
    def in_days(self, days: float) -> str:
        return iso(self.clock.now() + timedelta(days=days))

    def away(self, name: str, delegate: str, days: float = 7) -> tuple[int, object]:
        return self.call("PUT", PATH, {"until": self.in_days(days), "delegate": delegate}, token=as_(name))


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    deps.set_services_provider(deps._default_provider)


def test_an_operator_sets_reads_and_clears_their_own_away(api: Api) -> None:
    assert api.call("GET", PATH, token=as_("alice")) == (200, BACK)
    until = api.in_days(7)
    status, body = api.call("PUT", PATH, {"until": until, "delegate": "bob"}, token=as_("alice"))
    assert status == 200, body
    assert body == {
        "operator": "alice",
        "away": True,
        "until": until,
        "delegate": "bob",
        "set_at": api.core.now(),
        "standing_in_for": [],
    }
    assert api.call("GET", PATH, token=as_("alice")) == (200, body)
    status, bobs = api.call("GET", PATH, token=as_("bob"))  # one's own: bob is here, standing in for alice
    assert (status, bobs["away"], bobs["standing_in_for"]) == (200, False, [{"operator": "alice", "until": until}])
    assert api.call("DELETE", PATH, token=as_("alice")) == (200, BACK)
    assert api.call("GET", PATH, token=as_("alice"))[1] == BACK


def test_an_away_that_has_passed_reads_as_back(api: Api) -> None:
    assert api.away("alice", "bob", days=1)[0] == 200
    api.clock.advance(86401)
    assert api.call("GET", PATH, token=as_("alice"))[1] == BACK


@pytest.mark.parametrize(
    ("days", "delegate", "path"),
    [(-1, "bob", "until"), (0, "bob", "until"), (90.01, "bob", "until"), (7, "alice", "delegate")],
)
def test_a_past_a_far_or_a_self_delegated_away_is_a_422(api: Api, days: float, delegate: str, path: str) -> None:
    status, body = api.away("alice", delegate, days=days)
    assert status == 422 and body["path"] == path, body
    assert api.call("GET", PATH, token=as_("alice"))[1]["away"] is False


def test_a_body_that_fails_its_model_is_a_422(api: Api) -> None:
    for body in ({"until": "soon", "delegate": "bob"}, {"until": api.in_days(1)}, {"delegate": "bob"}):
        assert api.call("PUT", PATH, body, token=as_("alice"))[0] == 422, body


def test_a_delegate_who_is_away_too_is_a_409_naming_them(api: Api) -> None:
    assert api.away("bob", "carol")[0] == 200
    status, body = api.away("alice", "bob")
    assert status == 409 and "bob is away too" in body["message"] and body["delegate"] == "bob", body
    assert api.call("GET", PATH, token=as_("alice"))[1]["away"] is False


def test_an_agent_may_not_set_read_or_clear_an_away(api: Api) -> None:
    agent = agent_token(TOKEN, RUN)
    for method in ("PUT", "GET", "DELETE"):
        body = {"until": api.in_days(1), "delegate": "bob"} if method == "PUT" else None
        assert api.call(method, PATH, body, token=agent)[0] == 403, method


def _quorum(api: Api, approvers: list[str], *, asked_by: str = "agent", approvals: int = 2) -> str:
    now = api.core.now()
    if api.core.store.get_run(RUN) is None:
        api.core.store.create_run(RunSummary(run_id=RUN, status="running", created_at=now, updated_at=now))
    policy = ApprovalPolicy(approvals=approvals, approvers=approvers)
    asked = api.call(
        "POST",
        f"/api/runs/{RUN}/questions",
        AskRequest(node="deploy", question="ship?", approval=policy).model_dump(exclude_none=True),
        token=as_(asked_by),
    )
    assert asked[0] == 201, asked
    return str(asked[1]["interaction_id"])


def _vote(api: Api, iid: str, who: str, answer: str = "approve") -> tuple[int, dict[str, object]]:
    return api.call("POST", f"/api/runs/{RUN}/interactions/{iid}/answer", {"answer": answer}, token=as_(who))  # type: ignore[return-value]


def test_the_delegate_votes_in_the_away_approvers_seat_once(api: Api) -> None:
    iid = _quorum(api, ["alice", "carol"])
    assert _vote(api, iid, "bob")[0] == 403  # not an approver, and alice is here
    assert api.away("alice", "bob")[0] == 200
    status, first = _vote(api, iid, "bob")
    assert status == 200 and first["status"] == "pending", first
    again = _vote(api, iid, "bob")  # the seat is filled: counted once
    assert again[0] == 200 and api.core.store.get_tally(RUN, iid).approvals == 1, again
    votes = api.core.store.list_votes(RUN, iid)
    assert [(v.operator, v.vote) for v in votes] == [("alice", "approve")]
    status, last = _vote(api, iid, "carol")
    assert status == 200 and last["status"] == "answered", last
    records = AuditService(api.core.store).page(RUN, limit=100).records
    cast = [r.data for r in records if r.type == "approval_recorded"]
    away = api.core.store.get_away("alice")
    assert away is not None
    assert cast[0]["by"] == "bob" and cast[0]["on_behalf_of"] == "alice", cast
    assert cast[0]["note"] == f"for alice (away until {away.until})"
    assert cast[1]["by"] == "carol" and "on_behalf_of" not in cast[1]
    verdict = AuditService(api.core.store).verify(RUN)
    assert verdict.valid and not verdict.unchained, verdict.first_mismatch


def test_the_requester_may_not_vote_even_as_a_delegate(api: Api) -> None:
    iid = _quorum(api, ["alice", "carol"], asked_by="bob")
    assert api.away("alice", "bob")[0] == 200
    status, body = _vote(api, iid, "bob")
    assert status == 403 and body["reason"] == "requester_cannot_approve", body
    assert api.core.store.list_votes(RUN, iid) == []


def test_a_delegate_with_a_seat_of_their_own_votes_once(api: Api) -> None:
    iid = _quorum(api, ["alice", "bob", "carol"])
    assert api.away("alice", "bob")[0] == 200
    assert _vote(api, iid, "bob")[0] == 200
    assert _vote(api, iid, "bob")[0] == 200
    assert [v.operator for v in api.core.store.list_votes(RUN, iid)] == ["bob"]  # one person, one vote


def test_an_expired_away_gives_the_delegate_no_seat(api: Api) -> None:
    iid = _quorum(api, ["alice", "carol"])
    assert api.away("alice", "bob", days=1)[0] == 200
    api.clock.advance(2 * 86400)
    assert _vote(api, iid, "bob")[0] == 403


def _fire_escalation(api: Api, iid: str) -> None:
    pause = api.core.store.get_interaction(RUN, iid)
    assert pause is not None and pause.expires_at is not None
    reconciler = Reconciler(api.core)
    deadlines = Deadlines(
        reconciler,
        sleep=api.clock.advance,
    )
    timer = GateDeadlinePayload(
        run_id=RUN, gate=INTERACTION_GATE, deadline=parse_iso(pause.expires_at), interaction_id=iid, step="escalate"
    )
    api.clock.advance(20)
    assert deadlines.fire(timer).reason == "sent"


def _escalating(api: Api, operators: list[str]) -> str:
    now = api.core.now()
    if api.core.store.get_run(RUN) is None:
        api.core.store.create_run(RunSummary(run_id=RUN, status="running", created_at=now, updated_at=now))
    body = {
        "node": "deploy",
        "question": "ship?",
        "timeout_seconds": 600,
        "escalate_after": 20,
        "escalate_to": ["console"],
        "escalate_to_operators": operators,
    }
    status, asked = api.call("POST", f"/api/runs/{RUN}/questions", body, token=as_("agent-op"))
    assert status == 201, asked
    return str(asked["interaction_id"])


def test_an_escalation_to_an_away_operator_goes_to_their_delegate_and_says_for_whom(api: Api) -> None:
    assert api.away("alice", "bob")[0] == 200
    away = api.core.store.get_away("alice")
    assert away is not None
    iid = _escalating(api, ["alice", "carol"])
    notifier = RecordingNotifier()  # what the SNS topic would fan out
    api.core.notifier = notifier
    _fire_escalation(api, iid)
    records = AuditService(api.core.store).page(RUN, limit=100).records
    escalated = [r.data for r in records if r.type == "escalated"]  # chained: in the decision log
    note = f"bob for alice (away until {away.until})"
    assert escalated == [
        {
            "gate": "deploy",
            "interaction_ids": [iid],
            "channels": ["console"],
            "operators": ["bob", "carol"],
            "substitutions": [note],
        }
    ], escalated
    sent = [n for n in notifier.notifications if n.event == "escalated"]
    assert [(n.extra["operators"], n.extra["substitutions"]) for n in sent] == [(["bob", "carol"], [note])]
    verdict = AuditService(api.core.store).verify(RUN)
    assert verdict.valid and not verdict.unchained, verdict.first_mismatch


def test_an_escalation_to_operators_who_are_here_names_them_and_no_substitution(api: Api) -> None:
    iid = _escalating(api, ["alice"])
    _fire_escalation(api, iid)
    escalated = [e.data for e in api.core.store.list_events(RUN, limit=100) if e.type == "escalated"]
    assert escalated[0]["operators"] == ["alice"] and "substitutions" not in escalated[0], escalated


def test_escalate_to_operators_needs_the_channels_that_reach_them(api: Api) -> None:
    body = {"node": "n", "question": "q?", "timeout_seconds": 600, "escalate_after": 20, "escalate_to_operators": ["a"]}
    api.core.store.create_run(RunSummary(run_id=RUN, status="running", created_at="x", updated_at="x"))
    assert api.call("POST", f"/api/runs/{RUN}/questions", body)[0] == 422


def test_a_claim_reassigned_to_an_away_operator_goes_to_their_delegate_with_a_note(api: Api) -> None:
    status, created = api.call("POST", "/api/v1/interrupts", {"sessionId": RUN, "prompt": "deploy?"})
    assert status == 201, created
    iid = created["id"]
    assert api.away("alice", "bob")[0] == 200
    away = api.core.store.get_away("alice")
    assert away is not None
    status, assigned = api.call("POST", f"/api/v1/interrupts/{iid}/reassign", {"to": "alice"}, token=as_("carol"))
    assert status == 200, assigned
    stored = api.core.store.get_interaction(RUN, iid)
    assert stored is not None and stored.state.claimed_by == "bob"
    records = AuditService(api.core.store).page(RUN, limit=100).records
    reassigned = [r.data for r in records if r.type == "interrupt_reassigned"]
    assert [(d["by"], d["to"], d["on_behalf_of"], d["note"]) for d in reassigned] == [
        ("carol", "bob", "alice", f"for alice (away until {away.until})")
    ]
    verdict = AuditService(api.core.store).verify(RUN)
    assert verdict.valid and not verdict.unchained, verdict.first_mismatch
    api.call("DELETE", PATH, token=as_("alice"))  # back: a reassign to her is hers again
    status, _ = api.call("POST", f"/api/v1/interrupts/{iid}/reassign", {"to": "alice"}, token=as_("carol"))
    again = api.core.store.get_interaction(RUN, iid)
    assert status == 200 and again is not None and again.state.claimed_by == "alice"
