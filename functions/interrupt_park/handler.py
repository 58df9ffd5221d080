"""The hosted interrupt's `waitForTaskToken` task: create the interrupt, park the token, return at once.

Event (statemachines/interrupt.asl.json): {token, run_id, node, request: {prompt, schema?, jsonSchema?,
state?, notify?, workflowId?, timeout_seconds}}. A bad request raises, so the task (and the run) fails
with the error name and message instead of waiting for a value it could never accept.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services
from baton.services.interrupts import InterruptSpec


class HostedRequest(BaseModel):
    prompt: str = Field(min_length=1)
    timeout_seconds: int = Field(ge=1)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    jsonSchema: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    notify: list[str] | None = None
    workflowId: str | None = None

    model_config = {"extra": "ignore", "populate_by_name": True}


class ParkInterruptRequest(BaseModel):
    token: str = Field(min_length=1)
    run_id: str = Field(min_length=1)
    node: str = Field(min_length=1)
    request: HostedRequest


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse(event=event, model=ParkInterruptRequest)
    req = parsed.request
    interrupt, _ = services().interrupts.create(
        InterruptSpec(
            session_id=parsed.run_id,
            node=parsed.node,
            prompt=req.prompt,
            workflow_id=req.workflowId,
            schema=req.schema_,
            json_schema=req.jsonSchema,
            state=req.state,
            notify=req.notify,
            timeout_ms=req.timeout_seconds * 1000,
        ),
        caller=f"workflow:{parsed.run_id}",
        token=parsed.token,
    )
    return {"parked": True, "interrupt_id": interrupt.interaction_id}
