"""Web Push delivery (RFC 8030 / 8291 / 8292) through `pywebpush`: the payload encrypted aes128gcm to a
subscription's keys, a VAPID JWT signed with the server's key. The key is a P-256 private key in PEM:
`VapidKeys.generate()` makes one (`baton dev` keeps it in `.baton/vapid.pem`; deployed, `baton push
init-vapid` stores it in Secrets Manager), `public_key` is what browsers subscribe with.

A push service's 404 or 410 means the subscription is gone (`SubscriptionGone`: its caller deletes it);
any other failure is a `NotificationDeliveryError`."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from baton.notify.transport import DEFAULT_TIMEOUT_SECONDS, NotificationDeliveryError

if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_SUBJECT: Final = "mailto:baton@localhost"  # the VAPID `sub` claim when none is configured
GONE_STATUSES: Final = (404, 410)
# RFC 8291 section 4: a push service need take no more than 4096 octets; less the 86-octet header, the
# 16-octet tag and the 1-octet padding delimiter, at most 3993 octets of plaintext.
MAX_PLAINTEXT_BYTES: Final = 3993
TTL_SECONDS: Final = 12 * 3600  # how long a push service keeps a message for a browser that is offline


class SubscriptionGone(Exception):
    """The push service no longer serves this subscription (404/410): delete it."""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class VapidKeys:
    """The server's VAPID key pair, from its private key in PEM."""

    private_pem: bytes

    @classmethod
    def generate(cls) -> VapidKeys:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return cls(pem)

    @property
    def public_key(self) -> str:
        """The application server key: base64url of the uncompressed P-256 point (65 bytes)."""
        from cryptography.hazmat.primitives import serialization

        key = serialization.load_pem_private_key(self.private_pem, password=None)
        point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return _b64url(point)

    @property
    def answer_key(self) -> bytes:
        """The key that signs the one-tap answer credentials: derived from the VAPID private key, so it
        exists exactly when push does and the functions that push (which read this key) can sign with it;
        never the VAPID key itself."""
        return hmac.new(self.private_pem, b"baton-push-answer-key", hashlib.sha256).digest()


def send_web_push(
    subscription_info: Mapping[str, Any],
    data: bytes,
    keys: VapidKeys,
    *,
    subject: str = DEFAULT_SUBJECT,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> int:
    """POST one encrypted push; returns the push service's status. Raises SubscriptionGone on 404/410,
    NotificationDeliveryError on any other failure."""
    from py_vapid import Vapid
    from pywebpush import WebPushException, webpush

    endpoint = str(subscription_info.get("endpoint", ""))
    shown = endpoint.split("?", 1)[0][:120]
    try:
        response = webpush(
            dict(subscription_info),
            data=data,
            vapid_private_key=Vapid.from_pem(keys.private_pem),
            vapid_claims={"sub": subject},
            content_encoding="aes128gcm",
            ttl=TTL_SECONDS,
            timeout=timeout,
        )
    except WebPushException as exc:
        status = getattr(exc.response, "status_code", None)
        if status in GONE_STATUSES:
            raise SubscriptionGone(f"{shown}: HTTP {status}") from exc
        raise NotificationDeliveryError(
            f"push to {shown} failed: {exc.message}", details={"url": shown, "status": status}
        ) from exc
    except OSError as exc:  # requests' connection errors are OSErrors
        raise NotificationDeliveryError(f"push to {shown} failed: {exc}", details={"url": shown}) from exc
    return int(getattr(response, "status_code", 0) or 0)
