"""The review gate's `waitForTaskToken` pause: park the token on WAIT#<gate> and ask the operator."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import ReviewParkPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=ReviewParkPayload)
    return (
        services().review_service().park(request.run_id, request.gate, request.token, request.entered_at).model_dump()
    )
