"""SNS adapter: one topic, one publish per notification, per-channel subscriptions with filter policies.

Each `publish` sends ONE `sns.publish` with:

- `Message`: `MessageStructure="json"` — `default` is the notification JSON (what SQS, Lambda,
  HTTP and email-json subscribers get) and `email` is the readable plain-text body.
- `Subject`: a readable one-line subject (< 100 chars, no control characters), used by email.
- `MessageAttributes`: `event`, `kind`, `run_id` (String), `interaction_id` (String, when set) and
  `channel` (String.Array of the chosen channels).

Every channel's subscription carries `filter_policy_for(channel)` = `{"channel": [channel]}`; SNS
matches a String.Array attribute when any element matches, so a notification reaches exactly the
subscriptions of the channels it names.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from baton.notify.email import render_email
from baton.notify.model import CHANNELS, Channel, Notification

if TYPE_CHECKING:
    from mypy_boto3_sns.client import SNSClient
else:
    SNSClient = Any

CHANNEL_ATTRIBUTE = "channel"


def message_attributes(notification: Notification) -> dict[str, dict[str, str]]:
    channels = json.dumps(list(notification.channels))
    attributes = {
        "event": {"DataType": "String", "StringValue": notification.event},
        "kind": {"DataType": "String", "StringValue": notification.kind},
        "run_id": {"DataType": "String", "StringValue": notification.run_id},
        CHANNEL_ATTRIBUTE: {"DataType": "String.Array", "StringValue": channels},
    }
    if notification.interaction_id:
        attributes["interaction_id"] = {"DataType": "String", "StringValue": notification.interaction_id}
    return attributes


def build_publish_request(notification: Notification, topic_arn: str) -> dict[str, Any]:
    """The keyword arguments of the single `sns.publish` call for `notification`."""
    subject, email_body = render_email(notification)
    message = {"default": notification.to_message(), "email": email_body}
    return {
        "TopicArn": topic_arn,
        "Message": json.dumps(message),
        "MessageStructure": "json",
        "Subject": subject,
        "MessageAttributes": message_attributes(notification),
    }


def filter_policy_for(channel: Channel | str) -> dict[str, list[str]]:
    """Subscription filter policy (scope MessageAttributes) that selects one channel."""
    if channel not in CHANNELS:
        raise ValueError(f"unknown channel {channel!r}; expected one of {', '.join(CHANNELS)}")
    return {CHANNEL_ATTRIBUTE: [channel]}


def subscription_attributes_for(channel: Channel | str) -> dict[str, str]:
    """`Attributes` for `sns.subscribe` / `set_subscription_attributes` on a channel's subscription."""
    return {
        "FilterPolicy": json.dumps(filter_policy_for(channel)),
        "FilterPolicyScope": "MessageAttributes",
    }


class SnsNotifier:
    """The `baton.ports.Notifier` deployed: publishes to one SNS topic through an injected boto3 client."""

    def __init__(self, client: SNSClient, topic_arn: str) -> None:
        if not topic_arn:
            raise ValueError("topic_arn must not be empty")
        self._client = client
        self.topic_arn = topic_arn

    def publish(self, notification: Notification) -> str:
        response = self._client.publish(**build_publish_request(notification, self.topic_arn))
        return str(response["MessageId"])
