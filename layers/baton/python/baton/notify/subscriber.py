"""What the notify_* subscriber Lambdas do with an SNS event, independent of the channel.

The notification is rebuilt from the message BODY (`Records[].Sns.Message`), never from SNS message
attributes (moto's SNS→Lambda delivery does not pass them through). As a second line of defence
behind the subscription filter policy, a record whose notification does not name the subscriber's
channel is skipped, so an unfiltered subscription (e.g. locally) still delivers only what was asked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from baton.errors import BadRequestError
from baton.notify.model import Channel, Notification

Deliver = Callable[[Notification], Any]


class DeliveryResult(BaseModel):
    channel: str
    delivered: int = 0
    skipped: int = 0
    invalid: int = 0
    interaction_ids: list[str] = Field(default_factory=list)


def iter_sns_messages(event: Mapping[str, Any]) -> Iterator[str]:
    """The raw message bodies of an SNS → Lambda event. A bare notification dict is accepted too."""
    records = event.get("Records")
    if records is None:
        if "event" in event and "run_id" in event:  # direct invoke with the notification itself
            yield json.dumps(dict(event))
            return
        raise BadRequestError("not an SNS event: no Records")
    for record in records:
        sns = record.get("Sns") or record.get("sns")
        if not isinstance(sns, Mapping) or "Message" not in sns:
            raise BadRequestError("SNS record without Sns.Message")
        yield str(sns["Message"])


def deliver_sns_event(
    event: Mapping[str, Any],
    channel: Channel,
    deliver: Deliver,
    *,
    on_invalid: Callable[[str, Exception], None] | None = None,
) -> DeliveryResult:
    """Parse every record into a Notification and `deliver` those addressed to `channel`.

    Delivery errors propagate (SNS/Lambda retries the event); a body that is not a Notification is
    counted as `invalid` and reported to `on_invalid` instead, since retrying it cannot help.
    """
    result = DeliveryResult(channel=channel)
    for message in iter_sns_messages(event):
        try:
            notification = Notification.from_message(message)
        except ValidationError as exc:
            result.invalid += 1
            if on_invalid is not None:
                on_invalid(message, exc)
            continue
        if channel not in notification.channels:
            result.skipped += 1
            continue
        deliver(notification)
        result.delivered += 1
        if notification.interaction_id:
            result.interaction_ids.append(notification.interaction_id)
    return result
