"""SNS subscriber (filter: channel=slack): posts the notification as Block Kit to the Slack webhook,
or, when a Slack app is configured, as the app with the interaction's buttons and form
(`baton/channels/slack/app.py`).

Env: SLACK_WEBHOOK_URL (local/dev) | SLACK_WEBHOOK_PARAMETER (SSM SecureString name) |
SLACK_WEBHOOK_SECRET_ARN (Secrets Manager); optional NOTIFY_HTTP_TIMEOUT_SECONDS. The app:
SLACK_SIGNING_SECRET + SLACK_BOT_TOKEN | SLACK_APP_SECRET_ARN, SLACK_CHANNEL, BATON_INBOX_URL.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from aws_lambda_powertools import Logger

from baton.notify.config import SlackConfig
from baton.notify.model import Notification
from baton.notify.subscriber import deliver_sns_event

logger = Logger(service="baton")


@cache
def _poster() -> Callable[[Notification], int]:
    """Built once per container from os.environ (the URL itself is read from SSM/Secrets on first use)."""
    from baton.channels.slack.config import SlackAppConfig

    if SlackAppConfig.configured():
        from baton.channels.slack.app import build_poster  # slack_sdk: only with the app

        return build_poster(SlackAppConfig.from_env()).post
    return SlackConfig.from_env().build_poster().post


def _invalid(message: str, exc: Exception) -> None:
    logger.error("notification body is not a Notification", extra={"error": str(exc), "body": message[:500]})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = deliver_sns_event(event, "slack", _poster(), on_invalid=_invalid)
    logger.info("slack notifications delivered", extra=result.model_dump())
    return result.model_dump()
