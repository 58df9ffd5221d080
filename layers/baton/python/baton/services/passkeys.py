"""Passkeys (issue 32 item 3): an operator's WebAuthn credentials (`PasskeyService`, behind
`baton/api/routes_passkeys.py`), and the fresh assertion an approval takes when its item's risk asks for a
second factor (`PasskeyService.confirm`: the `SecondFactor` port `ToolApprovalService.answer` calls).

A step-up's challenge is bound to one operator, item and answer digest, expires after STEP_UP_SECONDS and is
used once; the credential's sign count advances by a conditional write. No relying party configured
(`BATON_WEBAUTHN_RP_ID`): the routes are a 404 that says so. py_webauthn is imported on first use, not per
cold start of the API function."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, NoReturn

from baton.channels.email.links import answer_digest  # a step-up is bound to its answer as a one-tap link is
from baton.contracts.passkeys import (
    PasskeyChallenge,
    PasskeyDeleted,
    PasskeyList,
    PasskeyOptions,
    PasskeyView,
    StoredPasskey,
)
from baton.errors import BadRequestError, ConflictError, ForbiddenError, NotFoundError
from baton.ids import iso, parse_iso

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.contracts.passkeys import ChallengePurpose, PasskeyRegistration, StepUpRequest
    from baton.passkey_ports import PasskeyStore

NOT_CONFIGURED: Final = (
    "passkeys are not configured on this stack: no WebAuthn relying party (set BATON_WEBAUTHN_RP_ID to the "
    "inbox's host; deployed, the CDK context webauthn_rp_id)"
)
REGISTER_SECONDS: Final = 300  # a person reads the browser's prompt, maybe finds a security key
STEP_UP_SECONDS: Final = 120  # a confirmation of one answer just made: short
PASSKEY_REQUIRED: Final = "passkey_required"
PASSKEY_REFUSED: Final = "passkey_refused"


@dataclass(frozen=True)
class RelyingParty:
    """Who the passkeys are for: the inbox's host (the WebAuthn RP id) and the page origins allowed to ask."""

    rp_id: str
    origins: tuple[str, ...]
    name: str = "Baton"


def _challenge_of(credential: dict[str, Any]) -> str:
    """The challenge a credential's clientDataJSON answers (base64url), read before anything is verified."""
    from webauthn import base64url_to_bytes

    try:
        client_data = json.loads(base64url_to_bytes(credential["response"]["clientDataJSON"]))
        challenge = client_data["challenge"]
    except (KeyError, TypeError, ValueError) as err:
        raise BadRequestError(f"not a WebAuthn credential: {err}", details={"reason": PASSKEY_REFUSED}) from err
    if not isinstance(challenge, str):
        raise BadRequestError("not a WebAuthn credential: its challenge is not a string")
    return challenge


class PasskeyService:
    def __init__(self, store: PasskeyStore, party: RelyingParty | None, clock: Callable[[], datetime]) -> None:
        self._store, self._party, self._clock = store, party, clock

    def party(self) -> RelyingParty:
        if self._party is None:
            raise NotFoundError(NOT_CONFIGURED)
        return self._party

    # ---- registration ------------------------------------------------------------------------------
    def registration_options(self, operator: str) -> PasskeyOptions:
        from webauthn import base64url_to_bytes, generate_registration_options, options_to_json
        from webauthn.helpers.structs import (
            AuthenticatorSelectionCriteria,
            PublicKeyCredentialDescriptor,
            ResidentKeyRequirement,
            UserVerificationRequirement,
        )

        party = self.party()
        known = [
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id))
            for p in self._store.list_passkeys(operator)
        ]
        options = generate_registration_options(
            rp_id=party.rp_id,
            rp_name=party.name,
            user_name=operator,
            user_id=hashlib.sha256(operator.encode()).digest()[:16],  # stable, and not the name itself
            exclude_credentials=known,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.PREFERRED,
                user_verification=UserVerificationRequirement.PREFERRED,
            ),
            timeout=REGISTER_SECONDS * 1000,
        )
        expires_at = self._issue(operator, options.challenge, "register", REGISTER_SECONDS)
        return PasskeyOptions(options=json.loads(options_to_json(options)), expires_at=expires_at)

    def register(self, operator: str, body: PasskeyRegistration) -> PasskeyView:
        from webauthn import base64url_to_bytes, verify_registration_response
        from webauthn.helpers import bytes_to_base64url
        from webauthn.helpers.exceptions import WebAuthnException

        party = self.party()
        issued = self._take(operator, _challenge_of(body.credential), "register")
        try:
            verified = verify_registration_response(
                credential=body.credential,
                expected_challenge=base64url_to_bytes(issued.challenge),
                expected_rp_id=party.rp_id,
                expected_origin=list(party.origins),
            )
        except WebAuthnException as err:
            _refuse(f"the passkey did not verify: {err}")
        passkey = StoredPasskey(
            operator=operator,
            credential_id=bytes_to_base64url(verified.credential_id),
            public_key=bytes_to_base64url(verified.credential_public_key),
            sign_count=verified.sign_count,
            name=body.name,
            created_at=iso(self._clock()),
        )
        if not self._store.add_passkey(passkey):
            raise ConflictError(
                f"passkey {passkey.credential_id} is registered already",
                details={"credential_id": passkey.credential_id},
            )
        return PasskeyView.of(passkey)

    def passkeys(self, operator: str) -> PasskeyList:
        self.party()
        return PasskeyList(passkeys=[PasskeyView.of(p) for p in self._store.list_passkeys(operator)])

    def remove(self, operator: str, credential_id: str) -> PasskeyDeleted:
        """Revoke one of the operator's own passkeys (another's id is a 404, as an unknown one)."""
        self.party()
        if not self._store.delete_passkey(operator, credential_id):
            raise NotFoundError(f"no passkey {credential_id} of yours", details={"credential_id": credential_id})
        return PasskeyDeleted()

    # ---- step-up -----------------------------------------------------------------------------------
    def step_up_options(self, operator: str, request: StepUpRequest) -> PasskeyOptions:
        """A challenge for exactly this answer of this item, for `navigator.credentials.get`."""
        from webauthn import base64url_to_bytes, generate_authentication_options, options_to_json
        from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

        party = self.party()
        passkeys = self._store.list_passkeys(operator)
        if not passkeys:
            raise ConflictError(
                "you have no passkey: register one (POST /api/me/webauthn/register/options) to confirm this answer",
                details={"reason": "no_passkey"},
            )
        options = generate_authentication_options(
            rp_id=party.rp_id,
            allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id)) for p in passkeys],
            user_verification=UserVerificationRequirement.REQUIRED,
            timeout=STEP_UP_SECONDS * 1000,
        )
        expires_at = self._issue(
            operator,
            options.challenge,
            "step_up",
            STEP_UP_SECONDS,
            run_id=request.run_id,
            interaction_id=request.interaction_id,
            answer_digest=answer_digest(request.answer),
        )
        return PasskeyOptions(options=json.loads(options_to_json(options)), expires_at=expires_at)

    def confirm(
        self, operator: str, run_id: str, interaction_id: str, answer: Any, assertion: dict[str, Any] | None
    ) -> str:
        """The `SecondFactor` port: the credential id that confirmed this answer, else a 403 saying why."""
        from webauthn import base64url_to_bytes, verify_authentication_response
        from webauthn.helpers.exceptions import WebAuthnException

        party = self.party()
        if assertion is None:
            raise ForbiddenError(
                f"approving {interaction_id} takes a passkey confirmation (its risk asks for one): approve it in "
                "the inbox, or send with the answer, as `passkey`, an assertion for the challenge "
                "POST /api/me/webauthn/step-up/options issues for it",
                details={"reason": PASSKEY_REQUIRED, "run_id": run_id, "interaction_id": interaction_id},
            )
        issued = self._take(operator, _challenge_of(assertion), "step_up")
        if (issued.run_id, issued.interaction_id) != (run_id, interaction_id):
            _refuse(f"the passkey confirmation was for {issued.interaction_id} in run {issued.run_id}, not this item")
        if issued.answer_digest != answer_digest(answer):
            _refuse("the passkey confirmation was for another answer: confirm the answer you send")
        credential_id = str(assertion.get("id", ""))
        passkey = self._store.get_passkey(operator, credential_id)
        if passkey is None:
            _refuse(f"{credential_id or 'this credential'} is not a passkey of yours")
        try:
            verified = verify_authentication_response(
                credential=assertion,
                expected_challenge=base64url_to_bytes(issued.challenge),
                expected_rp_id=party.rp_id,
                expected_origin=list(party.origins),
                credential_public_key=base64url_to_bytes(passkey.public_key),
                credential_current_sign_count=passkey.sign_count,
                require_user_verification=True,
            )
        except WebAuthnException as err:
            _refuse(f"the passkey confirmation did not verify: {err}")
        if not self._store.advance_sign_count(
            operator, credential_id, old=passkey.sign_count, new=verified.new_sign_count, at=iso(self._clock())
        ):
            _refuse("the passkey was used again meanwhile: confirm once more")
        return credential_id

    # ---- challenges --------------------------------------------------------------------------------
    def _issue(self, operator: str, challenge: bytes, purpose: ChallengePurpose, seconds: int, **bound: str) -> str:
        from webauthn.helpers import bytes_to_base64url

        expires_at = iso(self._clock() + timedelta(seconds=seconds))
        issued = PasskeyChallenge(
            challenge=bytes_to_base64url(challenge), operator=operator, purpose=purpose, expires_at=expires_at, **bound
        )
        self._store.put_challenge(issued)
        return expires_at

    def _take(self, operator: str, challenge: str, purpose: ChallengePurpose) -> PasskeyChallenge:
        """The issued challenge, used up by this take: unknown, used, expired or another purpose's: a 403."""
        issued = self._store.take_challenge(operator, challenge)
        if issued is None or issued.purpose != purpose:
            _refuse("the passkey challenge is unknown or was used already: ask for a new one")
        if self._clock() >= parse_iso(issued.expires_at):
            _refuse("the passkey challenge expired: ask for a new one")
        return issued


def _refuse(message: str) -> NoReturn:
    raise ForbiddenError(message, details={"reason": PASSKEY_REFUSED})
