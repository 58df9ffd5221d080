"""`POST /slack/interactions` (API Gateway, no IAM/Cognito: Slack signs each request instead): verify the
signature on the raw body, refuse a replay, then ack at once; the answer runs in the worker
(`baton/channels/slack/ack.py`). Its cold start imports only what verifying and queueing need
(`baton/channels/slack/endpoint.py`); a modal's open or submit loads the form desk on first use.
Env: `SLACK_SIGNING_SECRET` | `SLACK_APP_SECRET_ARN`, `BATON_SLACK_OPERATORS` |
`BATON_SLACK_OPERATORS_PARAMETER`, `BATON_SLACK_WORKER_FUNCTION`, `BATON_TABLE_NAME`."""

from __future__ import annotations

import base64
import json
from functools import cache
from typing import TYPE_CHECKING, Any

from baton.errors import NotFoundError
from baton.runtime.observability import logger

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from baton.channels.slack.ack import SlackAck


@cache
def _service() -> SlackAck:
    """Built once per container (the secrets are read on the first request)."""
    from baton.channels.slack.endpoint import build_ack

    return build_ack()


def _raw_body(event: dict[str, Any]) -> bytes:
    body = event.get("body") or ""
    return base64.b64decode(body) if event.get("isBase64Encoded") else str(body).encode("utf-8")


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    headers = {str(k): str(v) for k, v in (event.get("headers") or {}).items()}
    try:
        service = _service()
    except NotFoundError as err:  # no Slack app on this stack: a 404 in words, not a crash (a 502)
        logger.warning("slack interaction on a stack without Slack", extra={"reason": err.message})
        return _json(err.http_status, err.to_body())
    reply = service.handle(_raw_body(event), headers)
    if reply.status != 200:
        logger.warning("slack interaction refused", extra={"status": reply.status, "body": reply.body})
    return _json(reply.status, reply.body)


def _json(status: int, body: object) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body) if body is not None else "",
    }
