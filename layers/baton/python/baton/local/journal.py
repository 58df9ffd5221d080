"""The local stack's write journal, after the snapshot `baton.local.persist` keeps: one line per committed
moto request (`{"put": [item, ...], "delete": [key, ...]}`, DynamoDB JSON), appended to an `O_APPEND` file
before the DynamoDB lock is released, so an acknowledged answer survives `kill -9`. Whole items make replay
idempotent, so the snapshot can be cut at any moment (`rotate`). A last line cut short (never acknowledged)
is ignored; an unreadable line before it stops that file's replay; both are logged."""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING, Any

from baton.private_files import private_dir

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

log = logging.getLogger("baton")
Key = tuple[str, str]  # an item's (PK, SK) as text


def line(puts: Iterable[str], deletes: Iterable[str]) -> bytes:
    """One journal line from item texts and key texts (each already DynamoDB JSON)."""
    return f'{{"put":[{",".join(puts)}],"delete":[{",".join(deletes)}]}}\n'.encode()


class Journal:
    """The append-only file: `append` under the DynamoDB lock, `sync` from the saver's thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.old = path.with_name(path.name + ".old")
        self.bytes = 0  # appended since the last rotation
        self.appended = 0  # lines appended since opened (tests and figures read it)
        self._fd: int | None = None
        self._unsynced = False

    def open(self, *, truncate: bool = False) -> None:
        private_dir(self.path.parent)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if truncate else 0)
        self._fd = os.open(self.path, flags, 0o600)  # beside the token's file: yours only
        self.bytes = os.fstat(self._fd).st_size

    def append(self, data: bytes) -> None:
        if self._fd is None:
            raise RuntimeError(f"the journal {self.path} is not open")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        self.bytes += len(data)
        self.appended += 1
        self._unsynced = True

    def sync(self) -> None:
        """On the disk, not only in the operating system's cache (a power loss keeps it too)."""
        if self._fd is not None and self._unsynced:
            self._unsynced = False
            os.fsync(self._fd)

    def rotate(self) -> None:
        """Move the current file aside as `<name>.old` and start an empty one (call under the lock)."""
        self.sync()
        self.close()
        if self.old.exists():  # the last compaction did not finish: keep its entries, add these after them
            with self.old.open("ab") as older:
                older.write(self.path.read_bytes())
                older.flush()
                os.fsync(older.fileno())
            self.path.unlink()
        elif self.path.exists():
            os.replace(self.path, self.old)
        self.open(truncate=True)

    def drop_old(self) -> None:
        """After a snapshot that holds everything the old file did."""
        self.old.unlink(missing_ok=True)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def key_of(attrs: dict[str, Any], key_names: tuple[str, str]) -> Key:
    return json.dumps(attrs[key_names[0]], sort_keys=True), json.dumps(attrs.get(key_names[1]), sort_keys=True)


def replay(
    items: dict[Key, dict[str, Any]],
    journal: Journal,
    key_names: tuple[str, str],
    object_hook: Callable[[dict[str, Any]], Any],
) -> None:
    """Apply `<name>.old`, then `<name>`, to `items` (by key)."""
    for path in (journal.old, journal.path):
        lines = path.read_bytes().split(b"\n") if path.exists() else [b""]
        complete, tail = lines[:-1], lines[-1]  # what follows the last newline was cut short (or is empty)
        for number, raw in enumerate(complete, start=1):
            try:
                entry = json.loads(raw, object_hook=object_hook)
                puts, deletes = entry["put"], entry["delete"]
            except (ValueError, TypeError, KeyError) as err:
                if number == len(complete) and not tail:
                    tail = raw  # the last line itself is the torn one
                    break
                left = len(complete) - number + 1
                log.warning("local stack: %s line %d is unreadable (%s); %d line(s) left out", path, number, err, left)
                tail = b""
                break
            for attrs in puts:
                items[key_of(attrs, key_names)] = attrs
            for attrs in deletes:
                items.pop(key_of(attrs, key_names), None)
        if tail.strip():
            message = "local stack: ignored the last line of %s, cut short by a crash (%d bytes; never answered)"
            log.warning(message, path, len(tail))
