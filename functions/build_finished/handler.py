"""A review-gate build ended (the EventBridge rule on the merge project's state changes; the local
stack's runner when its subprocess exits): send the task token parked for it, once, with what the
build reported into the table. Events of builds Baton did not start are ignored."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.build_events import CodeBuildStateChange
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    finished = parse(event=event, model=CodeBuildStateChange).finished()
    if finished is None:
        return {"sent": False, "reason": "not a Baton build"}
    return services().review_service().build_finished(finished).model_dump(exclude_none=True)
