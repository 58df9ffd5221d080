"""`baton dev`'s VAPID key for Web Push: made once under its state dir (`.baton/vapid.pem`, 0600) and
kept, so a browser's subscription (bound to the public key) still works after a restart."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.notify.push import VapidKeys
from baton.private_files import private_dir, write_private

if TYPE_CHECKING:
    from pathlib import Path

VAPID_FILE = "vapid.pem"


def local_vapid_key(state_dir: Path) -> Path:
    """The key file, made now if there is none; its absolute path (the stack's BATON_VAPID_KEY_FILE)."""
    path = private_dir(state_dir) / VAPID_FILE
    if not path.exists():
        write_private(path, VapidKeys.generate().private_pem.decode())
    return path.resolve()
