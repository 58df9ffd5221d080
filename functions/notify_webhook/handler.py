"""SNS subscriber (filter: channel=webhook): POSTs the notification JSON, signed (X-Baton-Signature).

Env: WEBHOOK_URL; WEBHOOK_SECRET | WEBHOOK_SECRET_PARAMETER (SSM SecureString name);
optional NOTIFY_HTTP_TIMEOUT_SECONDS.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger

from baton.notify.config import WebhookConfig
from baton.notify.subscriber import deliver_sns_event
from baton.notify.webhook import WebhookPoster

logger = Logger(service="baton")


@cache
def _poster() -> WebhookPoster:
    """Built once per container from os.environ (and the secret from SSM when configured so)."""
    return WebhookConfig.from_env().build_poster()


def _invalid(message: str, exc: Exception) -> None:
    logger.error("notification body is not a Notification", extra={"error": str(exc), "body": message[:500]})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = deliver_sns_event(event, "webhook", _poster().post, on_invalid=_invalid)
    logger.info("webhook notifications delivered", extra=result.model_dump())
    return result.model_dump()
