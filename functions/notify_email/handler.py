"""SNS subscriber (filter: channel=email): one mail per recipient, each with its own signed answer link.

Env: BATON_EMAIL_RECIPIENTS, BATON_EMAIL_SENDER (SES identity), BATON_EMAIL_LINK_SECRET_ARN,
BATON_EMAIL_LINK_BASE_URL, BATON_INBOX_URL, optional BATON_EMAIL_LINK_TTL_SECONDS; locally
BATON_EMAIL_OUTBOX (printed and kept, not sent). See baton/channels/email/config.py.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger

from baton.channels.email.config import email_config
from baton.channels.email.mail import EmailNotifier
from baton.notify.subscriber import deliver_sns_event

logger = Logger(service="baton")


@cache
def _notifier() -> EmailNotifier:
    """Built once per container from os.environ (the link key is read from Secrets Manager on first use)."""
    return email_config().notifier()


def _invalid(message: str, exc: Exception) -> None:
    logger.error("notification body is not a Notification", extra={"error": str(exc), "body": message[:500]})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    result = deliver_sns_event(event, "email", _notifier().deliver, on_invalid=_invalid)
    logger.info("email notifications delivered", extra=result.model_dump())
    return result.model_dump()
