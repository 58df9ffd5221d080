"""Where the VAPID private key (PEM) is read from: a Secrets Manager secret deployed (its SecretString,
read once per container), a file locally. An empty or missing secret value means push is not configured."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from baton.notify.push import VapidKeys

log = logging.getLogger("baton")


class SecretVapidKeys:
    """The key in a Secrets Manager secret, read on first use and kept (a failed read is tried again)."""

    def __init__(self, secret_id: str, client: Any) -> None:
        self._secret_id, self._client = secret_id, client
        self._keys: VapidKeys | None = None

    def __call__(self) -> VapidKeys | None:
        if self._keys is None:
            try:
                value = self._client.get_secret_value(SecretId=self._secret_id).get("SecretString", "")
            except Exception:  # no value stored yet (ResourceNotFound), or no access: push is off
                log.warning("the VAPID secret could not be read: web push is off", exc_info=True)
                return None
            if "PRIVATE KEY" not in value:
                return None
            self._keys = VapidKeys(value.encode())
        return self._keys


class FileVapidKeys:
    """The key in a PEM file (`baton dev`'s `.baton/vapid.pem`)."""

    def __init__(self, path: str) -> None:
        self._path = Path(path)

    def __call__(self) -> VapidKeys | None:
        try:
            return VapidKeys(self._path.read_bytes())
        except OSError:
            return None
