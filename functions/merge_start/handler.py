"""The review gate's merge task (`waitForTaskToken`): start `python -m baton.merge` with the token —
a CodeBuild build when deployed, a subprocess against the local repository in the local stack. The
command reports the outcome to Step Functions itself; this function returns at once."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import MergeStartPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=MergeStartPayload)
    return services().review_service().start_merge(request.run_id, request.gate, request.token)
