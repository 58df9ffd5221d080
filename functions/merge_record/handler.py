"""The review gate's merge outcome: land final_commit/final_branch/merged_into/merge_status on the run
and emit `review_merged`; a rejection (or a merge that could not run) re-opens the review so the
operator can fix the tree and approve again; a merge timeout returns the Fail state's cause."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import MergeRecordPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=MergeRecordPayload)
    review = services().review_service()
    return review.record_merge(request.run_id, request.gate, outcome=request.outcome, error=request.error).model_dump()
