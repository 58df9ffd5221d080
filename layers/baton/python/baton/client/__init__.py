"""What agent code imports: `Client` (the HTTP SDK), its interrupt waiters and SigV4 signing."""

from __future__ import annotations

from baton.client.sdk import Client

__all__ = ["Client"]
