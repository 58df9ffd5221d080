"""The hosted interrupt's `waitForTaskToken` task: create the interrupt, park the token, return at once.

Event (statemachines/interrupt.asl.json): {token, run_id, node, entered_at, request: {prompt, schema?, jsonSchema?,
state?, notify?, workflowId?, timeout_seconds, action?}}. A bad request raises, so the task (and the run) fails
with the error name and message instead of waiting for a value it could never accept.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import InterruptParkPayload
from baton.domain.interrupt_spec import InterruptSpec
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = parse(event=event, model=InterruptParkPayload)
    req = payload.request
    spec = InterruptSpec(
        session_id=payload.run_id,
        node=payload.node,
        prompt=req.prompt,
        workflow_id=req.workflow_id,
        schema=req.schema_,
        json_schema=req.json_schema,
        state=req.state,
        notify=req.notify,
        timeout_ms=req.timeout_seconds * 1000,
        approval=req.approval,
        ladder=req.ladder,
        action=req.action,
    )
    interrupt, _ = services().interrupts.create(
        spec, caller=f"workflow:{payload.run_id}", token=payload.token, entered_at=payload.entered_at
    )
    return {"parked": True, "interrupt_id": interrupt.interaction_id}
