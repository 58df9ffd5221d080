"""A Step Functions execution changed status (EventBridge; locally the stack's hook when moto's execution
ends): record its run's end, with the execution's stop time, once (baton.services.lifecycle)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.execution_events import ExecutionEnd, ExecutionStatusChange
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from baton.services.lifecycle import record_end  # the services come with the first call (cold start)

    end = ExecutionEnd.from_event(parse(event=event, model=ExecutionStatusChange))
    if end is None:
        return {"recorded": False, "reason": "not an end"}
    return {"recorded": record_end(services().core, end), "execution_arn": end.execution_arn}
