"""A gate's `waitForTaskToken` task: record what is asked and park the token, then return at once."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import ParkPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = parse(event=event, model=ParkPayload)
    interaction = services().runs.park(payload)
    return {"parked": True, "interaction_id": interaction.interaction_id}
