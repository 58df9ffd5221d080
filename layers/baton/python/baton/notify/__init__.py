"""Notifications for questions, interrupts, await gates and review turns: one SNS topic, four channels.

The names below are the package's public face, each imported from its module when first asked for
(PEP 562 `__getattr__`): a function imports only the modules it uses (the console subscriber does not
import the Slack poster, the webhook signer or urllib's HTTP client through `baton.notify.console`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton.notify.console import console_fields, render_console
    from baton.notify.email import render_email, render_subject
    from baton.notify.model import (
        CHANNELS,
        KINDS,
        Channel,
        Kind,
        Notification,
        how_to_answer_for,
    )
    from baton.notify.slack import (
        SecretsManagerUrl,
        SlackPoster,
        SsmParameterUrl,
        StaticUrl,
        build_blocks,
    )
    from baton.notify.sns import (
        SnsNotifier,
        build_publish_request,
        filter_policy_for,
        subscription_attributes_for,
    )
    from baton.notify.transport import NotificationDeliveryError
    from baton.notify.webhook import SIGNATURE_HEADER, WebhookPoster, sign, verify

_MODULE_OF = {
    "console_fields": "console",
    "render_console": "console",
    "render_email": "email",
    "render_subject": "email",
    "CHANNELS": "model",
    "KINDS": "model",
    "Channel": "model",
    "Kind": "model",
    "Notification": "model",
    "how_to_answer_for": "model",
    "SecretsManagerUrl": "slack",
    "SlackPoster": "slack",
    "SsmParameterUrl": "slack",
    "StaticUrl": "slack",
    "build_blocks": "slack",
    "SnsNotifier": "sns",
    "build_publish_request": "sns",
    "filter_policy_for": "sns",
    "subscription_attributes_for": "sns",
    "NotificationDeliveryError": "transport",
    "SIGNATURE_HEADER": "webhook",
    "WebhookPoster": "webhook",
    "sign": "webhook",
    "verify": "webhook",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "CHANNELS",
    "KINDS",
    "SIGNATURE_HEADER",
    "Channel",
    "Kind",
    "Notification",
    "NotificationDeliveryError",
    "SecretsManagerUrl",
    "SlackPoster",
    "SnsNotifier",
    "SsmParameterUrl",
    "StaticUrl",
    "WebhookPoster",
    "build_blocks",
    "build_publish_request",
    "console_fields",
    "filter_policy_for",
    "how_to_answer_for",
    "render_console",
    "render_email",
    "render_subject",
    "sign",
    "subscription_attributes_for",
    "verify",
]
