"""Passkeys (issue 32, item 3): registration over a software authenticator, and the step-up's binding: the
challenge confirms one answer of one item for one operator, once, within STEP_UP_SECONDS; anything else is
refused (a 403). The answer path asks for it only on an approve of a high risk call where a relying party is
configured, and records it (`second_factor`). Real assertions through the API on moto:
tests/integration/test_passkeys_api.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from baton.contracts.passkeys import PasskeyRegistration, StepUpRequest
from baton.contracts.push import one_tap_actions
from baton.contracts.tool_approvals import ToolApprovalRequest
from baton.domain.tool_calls import ToolCall
from baton.errors import ConflictError, ForbiddenError, NotFoundError
from baton.services.passkeys import PASSKEY_REFUSED, PASSKEY_REQUIRED, STEP_UP_SECONDS, PasskeyService, RelyingParty
from baton.services.tool_approvals import ToolApprovalService
from tests.fakes.passkeys import MemoryPasskeys
from tests.passkey_authenticator import SoftAuthenticator

if TYPE_CHECKING:
    from baton.services.core import Core
    from tests.conftest import FixedClock

ORIGIN = "https://inbox.example.test"
PARTY = RelyingParty(rp_id="inbox.example.test", origins=(ORIGIN,))
APPROVE = {"decision": "approve"}
CALL = ToolCall(tool="Bash", arguments={"command": "rm -rf build/"})


@pytest.fixture
def store() -> MemoryPasskeys:
    return MemoryPasskeys()


@pytest.fixture
def service(store: MemoryPasskeys, clock: FixedClock) -> PasskeyService:
    return PasskeyService(store, PARTY, clock.now)


@pytest.fixture
def device(service: PasskeyService) -> SoftAuthenticator:
    """alice's authenticator, with one passkey registered."""
    device = SoftAuthenticator(ORIGIN)
    options = service.registration_options("alice").options
    service.register("alice", PasskeyRegistration(credential=device.create(options), name="laptop"))
    return device


def _assertion(
    service: PasskeyService, device: SoftAuthenticator, answer: Any, *, run_id: str = "r1", iid: str = "i1"
) -> dict[str, Any]:
    request = StepUpRequest(run_id=run_id, interaction_id=iid, answer=answer)
    return device.get(service.step_up_options("alice", request).options)


def _refusal(err: pytest.ExceptionInfo[ForbiddenError]) -> str:
    return str(err.value.details["reason"])


def test_a_registered_passkey_is_listed_and_revoked_only_by_its_operator(
    service: PasskeyService, device: SoftAuthenticator, store: MemoryPasskeys
) -> None:
    listed = service.passkeys("alice").passkeys
    assert [(p.name, p.last_used_at) for p in listed] == [("laptop", None)]
    assert service.passkeys("bob").passkeys == []
    with pytest.raises(NotFoundError):
        service.remove("bob", listed[0].credential_id)
    assert service.remove("alice", listed[0].credential_id).deleted
    assert store.passkeys == {}


def test_a_registration_answers_its_own_challenge_once(service: PasskeyService) -> None:
    device = SoftAuthenticator(ORIGIN)
    created = device.create(service.registration_options("alice").options)
    service.register("alice", PasskeyRegistration(credential=created))
    with pytest.raises(ForbiddenError) as again:
        service.register("alice", PasskeyRegistration(credential=created))
    assert _refusal(again) == PASSKEY_REFUSED
    elsewhere = SoftAuthenticator("https://evil.example.test")
    with pytest.raises(ForbiddenError):
        service.register(
            "alice", PasskeyRegistration(credential=elsewhere.create(service.registration_options("alice").options))
        )


def test_a_step_up_confirms_its_answer_once_and_advances_the_sign_count(
    service: PasskeyService, device: SoftAuthenticator, store: MemoryPasskeys
) -> None:
    assertion = _assertion(service, device, APPROVE)
    credential_id = service.confirm("alice", "r1", "i1", APPROVE, assertion)
    stored = store.get_passkey("alice", credential_id)
    assert stored is not None and stored.sign_count == 1 and stored.last_used_at is not None
    with pytest.raises(ForbiddenError) as replayed:  # the challenge was used
        service.confirm("alice", "r1", "i1", APPROVE, assertion)
    assert _refusal(replayed) == PASSKEY_REFUSED


@pytest.mark.parametrize(
    ("run_id", "iid", "answer"),
    [
        ("r1", "i2", APPROVE),  # another item
        ("r2", "i1", APPROVE),  # the same item id in another run
        ("r1", "i1", {"decision": "edit", "arguments": {"command": "rm -rf /"}}),  # another answer
    ],
)
def test_a_step_up_for_another_item_or_answer_is_refused_and_used_up(
    service: PasskeyService, device: SoftAuthenticator, run_id: str, iid: str, answer: Any
) -> None:
    assertion = _assertion(service, device, APPROVE)
    with pytest.raises(ForbiddenError) as wrong:
        service.confirm("alice", run_id, iid, answer, assertion)
    assert _refusal(wrong) == PASSKEY_REFUSED
    with pytest.raises(ForbiddenError):  # taken by the refused try: not usable for the right one either
        service.confirm("alice", "r1", "i1", APPROVE, assertion)


def test_an_expired_step_up_is_refused(service: PasskeyService, device: SoftAuthenticator, clock: FixedClock) -> None:
    assertion = _assertion(service, device, APPROVE)
    clock.advance(STEP_UP_SECONDS)
    with pytest.raises(ForbiddenError, match="expired"):
        service.confirm("alice", "r1", "i1", APPROVE, assertion)


def test_another_operators_challenge_or_a_forged_signature_is_refused(
    service: PasskeyService, device: SoftAuthenticator
) -> None:
    with pytest.raises(ForbiddenError, match="unknown"):  # issued to alice: bob cannot take it
        service.confirm("bob", "r1", "i1", APPROVE, _assertion(service, device, APPROVE))
    forged = _assertion(service, device, APPROVE)
    forged["response"]["signature"] = _assertion(service, device, APPROVE)["response"]["signature"]
    with pytest.raises(ForbiddenError, match="did not verify"):
        service.confirm("alice", "r1", "i1", APPROVE, forged)


def test_no_assertion_says_a_passkey_is_needed_and_no_passkey_says_register_one(service: PasskeyService) -> None:
    with pytest.raises(ForbiddenError) as missing:
        service.confirm("alice", "r1", "i1", APPROVE, None)
    assert _refusal(missing) == PASSKEY_REQUIRED
    with pytest.raises(ConflictError, match="register one"):
        service.step_up_options("alice", StepUpRequest(run_id="r1", interaction_id="i1", answer=APPROVE))


def test_without_a_relying_party_the_routes_are_not_found(store: MemoryPasskeys, clock: FixedClock) -> None:
    with pytest.raises(NotFoundError, match="not configured"):
        PasskeyService(store, None, clock.now).registration_options("alice")


def _approval(core: Core, risk: str) -> str:
    call = CALL.model_copy(update={"arguments": {"command": f"rm -rf build-{risk}/"}})  # each its own approval
    body = ToolApprovalRequest(call=call, risk=risk, reason="clean", timeout_seconds=600)  # type: ignore[arg-type]
    approval, _ = ToolApprovalService(core).request("r1", body, caller="agent")
    return approval.interaction_id


def test_approving_a_high_risk_call_takes_a_passkey_and_the_record_says_so(
    core: Core, service: PasskeyService, device: SoftAuthenticator
) -> None:
    core.second_factor = service
    approvals = ToolApprovalService(core)
    iid = _approval(core, "high")
    with pytest.raises(ForbiddenError) as refused:
        approvals.answer("r1", iid, APPROVE, caller="alice")
    assert _refusal(refused) == PASSKEY_REQUIRED
    approvals.answer("r1", iid, APPROVE, caller="alice", passkey=_assertion(service, device, APPROVE, iid=iid))
    answered = [e for e in core.store.list_events("r1", limit=20) if e.type == "interaction_answered"]
    assert [(e.data["by"], e.data.get("second_factor")) for e in answered] == [("alice", "webauthn")]


def test_a_deny_or_a_lower_risk_approve_takes_no_passkey_and_records_none(core: Core, service: PasskeyService) -> None:
    core.second_factor = service
    approvals = ToolApprovalService(core)
    approvals.answer("r1", _approval(core, "high"), {"decision": "deny", "reason": "no"}, caller="alice")
    approvals.answer("r1", _approval(core, "medium"), APPROVE, caller="alice")
    answered = [e for e in core.store.list_events("r1", limit=40) if e.type == "interaction_answered"]
    assert len(answered) == 2 and all("second_factor" not in e.data for e in answered)


def test_a_high_risk_approval_offers_no_one_tap_action(core: Core) -> None:
    high = core.store.get_interaction("r1", _approval(core, "high"))
    medium = core.store.get_interaction("r1", _approval(core, "medium"))
    assert high is not None and medium is not None
    assert one_tap_actions(high) == []
    assert [a.action for a in one_tap_actions(medium)] == ["approve", "deny"]
