"""The decision log (`baton/domain/audit.py`): a run's chained decisions, page by page, and the chain
verified. Operators only: an agent identity gets 403, even on its own run."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field

from baton.api import deps
from baton.api.contract import RunId, responses
from baton.contracts.audit import AuditRecordPage, AuditVerification
from baton.services.audit import MAX_PAGE, AuditService

router = APIGatewayRouter()


class AuditQuery(BaseModel):
    after: int = Field(default=0, ge=0, description="Cursor: the last seq you have (0: from the start).")
    limit: int = Field(default=100, ge=1, le=MAX_PAGE)


def _service(run_id: str) -> AuditService:
    deps.require_operator("reading the decision log")
    services = deps.get_services()
    services.core.require_run(run_id)
    return AuditService(services.core.store)


@router.get(
    "/api/runs/<run_id>/audit",
    summary="The run's decision log in chain order (paged by seq)",
    tags=["audit"],
    responses=responses({200: AuditRecordPage}, 400, 403, 404),
)
def audit_page(run_id: RunId, query: Annotated[AuditQuery, Query()]) -> AuditRecordPage:
    return _service(run_id).page(run_id, after=query.after, limit=query.limit)


@router.get(
    "/api/runs/<run_id>/audit/verify",
    summary="Recompute the run's decision chain; name the first record that does not match",
    tags=["audit"],
    responses=responses({200: AuditVerification}, 400, 403, 404),
)
def audit_verify(run_id: RunId) -> AuditVerification:
    verdict = _service(run_id).verify(run_id)
    return AuditVerification.model_validate(verdict.model_dump())
