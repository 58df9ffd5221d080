"""Clock and id generator, injectable so tests control time and ids without sleeping."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from datetime import UTC, datetime
from typing import Protocol

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class IdGenerator(Protocol):
    def new_id(self) -> str: ...


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


class UlidGenerator:
    """Monotonic ULIDs: sortable by creation time, strictly increasing within one process.

    Monotonicity matters because event and message sort keys are ULIDs and their order is the
    delivery order.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_rand = 0

    def new_id(self) -> str:
        with self._lock:
            ms = int(time.time() * 1000)
            if ms <= self._last_ms:
                ms = self._last_ms
                rand = self._last_rand + 1
            else:
                rand = int.from_bytes(os.urandom(10), "big") >> 1  # leave room to increment
            self._last_ms, self._last_rand = ms, rand
            return _encode(ms, 10) + _encode(rand, 16)


def task_interaction_id(token: str, entered_at: datetime) -> str:
    """A ULID-shaped id made from a task itself: its entry time (ids still sort by time) and 80 bits of
    its token's hash. The same task (a retried park) always gets the same id."""
    digest = int.from_bytes(hashlib.sha256(token.encode()).digest()[:10], "big")
    return _encode(int(entered_at.timestamp() * 1000), 10) + _encode(digest, 16)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
