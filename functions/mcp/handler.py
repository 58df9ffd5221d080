"""API Gateway (`POST /mcp`) -> Baton's MCP server: the agent tools over Streamable HTTP, stateless."""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from baton import __version__
from baton.mcp.agent import MAX_CALL_WAIT_SECONDS, WaitPolicy
from baton.mcp.http import McpHttpHandler
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services

# BATON_MCP_MAX_WAIT_SECONDS can only shorten a call's bound (tests measure it small), never lengthen it.
MAX_WAIT = min(float(os.environ.get("BATON_MCP_MAX_WAIT_SECONDS") or MAX_CALL_WAIT_SECONDS), MAX_CALL_WAIT_SECONDS)
HANDLER = McpHttpHandler(services, policy=WaitPolicy(max_call_seconds=MAX_WAIT), version=__version__)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return HANDLER(event, context)
