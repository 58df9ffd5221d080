"""The hosted interrupt's Catch (States.Timeout → outcome "timeout"; InterruptCancelled → "cancelled"):
mark what is still pending and return the cause the Fail state reports (CausePath)."""

from __future__ import annotations

from typing import Any, Literal

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


class InterruptEnded(BaseModel):
    run_id: str = Field(min_length=1)
    node: str = Field(min_length=1)
    outcome: Literal["timeout", "cancelled"]
    error: dict[str, Any] | None = None


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=InterruptEnded)
    return services().interrupts.hosted_ended(request.run_id, request.node, request.outcome)
