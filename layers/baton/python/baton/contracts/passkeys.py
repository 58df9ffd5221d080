"""Passkeys (issue 32, item 3: "WebAuthn where the item's risk asks for it"): an operator's registered
WebAuthn credentials and the challenges the server issues for them (`baton/services/passkeys.py`).

The routes (`baton/api/routes_passkeys.py`, operators only, each for the caller): `POST
/api/me/webauthn/register/options` (the options for `navigator.credentials.create`), `POST
/api/me/webauthn/register` (its result), `GET /api/me/webauthn/credentials`, `DELETE
/api/me/webauthn/credentials/{credential_id}`, and `POST /api/me/webauthn/step-up/options`: the options for
`navigator.credentials.get` whose challenge is bound to one item and one answer; that answer's request
then carries the assertion as `passkey` (`POST .../interactions/{id}/answer`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from baton.contracts.base import Contract

ChallengePurpose = Literal["register", "step_up"]
# What a passkey-confirmed answer's decision-log record says (`InteractionAnswered.second_factor`).
WEBAUTHN_VERIFIED = "webauthn"


class StoredPasskey(BaseModel):
    """One registered credential of an operator (one item: `baton/adapters/dynamo_passkeys.py`). Ids and
    the public key (COSE) are base64url."""

    operator: str
    credential_id: str
    public_key: str
    sign_count: int = 0
    name: str
    created_at: str
    last_used_at: str | None = None


class PasskeyChallenge(BaseModel):
    """A challenge the server issued (single use: taking it deletes it). A step-up's is bound to the run,
    the item and the digest of the answer it confirms."""

    challenge: str
    operator: str
    purpose: ChallengePurpose
    expires_at: str
    run_id: str | None = None
    interaction_id: str | None = None
    answer_digest: str | None = None


class PasskeyOptions(Contract):
    """The `PublicKeyCredentialCreationOptions` or `...RequestOptions` as JSON (binary fields base64url),
    and when its challenge expires."""

    options: dict[str, Any]
    expires_at: str


class PasskeyRegistration(BaseModel):
    """The body of `POST /api/me/webauthn/register`: the created credential (`PublicKeyCredential.toJSON()`)."""

    model_config = ConfigDict(extra="forbid")

    credential: dict[str, Any] = Field(description="What navigator.credentials.create gave, as JSON.")
    name: str = Field(default="passkey", min_length=1, max_length=64, description="A name to tell it apart.")


class StepUpRequest(BaseModel):
    """The body of `POST /api/me/webauthn/step-up/options`: the item and the exact answer to confirm."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(min_length=1, max_length=128)
    interaction_id: str = Field(min_length=1, max_length=128)
    answer: Any = Field(description="The answer the assertion will confirm, exactly as it will be sent.")


class PasskeyView(Contract):
    """A credential as the routes show it: never its public key."""

    credential_id: str
    name: str
    created_at: str
    last_used_at: str | None = None

    @classmethod
    def of(cls, passkey: StoredPasskey) -> PasskeyView:
        return cls(
            credential_id=passkey.credential_id,
            name=passkey.name,
            created_at=passkey.created_at,
            last_used_at=passkey.last_used_at,
        )


class PasskeyList(Contract):
    passkeys: list[PasskeyView]


class PasskeyDeleted(Contract):
    deleted: bool = True
