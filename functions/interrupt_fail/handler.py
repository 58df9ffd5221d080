"""The hosted interrupt's Catch (States.Timeout → outcome "timeout"; InterruptCancelled → "cancelled"):
mark what is still pending and return the cause the Fail state reports (CausePath)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import InterruptFailPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = parse(event=event, model=InterruptFailPayload)
    return services().interrupts.hosted_ended(payload.run_id, payload.node, payload.outcome).model_dump()
