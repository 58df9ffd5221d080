"""Minimal JSON POST over urllib (no extra dependency in the Lambda layer), with an injectable opener."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from baton.errors import BatonError

USER_AGENT = "baton-notify/0.1"
DEFAULT_TIMEOUT_SECONDS = 10.0


class NotificationDeliveryError(BatonError):
    """A channel endpoint (webhook, Slack) refused or could not be reached. `details` has url and status."""

    code = "notification_delivery_failed"
    http_status = 502


Opener = Callable[..., Any]
"""`opener(request: urllib.request.Request, timeout=seconds)` → a context-managed response with
`getcode()` and `read()`; `urllib.request.urlopen` by default. Non-2xx may be returned or raised as
`urllib.error.HTTPError`; both become `NotificationDeliveryError`."""


def _redact(url: str) -> str:
    # Slack incoming-webhook URLs are secrets: keep scheme and host only in errors and logs.
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/…" if parts.path not in ("", "/") else url


def post_json(
    url: str,
    body: bytes,
    *,
    headers: Mapping[str, str] | None = None,
    opener: Opener | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    redact_url: bool = False,
) -> tuple[int, bytes]:
    """POST `body` as application/json; return (status, response body) or raise NotificationDeliveryError."""
    # Imported at the first POST: urllib.request brings http.client, ssl and email, which a function that
    # only renders (the console, a fan-out's publish) never needs at its cold start.
    import urllib.error
    import urllib.request

    shown = _redact(url) if redact_url else url
    all_headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **(headers or {})}
    request = urllib.request.Request(url, data=body, headers=all_headers, method="POST")
    open_ = opener or urllib.request.urlopen
    try:
        with open_(request, timeout=timeout) as response:
            status = int(response.getcode() or 0)
            payload = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:500].decode("utf-8", "replace") if exc.fp is not None else ""
        raise NotificationDeliveryError(
            f"POST {shown} failed with HTTP {exc.code}: {detail or exc.reason}",
            details={"url": shown, "status": exc.code},
        ) from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise NotificationDeliveryError(
            f"POST {shown} failed: {reason}", details={"url": shown, "status": None}
        ) from exc
    if not 200 <= status < 300:
        raise NotificationDeliveryError(
            f"POST {shown} failed with HTTP {status}: {payload[:500].decode('utf-8', 'replace')}",
            details={"url": shown, "status": status},
        )
    return status, payload
