"""Tool-call approvals (issue 30): an agent's adapter asks, long-polls, and consumes the approval right
before the tool runs; remembered grants are listed and revoked here. A person answers through
`POST /api/runs/{run}/interactions/{id}/answer` (routes_questions.py), like every pause. An operator
claims one as on an interrupt (`.../claim`, `/claim/renew`, `/claim/release`, `/reassign`: the request
bodies of routes_claims.py, the rules of `baton.services.claims`); a claim is advisory."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field, field_validator

from baton.api import deps
from baton.api.contract import InteractionId, RunId, responses
from baton.api.routes_claims import ClaimInterruptRequest, ReassignRequest, ReleaseClaimRequest, RenewClaimRequest
from baton.api.routes_interrupts import acting_operator
from baton.contracts.tool_approvals import (
    ConsumeRequest,
    ConsumeResult,
    GrantList,
    GrantRevoked,
    ToolApprovalClaimed,
    ToolApprovalPage,
    ToolApprovalRequest,
    ToolApprovalView,
)
from baton.ids import iso
from baton.services.claims import ToolApprovalClaims
from baton.services.tool_approvals import ToolApprovalService

router = APIGatewayRouter()
CLAIMING = "claiming a tool approval"  # what a non-operator is told they cannot do
GrantId = Annotated[str, Path(min_length=1, max_length=80, description="The grant's id (the approve that made it).")]


class ApprovalWaitQuery(BaseModel):
    # camelCase on the wire like the asks' and interrupts' long-polls
    wait_seconds: float = Field(
        default=0, ge=0, le=20, alias="waitSeconds", description="Long-poll: hold until decided (<= 20 s)."
    )

    model_config = {"populate_by_name": True}


def _service() -> ToolApprovalService:
    return ToolApprovalService(deps.get_services().core)


@router.post(
    "/api/runs/<run_id>/tool-approvals",
    summary="Ask a person to approve a tool call (201; 200 with the same approval for a repeat of the call)",
    tags=["tool-approvals"],
    responses=responses({200: ToolApprovalView, 201: ToolApprovalView}, 400, 403, 404, 413),
)
def request_approval(run_id: RunId, body: ToolApprovalRequest) -> Response[ToolApprovalView]:
    caller = deps.require_run(run_id)
    approval, created = _service().request(run_id, body, caller=caller.principal)
    view = ToolApprovalView.of(approval)
    return Response(status_code=201 if created else 200, content_type=content_types.APPLICATION_JSON, body=view)


@router.get(
    "/api/runs/<run_id>/tool-approvals/<interaction_id>",
    summary="One tool approval; ?waitSeconds=0..20 long-polls until it is decided (its default at the deadline)",
    tags=["tool-approvals"],
    responses=responses({200: ToolApprovalView}, 400, 403, 404),
)
def get_approval(
    run_id: RunId, interaction_id: InteractionId, query: Annotated[ApprovalWaitQuery, Query()]
) -> ToolApprovalView:
    deps.require_run(run_id)
    return ToolApprovalView.of(_service().get(run_id, interaction_id, wait_seconds=query.wait_seconds))


@router.post(
    "/api/runs/<run_id>/tool-approvals/<interaction_id>/consume",
    summary="Use the approval for the call about to run (once; 409 for another digest or a second use)",
    tags=["tool-approvals"],
    responses=responses({200: ConsumeResult}, 400, 403, 404, 409),
)
def consume(run_id: RunId, interaction_id: InteractionId, body: ConsumeRequest) -> ConsumeResult:
    deps.require_run(run_id)
    return _service().consume(run_id, interaction_id, body.digest)


@router.get(
    "/api/runs/<run_id>/tool-grants",
    summary="The run's active remembered grants (an approve with remember)",
    tags=["tool-approvals"],
    responses=responses({200: GrantList}, 400, 403, 404),
)
def grants(run_id: RunId) -> GrantList:
    deps.require_run(run_id)
    return _service().grants(run_id)


@router.delete(
    "/api/runs/<run_id>/tool-grants/<grant_id>",
    summary="Revoke a remembered grant (an operator action)",
    tags=["tool-approvals"],
    responses=responses({200: GrantRevoked}, 400, 403, 404, 409),
)
def revoke(run_id: RunId, grant_id: GrantId) -> GrantRevoked:
    operator = deps.require_operator("revoking a tool grant")
    return _service().revoke(run_id, grant_id, caller=operator.principal)


def _claims(run_id: str) -> ToolApprovalClaims:
    return ToolApprovalClaims(_service(), run_id)


# Advisory, as on an interrupt: answering stays open to any operator, claimed or not.
@router.post(
    "/api/runs/<run_id>/tool-approvals/<interaction_id>/claim",
    summary="Claim with a lease (advisory: any operator may still answer); force with a reason takes one over",
    tags=["tool-approvals"],
    responses=responses({200: ToolApprovalClaimed}, 400, 403, 404, 409, 422),
)
def claim_approval(
    run_id: RunId,
    interaction_id: InteractionId,
    body: Annotated[ClaimInterruptRequest, Body()] = ClaimInterruptRequest(),
) -> ToolApprovalClaimed:
    return _claims(run_id).claim(interaction_id, body, operator=acting_operator(body.operator, CLAIMING))


@router.post(
    "/api/runs/<run_id>/tool-approvals/<interaction_id>/claim/renew",
    summary="Renew the caller's claim (its lease counted again from now); 409 when another holds it",
    tags=["tool-approvals"],
    responses=responses({200: ToolApprovalClaimed}, 400, 403, 404, 409, 422),
)
def renew_approval_claim(
    run_id: RunId, interaction_id: InteractionId, body: Annotated[RenewClaimRequest, Body()] = RenewClaimRequest()
) -> ToolApprovalClaimed:
    return _claims(run_id).renew(interaction_id, body, operator=acting_operator(body.operator, CLAIMING))


@router.post(
    "/api/runs/<run_id>/tool-approvals/<interaction_id>/claim/release",
    summary="Release the caller's claim; 409 when another holds it",
    tags=["tool-approvals"],
    responses=responses({200: ToolApprovalClaimed}, 400, 403, 404, 409, 422),
)
def release_approval_claim(
    run_id: RunId, interaction_id: InteractionId, body: Annotated[ReleaseClaimRequest, Body()] = ReleaseClaimRequest()
) -> ToolApprovalClaimed:
    return _claims(run_id).release(interaction_id, operator=acting_operator(body.operator, CLAIMING))


@router.post(
    "/api/runs/<run_id>/tool-approvals/<interaction_id>/reassign",
    summary="Give the claim to a named operator (an operator action, recorded)",
    tags=["tool-approvals"],
    responses=responses({200: ToolApprovalClaimed}, 400, 403, 404, 409, 422),
)
def reassign_approval(run_id: RunId, interaction_id: InteractionId, body: ReassignRequest) -> ToolApprovalClaimed:
    return _claims(run_id).reassign(interaction_id, body, operator=acting_operator(body.operator, CLAIMING))


class DecidedListQuery(BaseModel):
    status: Literal["answered"] = Field(
        default="answered", description="answered: decided (by a person, a grant or the deadline)."
    )
    since: datetime | None = Field(
        default=None, description="Only calls made at or after this time (ISO 8601; without a zone, UTC)."
    )
    limit: int = Field(default=50, ge=1, le=200, description="Page size (the items one read takes).")
    next: str | None = Field(default=None, max_length=4096, description="The `next` of the previous page.")

    @field_validator("since")
    @classmethod
    def _in_utc(cls, since: datetime | None) -> datetime | None:
        """UTC, as every time Baton stores (a time without a zone is taken as UTC); 422 past year 1..9999."""
        if since is None:
            return None
        try:
            return since.astimezone(UTC) if since.tzinfo is not None else since.replace(tzinfo=UTC)
        except OverflowError:
            raise ValueError("since is out of range") from None


@router.get(
    "/api/tool-approvals",
    summary="Decided tool approvals across runs (?status=answered ?since=ISO ?limit= ?next=), paged (operators)",
    tags=["tool-approvals"],
    responses=responses({200: ToolApprovalPage}, 400, 403),
)
def list_decided(query: Annotated[DecidedListQuery, Query()]) -> ToolApprovalPage:
    deps.require_operator("listing tool approvals")
    since = iso(query.since) if query.since is not None else None
    return _service().list_decided(since=since, limit=query.limit, next_token=query.next)
