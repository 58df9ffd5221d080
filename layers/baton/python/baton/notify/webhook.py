"""Signed webhook delivery.

Every webhook POST carries the notification as a JSON body (`Notification.to_message()`, UTF-8) and
these headers:

    Content-Type: application/json
    X-Baton-Event: <event>                 e.g. human_input_requested, interrupt_created, review_turn
    X-Baton-Signature: t=<unix seconds>,v1=<hex>

`v1` is the lowercase hex HMAC-SHA256, keyed with the shared webhook secret (UTF-8), of the signed
payload `f"{t}.".encode() + raw_body` — the timestamp, a literal dot, then the exact bytes of the
body as received (do not re-serialize the JSON before verifying). This is the Stripe scheme.

To verify on the receiving side:

1. Split the header on ``,``; take ``t`` and every ``v1`` value (several ``v1`` may appear while a
   secret is being rotated; any match is accepted).
2. Compute ``hmac.new(secret, f"{t}.".encode() + body, sha256).hexdigest()`` and compare it to each
   ``v1`` in constant time.
3. Reject if ``abs(now - t)`` exceeds your tolerance (300 s by default) — this stops replays.

`verify(body, header_value, secret, now=time.time())` does exactly that.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import TYPE_CHECKING

from baton.notify.transport import DEFAULT_TIMEOUT_SECONDS, Opener, post_json

if TYPE_CHECKING:
    from collections.abc import Callable

    from baton.notify.model import Notification

SIGNATURE_HEADER = "X-Baton-Signature"
EVENT_HEADER = "X-Baton-Event"
SIGNATURE_SCHEME = "v1"
DEFAULT_TOLERANCE_SECONDS = 300


def _digest(body: bytes, secret: str, timestamp: int) -> str:
    signed = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()


def sign(body: bytes, secret: str, timestamp: int) -> str:
    """The `X-Baton-Signature` header value for `body` sent at `timestamp` (unix seconds)."""
    if not secret:
        raise ValueError("webhook secret must not be empty")
    return f"t={int(timestamp)},{SIGNATURE_SCHEME}={_digest(body, secret, int(timestamp))}"


def parse_signature_header(header_value: str) -> tuple[int, list[str]] | None:
    """(timestamp, [v1 signatures]) from a header value, or None when it is malformed."""
    timestamp: int | None = None
    signatures: list[str] = []
    for item in header_value.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep:
            return None
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError:
                return None
        elif key == SIGNATURE_SCHEME:
            signatures.append(value.strip().lower())
    if timestamp is None or not signatures:
        return None
    return timestamp, signatures


def verify(
    body: bytes,
    header_value: str | None,
    secret: str,
    *,
    now: float | None = None,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
) -> bool:
    """True when `header_value` is a valid signature of `body` with `secret`, within the tolerance."""
    if not header_value or not secret:
        return False
    parsed = parse_signature_header(header_value)
    if parsed is None:
        return False
    timestamp, signatures = parsed
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_seconds:
        return False
    expected = _digest(body, secret, timestamp)
    return any(hmac.compare_digest(expected, candidate) for candidate in signatures)


class WebhookPoster:
    """POSTs a notification as signed JSON to one URL. Raises NotificationDeliveryError on failure."""

    def __init__(
        self,
        url: str,
        secret: str,
        opener: Opener | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not url:
            raise ValueError("webhook url must not be empty")
        if not secret:
            raise ValueError("webhook secret must not be empty")
        self.url = url
        self._secret = secret
        self._opener = opener
        self._timeout = timeout
        self._clock = clock

    def build_request(self, notification: Notification) -> tuple[bytes, dict[str, str]]:
        """The exact body bytes and headers that `post` sends."""
        body = notification.to_message().encode("utf-8")
        headers = {
            SIGNATURE_HEADER: sign(body, self._secret, int(self._clock())),
            EVENT_HEADER: notification.event,
        }
        return body, headers

    def post(self, notification: Notification) -> int:
        """Deliver; returns the HTTP status."""
        body, headers = self.build_request(notification)
        status, _ = post_json(self.url, body, headers=headers, opener=self._opener, timeout=self._timeout)
        return status

    __call__ = post
