"""The review gate's merge task (`waitForTaskToken`): park the token in the table and start the merge
build (`python -m baton.merge.build`, kind merge) — a CodeBuild build when deployed, a subprocess
against the local repository in the local stack. The build never sees the token: it writes its outcome
into the table, and its end (build_finished) sends the token. This function returns at once."""

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
    return services().review_service().start_merge(request.run_id, request.gate, request.token).model_dump()
