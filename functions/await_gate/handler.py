"""The await gate's `waitForTaskToken` task: park the token as WAIT#<gate>, then re-check the store
(questions answered before the park release the gate at once). Returns immediately either way."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


class AwaitGateRequest(BaseModel):
    token: str = Field(min_length=1)
    run_id: str = Field(min_length=1)
    gate: str = Field(min_length=1, description="The gate's name (inside a Map the item index is appended)")
    from_: str | None = Field(default=None, alias="from", description="One node's questions; empty = whole run")
    timeout_seconds: int
    map_item: int | str | None = Field(default=None, description="$$.Map.Item.Index inside a Map iteration")

    model_config = {"populate_by_name": True}


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=AwaitGateRequest)
    return services().questions.park_gate(
        run_id=request.run_id,
        gate=request.gate,
        token=request.token,
        timeout_seconds=request.timeout_seconds,
        from_node=request.from_ or None,
        map_item=request.map_item,
    )
