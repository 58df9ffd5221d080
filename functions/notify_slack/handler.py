"""SNS subscriber (filter: channel=slack): posts the notification as Block Kit to the Slack webhook.

Env: SLACK_WEBHOOK_URL (local/dev) | SLACK_WEBHOOK_PARAMETER (SSM SecureString name) |
SLACK_WEBHOOK_SECRET_ARN (Secrets Manager); optional NOTIFY_HTTP_TIMEOUT_SECONDS.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger

from baton.notify.config import SlackConfig
from baton.notify.slack import SlackPoster
from baton.notify.subscriber import deliver_sns_event

logger = Logger(service="baton")


@cache
def _poster() -> SlackPoster:
    """Built once per container from os.environ (the URL itself is read from SSM/Secrets on first use)."""
    return SlackConfig.from_env().build_poster()


def _invalid(message: str, exc: Exception) -> None:
    logger.error("notification body is not a Notification", extra={"error": str(exc), "body": message[:500]})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = deliver_sns_event(event, "slack", _poster().post, on_invalid=_invalid)
    logger.info("slack notifications delivered", extra=result.model_dump())
    return result.model_dump()
