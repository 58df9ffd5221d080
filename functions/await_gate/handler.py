"""The await gate's `waitForTaskToken` task: park the token as WAIT#<gate>, then re-check the store
(questions answered before the park release the gate at once). Returns immediately either way."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import AwaitGatePayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = parse(event=event, model=AwaitGatePayload)
    return (
        services()
        .questions.park_gate(
            run_id=payload.run_id,
            gate=payload.gate,
            token=payload.token,
            timeout_seconds=payload.timeout_seconds,
            from_node=payload.from_node,
            map_item=payload.map_item,
            entered_at=payload.entered_at,
            ladder=payload.ladder,
        )
        .model_dump()
    )
