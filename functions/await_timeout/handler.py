"""The await gate's Catch on States.Timeout: record `await_timed_out` with the unanswered questions and
return the cause the Fail state reads through CausePath."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


class AwaitTimeoutRequest(BaseModel):
    run_id: str = Field(min_length=1)
    gate: str = Field(min_length=1)
    error: dict[str, Any] | None = None
    map_item: int | str | None = None


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=AwaitTimeoutRequest)
    return services().questions.record_gate_timeout(
        request.run_id, request.gate, request.error, map_item=request.map_item
    )
