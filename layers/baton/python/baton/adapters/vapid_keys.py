"""Where the VAPID private key (PEM) is read from: a Secrets Manager secret deployed (its SecretString,
read once per container), a file locally. An empty or missing secret value means push is not configured."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from baton.channels.push.web_push import VapidKeys

log = logging.getLogger("baton")


RETRY_SECONDS = 60.0  # an empty secret is read again after this (the operator may have filled it)


class SecretVapidKeys:
    """The key in a Secrets Manager secret, read on first use and kept; no key yet (the secret is empty, or
    unreadable) is remembered for RETRY_SECONDS, so a stack without push does not read it on every request."""

    def __init__(self, secret_id: str, client: Any, clock: Any = time.monotonic) -> None:
        self._secret_id, self._client, self._clock = secret_id, client, clock
        self._keys: VapidKeys | None = None
        self._none_until = 0.0

    def __call__(self) -> VapidKeys | None:
        if self._keys is None and self._clock() >= self._none_until:
            self._keys = self._read()
            self._none_until = self._clock() + RETRY_SECONDS
        return self._keys

    def _read(self) -> VapidKeys | None:
        try:
            value = self._client.get_secret_value(SecretId=self._secret_id).get("SecretString", "")
        except Exception:  # no value stored yet (ResourceNotFound), or no access: push is off
            log.warning("the VAPID secret could not be read: web push is off", exc_info=True)
            return None
        return VapidKeys(value.encode()) if "PRIVATE KEY" in value else None


class FileVapidKeys:
    """The key in a PEM file (`baton dev`'s `.baton/vapid.pem`)."""

    def __init__(self, path: str) -> None:
        self._path = Path(path)

    def __call__(self) -> VapidKeys | None:
        try:
            return VapidKeys(self._path.read_bytes())
        except OSError:
            return None


def init_vapid_secret(secret_id: str, *, replace: bool = False, client: Any = None) -> VapidKeys | None:
    """`baton push init-vapid`: a new key stored as the secret's value (with the caller's AWS credentials);
    None, storing nothing, when the secret holds a key already and not `replace` (a new key ends every
    browser's subscription)."""
    if client is None:
        import boto3

        client = boto3.session.Session().client("secretsmanager")
    if not replace and SecretVapidKeys(secret_id, client)() is not None:
        return None
    keys = VapidKeys.generate()
    client.put_secret_value(SecretId=secret_id, SecretString=keys.private_pem.decode())
    return keys
