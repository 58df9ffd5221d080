"""SNS subscriber (filter: channel=console): prints the notification and logs it as structured fields.

The local stack subscribes this so SNS deliveries appear on the console. Env: none.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from baton.notify.console import console_fields, render_console
from baton.notify.model import Notification
from baton.notify.subscriber import deliver_sns_event

logger = Logger(service="baton")


def _print(notification: Notification) -> None:
    print(render_console(notification), flush=True)
    logger.info("notification", extra=console_fields(notification))


def _invalid(message: str, exc: Exception) -> None:
    logger.error("notification body is not a Notification", extra={"error": str(exc), "body": message[:500]})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return deliver_sns_event(event, "console", _print, on_invalid=_invalid).model_dump()
