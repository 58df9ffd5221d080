"""The review gate: GET /api/runs/{run_id}/review (thread, verdict, diff stats, review URL, merge status)
and GET /api/runs/{run_id}/review/diff (the diff the companion reads, per file).
Operator actions ride POST /api/runs/{run_id}/resume with the reserved `__review_*` keys."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayRouter
from pydantic import BaseModel, Field

from baton.api import deps
from baton.api.contract import RunId, responses
from baton.contracts import ReviewDiff, ReviewView

router = APIGatewayRouter()


class ReviewQuery(BaseModel):
    gate: str | None = Field(default=None, description="The review gate's name, when the run has several.")


@router.get(
    "/api/runs/<run_id>/review",
    summary="The run's review: dialogue thread, latest verdict, diff stats, review URL, merge status",
    tags=["review"],
    responses=responses({200: ReviewView}, 400, 403, 404),
)
def get_review(run_id: RunId, query: Annotated[ReviewQuery, Query()]) -> ReviewView:
    deps.require_run(run_id)
    return deps.get_services().review_service().view(run_id, query.gate)


@router.get(
    "/api/runs/<run_id>/review/diff",
    summary="The bounded diff the review's companion reads, file by file, with the commit it is the diff of",
    tags=["review"],
    responses=responses({200: ReviewDiff}, 400, 403, 404),
)
def get_review_diff(run_id: RunId, query: Annotated[ReviewQuery, Query()]) -> ReviewDiff:
    deps.require_run(run_id)
    return deps.get_services().review_service().diff_view(run_id, query.gate)
