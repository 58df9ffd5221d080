"""A gate's Catch on States.Timeout: mark what timed out and return the cause for the Fail state."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


class TimeoutRequest(BaseModel):
    run_id: str = Field(min_length=1)
    node: str = Field(min_length=1)
    error: dict[str, Any] | None = None


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=TimeoutRequest)
    return services().runs.record_timeout(request.run_id, request.node, request.error)
