"""A gate's Catch on States.Timeout: mark what timed out and return the cause for the Fail state."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import GateTimeoutPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = parse(event=event, model=GateTimeoutPayload)
    return services().runs.record_timeout(payload.run_id, payload.node).model_dump()
