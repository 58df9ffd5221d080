"""Direct fan-out without SNS: one sink per channel, called in-process.

For the local stack or tests that want console/webhook/Slack delivery without the SNS hop; deployed,
`SnsNotifier` and the per-channel subscriptions do this job.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

from baton.notify.model import Channel, Notification
from baton.notify.transport import NotificationDeliveryError

Sink = Callable[[Notification], Any]


class FanoutNotifier:
    """`publish` calls the sink of every chosen channel; channels without a sink are skipped.

    Every sink is tried; if any failed, one NotificationDeliveryError listing them is raised afterwards.
    """

    def __init__(self, sinks: Mapping[Channel, Sink]) -> None:
        self._sinks = dict(sinks)
        self._ids = itertools.count(1)

    def publish(self, notification: Notification) -> str:
        failures: dict[str, str] = {}
        for channel in notification.channels:
            sink = self._sinks.get(channel)
            if sink is None:
                continue
            try:
                sink(notification)
            except Exception as exc:
                failures[channel] = str(exc)
        if failures:
            summary = "; ".join(f"{channel}: {reason}" for channel, reason in failures.items())
            raise NotificationDeliveryError(
                f"notification delivery failed for {summary}", details={"failures": failures}
            )
        return f"local-{next(self._ids)}"
