"""The reconciler (scheduled; also callable locally): release every parked await gate whose questions
are all answered already, and time out tool-form awaits past their expiry. Idempotent."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.observability import logger, tracer
from baton.wiring import services


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = services().questions.reconcile()
    if result["released"] or result["timed_out"]:
        logger.info("reconciled", extra=result)
    return result
