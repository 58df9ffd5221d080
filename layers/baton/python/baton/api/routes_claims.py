"""Claim leases on interrupts (`/api/v1/interrupts/{id}/claim`, `/claim/renew`, `/claim/release`,
`/reassign`): who is working on one, until when. Each route makes one call into `ClaimService`
(`baton/services/claims.py`, where the rules are)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, BeforeValidator, Field, StrictBool, model_validator

from baton.api import deps
from baton.api.contract import InterruptId, responses
from baton.api.routes_interrupts import OPERATOR_FIELD_DESCRIPTION, acting_operator
from baton.contracts import InterruptClaimed
from baton.domain.fields import refuse_non_numbers
from baton.services.claims import (
    DEFAULT_LEASE_SECONDS,
    MAX_LEASE_SECONDS,
    MAX_REASON_CHARS,
    MIN_LEASE_SECONDS,
    ClaimService,
)

router = APIGatewayRouter()

# A whole number of seconds: 60.0 is one (JSON Schema's "integer"), 60.5 and "60" and true are not.
LeaseSeconds = (
    Annotated[int, Field(ge=MIN_LEASE_SECONDS, le=MAX_LEASE_SECONDS), BeforeValidator(refuse_non_numbers)] | None
)
LEASE_DESCRIPTION = (
    f"How long the claim holds, in whole seconds ({MIN_LEASE_SECONDS}..{MAX_LEASE_SECONDS}; default "
    f"{DEFAULT_LEASE_SECONDS}). Past it the interrupt is unclaimed by itself."
)
Reason = Annotated[str | None, Field(max_length=MAX_REASON_CHARS)]
# Who a claim is given to: an operator's principal (a local name, an email, an IAM ARN); no spaces.
Principal = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\s\x00-\x1f]+$")]
HOLDER_DESCRIPTION = (
    "The holder whose claim this overrides (the one the operator saw); a claim held by anyone else is a "
    "409 naming them. Omitted: the claim held when the request arrives."
)
OperatorField = Field(default=None, max_length=200, description=OPERATOR_FIELD_DESCRIPTION)


class ClaimInterruptRequest(BaseModel):
    force: StrictBool = Field(default=False, description="Take over a claim held by another operator (needs a reason).")
    reason: Reason = Field(default=None, description="Why a claim is taken over; recorded with the claim.")
    holder: Principal | None = Field(default=None, description=HOLDER_DESCRIPTION)
    leaseSeconds: LeaseSeconds = Field(default=None, description=LEASE_DESCRIPTION)
    operator: str | None = OperatorField

    # The document says what _take_over_has_a_reason enforces: with force=true, a reason with some text.
    model_config = {
        "extra": "forbid",
        "json_schema_extra": {
            "if": {"properties": {"force": {"const": True}}, "required": ["force"]},
            "then": {"properties": {"reason": {"type": "string", "pattern": r"\S"}}, "required": ["reason"]},
        },
    }

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
    holder: Principal | None = Field(default=None, description=HOLDER_DESCRIPTION)
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
    interrupt_id: InterruptId, body: Annotated[ClaimInterruptRequest, Body()] = ClaimInterruptRequest()
) -> InterruptClaimed:
    claimed = claims_service().claim(
        interrupt_id,
        operator=acting_operator(body.operator),
        force=body.force,
        reason=body.reason,
        lease_seconds=body.leaseSeconds,
        holder=body.holder,
    )
    return InterruptClaimed.model_validate(claimed)


@router.post(
    "/api/v1/interrupts/<interrupt_id>/claim/renew",
    summary="Renew the caller's claim (its lease counted again from now); 409 when another holds it",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def renew_claim(
    interrupt_id: InterruptId, body: Annotated[RenewClaimRequest, Body()] = RenewClaimRequest()
) -> InterruptClaimed:
    renewed = claims_service().renew(
        interrupt_id, operator=acting_operator(body.operator), lease_seconds=body.leaseSeconds
    )
    return InterruptClaimed.model_validate(renewed)


@router.post(
    "/api/v1/interrupts/<interrupt_id>/claim/release",
    summary="Release the caller's claim; 409 when another holds it",
    tags=["interrupts"],
    responses=responses({200: InterruptClaimed}, 403, 404, 409, 410, 422),
)
def release_claim(
    interrupt_id: InterruptId, body: Annotated[ReleaseClaimRequest, Body()] = ReleaseClaimRequest()
) -> InterruptClaimed:
    released = claims_service().release(interrupt_id, operator=acting_operator(body.operator))
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
        holder=body.holder,
    )
    return InterruptClaimed.model_validate(assigned)
