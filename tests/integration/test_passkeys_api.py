"""Passkeys (issue 32, item 3) through the real API resolver on moto, with the DynamoDB adapter and real
assertions (tests/passkey_authenticator.py: ES256 over authenticatorData || SHA-256(clientDataJSON)):
register, list; a high risk approve is a 403 that says a passkey is needed, then answered with an assertion
for that answer (the record says webauthn); the same assertion again, or one for another answer, is
refused; revoke. The binding rules one by one: tests/unit/test_passkeys.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from baton.adapters.dynamo_passkeys import DynamoPasskeys
from baton.api import deps
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from tests.integration.resolver import ResolverOnMoto
from tests.passkey_authenticator import SoftAuthenticator

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

RUN = "passkeys-1"
ORIGIN = "https://inbox.example.test"
APPROVE = {"decision": "approve"}


class Api(ResolverOnMoto):
    """The resolver with passkeys configured (the inbox's host as the relying party)."""

    def __init__(self, stack: MotoStack) -> None:
        super().__init__(stack)
        settings = Settings.model_validate(
            {
                **stack.services.settings.model_dump(by_alias=True),
                "BATON_LOCAL_API_TOKEN": self.token,
                "BATON_WEBAUTHN_RP_ID": "inbox.example.test",
                "BATON_WEBAUTHN_ORIGINS": ORIGIN,
            }
        )
        passkeys = DynamoPasskeys(settings.table_name, stack.clients["dynamodb"])
        services = Services(settings=settings, core=self.core, runs=stack.services.runs, passkeys=passkeys)
        self.core.second_factor = services.passkey_service()
        deps.set_services_provider(lambda: services)

    def ask(self, risk: str, target: str = "release") -> str:
        call = {"tool": "Bash", "arguments": {"command": f"make {target}-{risk}"}}
        body = {"call": call, "risk": risk, "reason": "ship", "timeout_seconds": 600}
        status, asked = self.call("POST", f"/api/runs/{RUN}/tool-approvals", body)
        assert status == 201, asked
        return str(asked["interaction_id"])

    def answer(self, iid: str, answer: Any, passkey: dict[str, Any] | None = None) -> tuple[int, Any]:
        body = {"answer": answer} | ({"passkey": passkey} if passkey is not None else {})
        return self.call("POST", f"/api/runs/{RUN}/interactions/{iid}/answer", body)

    def step_up(self, device: SoftAuthenticator, iid: str, answer: Any) -> dict[str, Any]:
        request = {"run_id": RUN, "interaction_id": iid, "answer": answer}
        status, issued = self.call("POST", "/api/me/webauthn/step-up/options", request)
        assert status == 200, issued
        return device.get(issued["options"])


@pytest.fixture
def api(moto_stack: MotoStack) -> Iterator[Api]:
    yield Api(moto_stack)
    moto_stack.services.core.second_factor = None
    deps.set_services_provider(deps._default_provider)


def test_a_registered_passkey_confirms_a_high_risk_approve_once(api: Api) -> None:
    status, me = api.call("GET", "/api/me")
    assert status == 200 and me["passkeys"] is True  # the inbox shows its Passkeys menu
    device = SoftAuthenticator(ORIGIN)
    status, options = api.call("POST", "/api/me/webauthn/register/options")
    assert status == 200 and options["options"]["rp"]["id"] == "inbox.example.test", options
    status, registered = api.call(
        "POST", "/api/me/webauthn/register", {"credential": device.create(options["options"]), "name": "laptop"}
    )
    assert status == 201 and set(registered) == {"credential_id", "name", "created_at", "last_used_at"}
    status, listed = api.call("GET", "/api/me/webauthn/credentials")
    assert status == 200 and [p["credential_id"] for p in listed["passkeys"]] == [registered["credential_id"]]

    iid = api.ask("high")
    status, refused = api.answer(iid, APPROVE)
    assert status == 403 and refused["reason"] == "passkey_required", refused
    edited = {"decision": "edit", "arguments": {"command": "make release-high && rm -rf /"}}
    status, other = api.answer(iid, edited, api.step_up(device, iid, APPROVE))  # confirmed another answer
    assert status == 403 and other["reason"] == "passkey_refused", other

    assertion = api.step_up(device, iid, APPROVE)
    status, answered = api.answer(iid, APPROVE, assertion)
    assert status == 200 and answered["status"] == "answered", answered
    events = [e for e in api.core.store.list_events(RUN, limit=50) if e.type == "interaction_answered"]
    assert [(e.data["answer"]["decision"], e.data.get("second_factor")) for e in events] == [("approve", "webauthn")]
    status, listed = api.call("GET", "/api/me/webauthn/credentials")
    assert listed["passkeys"][0]["last_used_at"] is not None

    medium = api.ask("medium")  # a lower risk approve asks for none
    assert api.answer(medium, APPROVE)[0] == 200
    replay = api.ask("high", "publish")
    status, replayed = api.answer(replay, APPROVE, assertion)  # the used challenge, on another item
    assert status == 403 and replayed["reason"] == "passkey_refused"

    status, deleted = api.call("DELETE", f"/api/me/webauthn/credentials/{registered['credential_id']}")
    assert (status, deleted) == (200, {"deleted": True})
    status, missing = api.call(
        "POST", "/api/me/webauthn/step-up/options", {"run_id": RUN, "interaction_id": replay, "answer": APPROVE}
    )
    assert status == 409 and missing["reason"] == "no_passkey"
