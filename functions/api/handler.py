"""API Gateway → Baton's HTTP API (one Powertools resolver for every route)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.api.app import create_app
from baton.runtime.observability import logger, tracer

# One resolver per handler instance (per Lambda container; per local-stack container too).
APP = create_app(lazy=True)  # each route module loads with the first request it serves


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return APP.resolve(event, context)
