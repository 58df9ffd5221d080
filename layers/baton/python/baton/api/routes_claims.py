"""Claim leases on interrupts (`/api/v1/interrupts/{id}/claim`, `/claim/renew`, `/claim/release`,
`/reassign`): who is working on one, until when. Each route makes one call into `ClaimService`
(`baton/services/claims.py`, where the rules are)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field, StrictInt, model_validator

from baton.api import deps
from baton.api.contract import InterruptId, responses
from baton.api.routes_interrupts import OPERATOR_FIELD_DESCRIPTION, acting_operator
from baton.contracts import InterruptClaimed
from baton.services.claims import (
    DEFAULT_LEASE_SECONDS,
    MAX_LEASE_SECONDS,
    MAX_REASON_CHARS,
    MIN_LEASE_SECONDS,
    ClaimService,
)

router = APIGatewayRouter()

LeaseSeconds = Annotated[StrictInt | None, Field(ge=MIN_LEASE_SECONDS, le=MAX_LEASE_SECONDS)]
LEASE_DESCRIPTION = (
    f"How long the claim holds, in whole seconds ({MIN_LEASE_SECONDS}..{MAX_LEASE_SECONDS}; default "
    f"{DEFAULT_LEASE_SECONDS}). Past it the interrupt is unclaimed by itself."
)
Reason = Annotated[str | None, Field(max_length=MAX_REASON_CHARS)]
# Who a claim is given to: an operator's principal (a local name, an email, an IAM ARN); no spaces.
Principal = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\s\x00-\x1f]+$")]
OperatorField = Field(default=None, max_length=200, description=OPERATOR_FIELD_DESCRIPTION)


class ClaimInterruptRequest(BaseModel):
    force: bool = Field(default=False, description="Take over a claim held by another operator (needs a reason).")
    reason: Reason = Field(default=None, description="Why a claim is taken over; recorded with the claim.")
    leaseSeconds: LeaseSeconds = Field(default=None, description=LEASE_DESCRIPTION)
    operator: str | None = OperatorField

    model_config = {"extra": "forbid"}

    @model_validator(mode="after")
    def _take_over_has_a_reason(self) -> ClaimInterruptRequest:
        if self.force and not (self.reason or "").strip():
            raise ValueError("force=true (a take-over) needs a reason")
        return self


class RenewClaimRequest(BaseModel):
    leaseSeconds: LeaseSeconds = Field(default=None, description=LEASE_DESCRIPTION + " Counted from now.")
    operator: str | None = OperatorField

    model_config = {"extra": "forbid"}


class ReleaseClaimRequest(BaseModel):
    operator: str | None = OperatorField

    model_config = {"extra": "forbid"}


class ReassignRequest(BaseModel):
    to: Principal = Field(description="The operator the claim is given to.")
    reason: Reason = Field(default=None, description="Why; recorded with the reassignment.")
    leaseSeconds: LeaseSeconds = Field(default=None, description=LEASE_DESCRIPTION)
    operator: str | None = OperatorField

    model_config = {"extra": "forbid"}


def claims_service() -> ClaimService:
    return ClaimService(deps.get_services().interrupts)


@router.post(
    "/api/v1/interrupts/<interrupt_id>/claim",
    summary="Claim with a lease (who is working on it, until when); force with a reason takes one over",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def claim_interrupt(
    interrupt_id: InterruptId, body: Annotated[ClaimInterruptRequest | None, Body()] = None
) -> InterruptClaimed:
    request = body or ClaimInterruptRequest()
    claimed = claims_service().claim(
        interrupt_id,
        operator=acting_operator(request.operator),
        force=request.force,
        reason=request.reason,
        lease_seconds=request.leaseSeconds,
    )
    return InterruptClaimed.model_validate(claimed)


@router.post(
    "/api/v1/interrupts/<interrupt_id>/claim/renew",
    summary="Renew the caller's claim (its lease counted again from now); 409 when another holds it",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def renew_claim(
    interrupt_id: InterruptId, body: Annotated[RenewClaimRequest | None, Body()] = None
) -> InterruptClaimed:
    request = body or RenewClaimRequest()
    renewed = claims_service().renew(
        interrupt_id, operator=acting_operator(request.operator), lease_seconds=request.leaseSeconds
    )
    return InterruptClaimed.model_validate(renewed)


@router.post(
    "/api/v1/interrupts/<interrupt_id>/claim/release",
    summary="Release the caller's claim; 409 when another holds it",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def release_claim(
    interrupt_id: InterruptId, body: Annotated[ReleaseClaimRequest | None, Body()] = None
) -> InterruptClaimed:
    request = body or ReleaseClaimRequest()
    released = claims_service().release(interrupt_id, operator=acting_operator(request.operator))
    return InterruptClaimed.model_validate(released)


@router.post(
    "/api/v1/interrupts/<interrupt_id>/reassign",
    summary="Give the claim to a named operator (an operator action, recorded)",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def reassign_interrupt(interrupt_id: InterruptId, body: ReassignRequest) -> InterruptClaimed:
    assigned = claims_service().reassign(
        interrupt_id,
        operator=acting_operator(body.operator),
        to=body.to,
        reason=body.reason,
        lease_seconds=body.leaseSeconds,
    )
    return InterruptClaimed.model_validate(assigned)
