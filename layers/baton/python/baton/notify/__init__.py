"""Notifications for questions, interrupts, await gates and review turns: one SNS topic, four channels."""

from __future__ import annotations

from baton.notify.console import console_fields, render_console
from baton.notify.email import render_email, render_subject
from baton.notify.fanout import FanoutNotifier
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

__all__ = [
    "CHANNELS",
    "KINDS",
    "SIGNATURE_HEADER",
    "Channel",
    "FanoutNotifier",
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
