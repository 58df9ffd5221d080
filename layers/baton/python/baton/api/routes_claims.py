"""Claim leases on interrupts (`/api/v1/interrupts/{id}/claim`, `/claim/renew`, `/claim/release`,
`/reassign`): who is working on one, until when. Each route makes one call into `ClaimService`
(`baton/services/claims.py`, where the rules are)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel

from baton.api import deps
from baton.api.contract import InterruptId, responses
from baton.api.routes_interrupts import OperatorField, acting_operator
from baton.contracts import ClaimInterrupt, InterruptClaimed, ReassignClaim, RenewClaim
from baton.services.claims import ClaimService

router = APIGatewayRouter()


# The bodies: each verb's command (baton/contracts/interrupts.py) and the optional `operator`.
class ClaimInterruptRequest(ClaimInterrupt):
    operator: str | None = OperatorField


class RenewClaimRequest(RenewClaim):
    operator: str | None = OperatorField


class ReleaseClaimRequest(BaseModel):
    operator: str | None = OperatorField

    model_config = {"extra": "forbid"}


class ReassignRequest(ReassignClaim):
    operator: str | None = OperatorField


def claims_service() -> ClaimService:
    return ClaimService(deps.get_services().interrupts)


@router.post(
    "/api/v1/interrupts/<interrupt_id>/claim",
    summary="Claim with a lease (who is working on it, until when); force with a reason takes one over",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def claim_interrupt(
    interrupt_id: InterruptId, body: Annotated[ClaimInterruptRequest, Body()] = ClaimInterruptRequest()
) -> InterruptClaimed:
    return claims_service().claim(interrupt_id, body, operator=acting_operator(body.operator))


@router.post(
    "/api/v1/interrupts/<interrupt_id>/claim/renew",
    summary="Renew the caller's claim (its lease counted again from now); 409 when another holds it",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def renew_claim(
    interrupt_id: InterruptId, body: Annotated[RenewClaimRequest, Body()] = RenewClaimRequest()
) -> InterruptClaimed:
    return claims_service().renew(interrupt_id, body, operator=acting_operator(body.operator))


@router.post(
    "/api/v1/interrupts/<interrupt_id>/claim/release",
    summary="Release the caller's claim; 409 when another holds it",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def release_claim(
    interrupt_id: InterruptId, body: Annotated[ReleaseClaimRequest, Body()] = ReleaseClaimRequest()
) -> InterruptClaimed:
    return claims_service().release(interrupt_id, operator=acting_operator(body.operator))


@router.post(
    "/api/v1/interrupts/<interrupt_id>/reassign",
    summary="Give the claim to a named operator (an operator action, recorded)",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def reassign_interrupt(interrupt_id: InterruptId, body: ReassignRequest) -> InterruptClaimed:
    return claims_service().reassign(interrupt_id, body, operator=acting_operator(body.operator))
