"""Passkey routes (issue 32, item 3; operators only, each for the caller): register a WebAuthn credential
(`POST /api/me/webauthn/register/options`, then `POST /api/me/webauthn/register` with what
`navigator.credentials.create` gave), list and revoke them (`GET /api/me/webauthn/credentials`, `DELETE
/api/me/webauthn/credentials/{credential_id}`), and a step-up's challenge for one answer of one item (`POST
/api/me/webauthn/step-up/options`). Each is a 404 when passkeys are not configured. One call each into
`baton.services.passkeys.PasskeyService`."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayRouter

from baton.api import deps
from baton.api.contract import responses
from baton.contracts.passkeys import (
    PasskeyDeleted,
    PasskeyList,
    PasskeyOptions,
    PasskeyRegistration,
    PasskeyView,
    StepUpRequest,
)

router = APIGatewayRouter()

CredentialId = Annotated[
    str,
    Path(min_length=1, max_length=1366, pattern=r"^[A-Za-z0-9_-]+$", description="The credential's id (base64url)."),
]


@router.post(
    "/api/me/webauthn/register/options",
    summary="Options for navigator.credentials.create: register a passkey for the caller (challenge valid 5 min)",
    tags=["passkeys"],
    responses=responses({200: PasskeyOptions}, 403, 404),
)
def registration_options() -> PasskeyOptions:
    caller = deps.require_operator("registering a passkey")
    return deps.get_services().passkey_service().registration_options(caller.principal)


@router.post(
    "/api/me/webauthn/register",
    summary="Register the passkey navigator.credentials.create made (its PublicKeyCredential as JSON)",
    tags=["passkeys"],
    responses=responses({201: PasskeyView}, 400, 403, 404, 409),
)
def register(body: PasskeyRegistration) -> Response[PasskeyView]:
    caller = deps.require_operator("registering a passkey")
    view = deps.get_services().passkey_service().register(caller.principal, body)
    return Response(status_code=201, content_type=content_types.APPLICATION_JSON, body=view)


@router.get(
    "/api/me/webauthn/credentials",
    summary="The caller's passkeys",
    tags=["passkeys"],
    responses=responses({200: PasskeyList}, 403, 404),
)
def credentials() -> PasskeyList:
    caller = deps.require_operator("reading passkeys")
    return deps.get_services().passkey_service().passkeys(caller.principal)


@router.delete(
    "/api/me/webauthn/credentials/<credential_id>",
    summary="Revoke one of the caller's passkeys",
    tags=["passkeys"],
    responses=responses({200: PasskeyDeleted}, 403, 404),
)
def remove(credential_id: CredentialId) -> PasskeyDeleted:
    caller = deps.require_operator("revoking a passkey")
    return deps.get_services().passkey_service().remove(caller.principal, credential_id)


@router.post(
    "/api/me/webauthn/step-up/options",
    summary="Options for navigator.credentials.get whose challenge confirms one answer of one item "
    "(single use, valid 2 min); send the assertion as the answer's `passkey`",
    tags=["passkeys"],
    responses=responses({200: PasskeyOptions}, 403, 404, 409),
)
def step_up_options(body: StepUpRequest) -> PasskeyOptions:
    caller = deps.require_operator("confirming an answer with a passkey")
    return deps.get_services().passkey_service().step_up_options(caller.principal, body)
