"""The review gate's companion turn: `first` (validate the gate, read the bounded diff, numbered test
steps, initial verdict) or `reply` (answer the operator's stored reply). Returns whether the verdict
auto-merges (posture agent_verdict_ok) and the gate's timeouts for the next states."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import ReviewTurnPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=ReviewTurnPayload)
    review = services().review_service()
    if request.mode == "first":
        return review.first_turn(request.run_id, request.config or {}).model_dump()
    return review.reply_turn(request.run_id, request.gate or "review").model_dump()
