"""The await gate's Catch on States.Timeout: record `await_timed_out` with the unanswered questions and
return the cause the Fail state reads through CausePath."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import AwaitTimeoutPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = parse(event=event, model=AwaitTimeoutPayload)
    return (
        services().questions.record_gate_timeout(payload.run_id, payload.gate, map_item=payload.map_item).model_dump()
    )
