"""A gate's `waitForTaskToken` task: record what is asked and park the token, then return at once."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


class ParkRequest(BaseModel):
    token: str = Field(min_length=1)
    run_id: str = Field(min_length=1)
    node: str = Field(min_length=1)
    kind: str = "ask"
    prompt: str = Field(min_length=1)
    timeout_seconds: int
    notify: list[str] | None = None


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=ParkRequest)
    interaction = services().runs.park(**request.model_dump())
    return {"parked": True, "interaction_id": interaction.interaction_id}
