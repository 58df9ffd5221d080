"""The review gate's diff task (`waitForTaskToken`): park the token in the table and start the gate's
diff build (`python -m baton.merge.build`, kind diff) — a CodeBuild build when deployed, a subprocess
against the local repository in the local stack. The build writes the bounded diff into the table; its
end (build_finished) sends the token. A gate with nothing to diff is released at once."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.domain.gate_payloads import DiffStartPayload
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = parse(event=event, model=DiffStartPayload)
    return services().review_service().start_diff(request.run_id, request.config or {}, request.token).model_dump()
