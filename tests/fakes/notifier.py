"""A recording fake of `baton.ports.Notifier`: keeps what would have been published to SNS."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from baton.notify.sns import build_publish_request

if TYPE_CHECKING:
    from baton.notify.model import Channel, Notification


class RecordingNotifier:
    """In-memory fake with the same `publish` interface; keeps what would have been published."""

    def __init__(self, topic_arn: str = "arn:aws:sns:us-east-1:000000000000:baton-notifications") -> None:
        self.topic_arn = topic_arn
        self.notifications: list[Notification] = []
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    def publish(self, notification: Notification) -> str:
        self.notifications.append(notification)
        self.requests.append(build_publish_request(notification, self.topic_arn))
        return f"recorded-{next(self._ids)}"

    def for_channel(self, channel: Channel) -> list[Notification]:
        """What a subscription filtered on `channel` would have received."""
        return [n for n in self.notifications if channel in n.channels]

    def clear(self) -> None:
        self.notifications.clear()
        self.requests.clear()
