"""Claim leases (baton/services/claims.py) on the in-memory store and through the real resolver: a lease
ends by itself on the injected clock (no sleeps), renew / release are the holder's, a take-over needs a
reason, reassignment is recorded, and the inbox shows who holds what until when."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from baton.api import deps
from baton.api.app import create_app
from baton.api.auth import operator_token
from baton.contracts import ClaimInterrupt, ReassignClaim, RenewClaim
from baton.domain.interrupt_fields import DEFAULT_LEASE_SECONDS, MAX_LEASE_SECONDS
from baton.domain.interrupt_spec import InterruptSpec
from baton.errors import ConflictError, ValidationFailedError
from baton.local.http_adapter import to_proxy_event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.claims import ClaimService
from baton.services.core import Core
from baton.services.interrupts import InterruptService
from baton.services.runs import RunService
from tests.conftest import FixedClock

TOKEN = "local-secret"
SESSION = "sess-lease"


@pytest.fixture
def interrupts(core: Core) -> InterruptService:
    return InterruptService(core)


@pytest.fixture
def claims(interrupts: InterruptService) -> ClaimService:
    return ClaimService(interrupts)


def _create(interrupts: InterruptService) -> str:
    spec = InterruptSpec(session_id=SESSION, prompt="Deploy where?", schema={"type": "enum", "enum": ["a", "b"]})
    return interrupts.create(spec, caller="agent")[0].interaction_id


def _claim_events(core: Core) -> list[tuple[str, dict[str, Any]]]:
    return [(e.type, e.data) for e in core.store.list_events(SESSION) if "claim" in e.type or "reassign" in e.type]


def test_a_lease_expiring_frees_the_item_by_itself(
    interrupts: InterruptService, claims: ClaimService, core: Core, clock: FixedClock
) -> None:
    iid = _create(interrupts)
    held = claims.claim(iid, ClaimInterrupt(leaseSeconds=120), operator="alice")["interrupt"]
    assert held["claimedBy"] == "alice" and held["leaseExpiresAt"] == "2026-11-30T12:02:00.000Z"
    with pytest.raises(ConflictError) as taken:
        claims.claim(iid, ClaimInterrupt(), operator="bob")
    assert taken.value.details["claimedBy"] == "alice"
    assert taken.value.details["leaseExpiresAt"] == "2026-11-30T12:02:00.000Z"
    clock.advance(119)
    assert interrupts.get(iid).state.claimed_by == "alice"
    clock.advance(1)  # the lease's end: nobody holds it any more, without a write
    view = interrupts.get(iid)
    assert view.state.claimed_by is None and view.state.lease_expires_at is None
    stored = core.store.find_interaction(iid)
    assert stored is not None and stored.state.claimed_by == "alice"  # what freed it is the clock
    bob = claims.claim(iid, ClaimInterrupt(), operator="bob")  # no force needed over a lapsed lease
    assert bob["changed"] and bob["interrupt"]["claimedBy"] == "bob"
    assert bob["interrupt"]["leaseExpiresAt"] == "2026-11-30T12:17:00.000Z"  # the default, 15 min
    kinds = [(t, d["by"], d.get("previous")) for t, d in _claim_events(core)]
    assert kinds == [("interrupt_claimed", "alice", None), ("interrupt_claimed", "bob", None)]


def test_renew_is_the_holders_and_extends_from_now(
    interrupts: InterruptService, claims: ClaimService, core: Core, clock: FixedClock
) -> None:
    iid = _create(interrupts)
    claims.claim(iid, ClaimInterrupt(leaseSeconds=60), operator="alice")
    with pytest.raises(ConflictError) as other:
        claims.renew(iid, RenewClaim(), operator="bob")
    assert other.value.details["claimedBy"] == "alice"
    clock.advance(50)
    renewed = claims.renew(iid, RenewClaim(leaseSeconds=600), operator="alice")
    assert renewed["interrupt"]["leaseExpiresAt"] == "2026-11-30T12:10:50.000Z"
    clock.advance(300)
    assert interrupts.get(iid).state.claimed_by == "alice"  # past the first lease, inside the renewed one
    clock.advance(301)
    with pytest.raises(ConflictError):  # lapsed: there is nothing of alice's left to renew
        claims.renew(iid, RenewClaim(), operator="alice")
    assert ("interrupt_claim_renewed", "alice") in [(t, d["by"]) for t, d in _claim_events(core)]


def test_take_over_needs_a_reason_and_records_it(
    interrupts: InterruptService, claims: ClaimService, core: Core
) -> None:
    iid = _create(interrupts)
    claims.claim(iid, ClaimInterrupt(), operator="alice")
    for reason in (None, "   "):
        with pytest.raises(ValidationError):  # the command refuses it: a 422 at the door
            claims.claim(iid, ClaimInterrupt(force=True, reason=reason), operator="bob")
    assert interrupts.get(iid).state.claimed_by == "alice"  # the refused take-over changed nothing
    taken = claims.claim(iid, ClaimInterrupt(force=True, reason="alice is on leave"), operator="bob")
    assert taken["interrupt"]["claimedBy"] == "bob"
    last = _claim_events(core)[-1]
    assert last[0] == "interrupt_claimed"
    assert last[1]["previous"] == "alice" and last[1]["reason"] == "alice is on leave" and last[1]["by"] == "bob"


def test_release_and_reassign(interrupts: InterruptService, claims: ClaimService, core: Core) -> None:
    iid = _create(interrupts)
    claims.claim(iid, ClaimInterrupt(), operator="alice")
    with pytest.raises(ConflictError):
        claims.release(iid, operator="bob")
    released = claims.release(iid, operator="alice")
    assert released["changed"] and released["claimed"] is False and released["interrupt"]["claimedBy"] is None
    assert claims.release(iid, operator="alice")["changed"] is False  # nothing left to release
    assigned = claims.reassign(iid, ReassignClaim(to="carol", reason="she owns deploys"), operator="alice")
    assert assigned["interrupt"]["claimedBy"] == "carol"
    again = claims.reassign(
        iid, ReassignClaim(to="dave"), operator="bob"
    )  # over carol's live claim: an explicit action
    assert again["interrupt"]["claimedBy"] == "dave"
    events = _claim_events(core)
    assert [t for t, _ in events] == [
        "interrupt_claimed",
        "interrupt_claim_released",
        "interrupt_reassigned",
        "interrupt_reassigned",
    ]
    first = events[2][1]
    assert (first["by"], first["to"], first["previous"], first["reason"]) == (
        "alice",
        "carol",
        None,
        "she owns deploys",
    )
    assert first["lease_expires_at"] == "2026-11-30T12:15:00.000Z"
    assert events[3][1]["previous"] == "carol" and events[3][1]["by"] == "bob"


def test_lease_bounds(interrupts: InterruptService, claims: ClaimService) -> None:
    iid = _create(interrupts)
    for bad in (0, 59, MAX_LEASE_SECONDS + 1, True):
        with pytest.raises((ValidationError, ValidationFailedError)):  # the command refuses it: a 422 at the door
            claims.claim(iid, ClaimInterrupt(leaseSeconds=bad), operator="alice")
    held = claims.claim(iid, ClaimInterrupt(leaseSeconds=MAX_LEASE_SECONDS), operator="alice")["interrupt"]
    assert held["leaseExpiresAt"] == "2026-11-30T20:00:00.000Z" and DEFAULT_LEASE_SECONDS == 900


def test_a_write_racing_a_new_claim_loses_on_the_holder_condition(
    interrupts: InterruptService, claims: ClaimService, core: Core, clock: FixedClock
) -> None:
    """The store decides: a write for a free interrupt fails once someone holds a live lease on it."""
    iid = _create(interrupts)
    seen = interrupts.get(iid)  # free, as read
    claims.claim(iid, ClaimInterrupt(), operator="alice")
    with pytest.raises(ConflictError):
        core.store.write_claim(
            seen, seen.state.model_copy(update={"claimed_by": "bob"}), expected_holder=None, now=core.now()
        )


# ---- through the resolver, as two named local operators -------------------------------------------
@pytest.fixture
def api(core: Core) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(method: str, path: str, body: Any = None, *, who: str | None = None) -> tuple[int, Any]:
        bearer = operator_token(TOKEN, who) if who else TOKEN
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {bearer}"}
        data = json.dumps(body).encode() if body is not None else b""
        result = app.resolve(to_proxy_event(method, path, headers, data, "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"]) if result.get("body") else None

    yield call
    deps.set_services_provider(deps._default_provider)


def test_routes_renew_by_another_is_409_take_over_without_reason_is_422(api: Any, clock: FixedClock) -> None:
    status, rec = api("POST", "/api/v1/interrupts", {"sessionId": SESSION, "prompt": "Ship?"}, who="agentish")
    assert status == 201
    path = f"/api/v1/interrupts/{rec['id']}"
    status, claimed = api("POST", f"{path}/claim", {"leaseSeconds": 300}, who="alice")
    assert status == 200 and claimed["interrupt"]["claimedBy"] == "alice"
    assert claimed["interrupt"]["leaseExpiresAt"] == "2026-11-30T12:05:00.000Z"
    status, body = api("POST", f"{path}/claim/renew", {}, who="bob")
    assert status == 409 and body["claimedBy"] == "alice"
    status, body = api("POST", f"{path}/claim", {"force": True}, who="bob")
    assert status == 422
    for bad in ("300", 1.5, 10, MAX_LEASE_SECONDS + 1):
        assert api("POST", f"{path}/claim", {"leaseSeconds": bad}, who="bob")[0] == 422, bad
    status, body = api("POST", f"{path}/claim/release", {}, who="bob")
    assert status == 409
    status, renewed = api("POST", f"{path}/claim/renew", {"leaseSeconds": 600}, who="alice")
    assert status == 200 and renewed["interrupt"]["leaseExpiresAt"] == "2026-11-30T12:10:00.000Z"
    status, inbox = api("GET", "/api/inbox?kind=interrupt", who="bob")
    assert inbox["items"][0]["claimed_by"] == "alice"
    assert inbox["items"][0]["lease_expires_at"] == "2026-11-30T12:10:00.000Z"
    assert [i["id"] for i in api("GET", "/api/inbox?claimed=unclaimed", who="bob")[1]["items"]] == []
    clock.advance(600)  # the lease ends: the inbox shows it free, for everyone
    status, inbox = api("GET", "/api/inbox?kind=interrupt", who="bob")
    assert inbox["items"][0]["claimed_by"] is None and inbox["items"][0]["lease_expires_at"] is None
    assert [i["id"] for i in api("GET", "/api/inbox?claimed=unclaimed", who="bob")[1]["items"]] == [rec["id"]]
    assert api("GET", "/api/inbox?claimed=me", who="alice")[1]["items"] == []
    status, body = api("POST", f"{path}/reassign", {"to": "carol", "reason": "hers"}, who="bob")
    assert status == 200 and body["interrupt"]["claimedBy"] == "carol"
    assert api("POST", f"{path}/reassign", {"to": "has space"}, who="bob")[0] == 422
    events = api("GET", f"/api/runs/{SESSION}/events", who="bob")[1]["events"]
    assert [e["type"] for e in events if "claim" in e["type"] or "reassign" in e["type"]] == [
        "interrupt_claimed",
        "interrupt_claim_renewed",
        "interrupt_reassigned",
    ]
