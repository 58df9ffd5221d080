"""What the local stack keeps across restarts: its DynamoDB table and the bearer token, in the state dir:
a snapshot (`local-data.json`) and the journal of every write since it (`local-data.journal`). A journal
line is one committed moto request (`{"put": [item, ...], "delete": [key, ...]}`, DynamoDB JSON), appended
to an `O_APPEND` file before the DynamoDB lock is released (an acknowledged answer survives `kill -9`) and
`fsync`ed within a second. Whole items make replay idempotent, so the snapshot can be cut at any moment
(`Journal.rotate`); it is rewritten whole when the journal outgrows it, and on stop. A last line cut short
(never acknowledged) is ignored; an unreadable line before it stops that file's replay; both are logged.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from baton.domain.fields import OPEN_RUN_STATES
from baton.domain.json_input import with_valid_text
from baton.events import RunFailed
from baton.local.moto_fixes import after_each_write, dynamodb_lock
from baton.local.moto_scale import stored_item, stored_items, track_changes
from baton.private_files import private_dir, write_private
from baton.workflows.table import PK, SK

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from baton.services.core import Core

DATA_FILE = "local-data.json"
JOURNAL_FILE = "local-data.journal"
COMPACT_BYTES = 8 * 1024 * 1024  # the least the journal grows to before the snapshot is rewritten
FORMAT = 1
RESTART_REASON = "the local stack restarted; executions do not survive a restart"
log = logging.getLogger("baton")


@dataclass
class Saved:
    token: str
    items: list[dict[str, Any]] = field(default_factory=list)  # the table's items, in DynamoDB JSON


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

    def sync(self) -> None:  # on the disk, not only in the OS's cache: a power loss keeps it too
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

    def drop_old(self) -> None:  # after a snapshot that holds everything the old file did
        self.old.unlink(missing_ok=True)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def key_of(attrs: dict[str, Any]) -> Key:
    return json.dumps(attrs[PK], sort_keys=True), json.dumps(attrs.get(SK), sort_keys=True)


def replay(items: dict[Key, dict[str, Any]], journal: Journal) -> bytes:
    """Apply `<name>.old`, then `<name>`, to `items` (by key); returns what was read."""
    read = b""
    for path in (journal.old, journal.path):
        data = path.read_bytes() if path.exists() else b""
        read += data
        lines = data.split(b"\n")
        complete, tail = lines[:-1], lines[-1]  # what follows the last newline was cut short (or is empty)
        for number, raw in enumerate(complete, start=1):
            try:
                entry = json.loads(raw, object_hook=_binary_back)
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
                items[key_of(attrs)] = attrs
            for attrs in deletes:
                items.pop(key_of(attrs), None)
        if tail.strip():
            message = "local stack: ignored the last line of %s, cut short by a crash (%d bytes; never answered)"
            log.warning(message, path, len(tail))
    return read


def journal_of(path: Path) -> Journal:  # the journal that follows the snapshot at `path`
    return Journal(path.with_name(JOURNAL_FILE))


def load(path: Path) -> Saved | None:
    """The snapshot, then the journal's writes since it; None when there is none or it is unreadable."""
    if not path.exists():
        return None
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text, object_hook=_binary_back)
        if data.get("format") != FORMAT or not isinstance(data.get("token"), str):
            raise ValueError(f"unknown format {data.get('format')!r}")
        items = {key_of(attrs): attrs for attrs in data.get("items", [])}
    except (OSError, ValueError, TypeError, AttributeError, KeyError) as err:
        log.warning("local stack: %s is unreadable (%s); starting with an empty table", path, err)
        return None
    journaled = replay(items, journal_of(path)).decode("ascii", "replace")
    saved = list(items.values())
    if _SURROGATE_ESCAPE.search(text) or _SURROGATE_ESCAPE.search(journaled):
        saved = _repaired(saved)
    return Saved(token=data["token"], items=saved)


# Saved text repaired on load: a lone surrogate (stored before the API's door refused them, `baton.domain.json_input`)
# becomes U+FFFD, in a string attribute or in the JSON text one holds. The files are ASCII JSON, so a surrogate shows
# as its escape: the items are walked only when one does (a second per 20,000 items; the search, a few ms).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _valid_text(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD, those in the JSON it may hold included (written back
    compact: every reader parses it)."""
    text = with_valid_text(text)
    if not _SURROGATE_ESCAPE.search(text):
        return text
    try:
        held = json.loads(text)
    except ValueError:
        return text  # not JSON: the escape is plain text
    valid = with_valid_text(held)
    return json.dumps(valid, separators=(",", ":")) if valid != held else text


def _valid_attribute(value: Any) -> Any:
    """A DynamoDB JSON value with valid text all through (strings, string sets, map keys, nested values)."""
    if isinstance(value, str):
        return _valid_text(value)
    if isinstance(value, list):
        return [_valid_attribute(v) for v in value]
    if isinstance(value, dict):
        return {_valid_text(k): _valid_attribute(v) for k, v in value.items()}
    return value  # numbers are text too, but never hold a surrogate; binary stays bytes


def _repaired(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The saved items with valid text; how many needed it is logged once (nothing when none did)."""
    fixed = [_valid_attribute(attrs) for attrs in items]
    if count := sum(before != after for before, after in zip(items, fixed, strict=True)):
        log.warning(
            "local stack: %d saved item(s) held text that is not valid Unicode (a lone surrogate, stored before the "
            "API refused them); each such character now reads U+FFFD",
            count,
        )
    return fixed


def save(path: Path, token: str, item_texts: list[str]) -> None:
    """The whole snapshot (each item as JSON text), 0600 (it holds the bearer token), on the disk."""
    items = ",\n".join(item_texts)
    text = f'{{"format":{FORMAT},"token":{json.dumps(token)},"items":[{items}]}}\n'
    private_dir(path.parent)
    write_private(path, text, durable=True)


def _table(table_name: str) -> Any:
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[DEFAULT_ACCOUNT_ID][os.environ.get("AWS_REGION", "us-east-1")].get_table(table_name)


_BINARY = "__baton_b64__"  # how a binary (B) attribute value is kept in the JSON file


def _binary_out(value: object) -> object:
    """A binary attribute (a build's compressed report, adapters/build_records.py) as base64 text."""
    if isinstance(value, bytes | bytearray):
        return {_BINARY: base64.b64encode(bytes(value)).decode("ascii")}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _binary_back(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and _BINARY in obj and isinstance(obj[_BINARY], str):
        return base64.b64decode(obj[_BINARY])
    return obj


def _item_text(item: Any) -> str:
    return json.dumps(item.to_json()["Attributes"], separators=(",", ":"), default=_binary_out)


def snapshot(table_name: str) -> list[str]:
    """Every item of the table as DynamoDB JSON text, read under the DynamoDB lock (a consistent cut)."""
    table = _table(table_name)
    with dynamodb_lock():
        return [_item_text(item) for item in stored_items(table)]


def restore(table_name: str, items: list[dict[str, Any]]) -> None:
    """Put the saved items back into the (new, empty) table as they were saved (in the key layout of then)."""
    table = _table(table_name)
    with dynamodb_lock():
        for attrs in items:
            table.put_item(attrs, overwrite=True)


def close_interrupted_runs(core: Core, items: list[dict[str, Any]]) -> list[str]:
    """Fail every hosted run that was running or paused (its execution lived in moto's memory) and close what
    it waited on; returns the run ids closed. External runs keep their questions pending and answerable."""
    from baton.services.run_stop import close_pauses

    closed = []
    for attrs in items:
        if attrs.get("SK", {}).get("S") != "RUN" or not attrs.get("hosted", {}).get("BOOL"):
            continue
        if attrs.get("status", {}).get("S") not in OPEN_RUN_STATES:
            continue
        run_id = attrs["PK"]["S"].removeprefix("RUN#")
        if core.set_run_status(run_id, "failed", allowed_from=OPEN_RUN_STATES, reason=RESTART_REASON):
            core.record(run_id, RunFailed(reason=RESTART_REASON))
            closed.append(run_id)
        # as a stop closes them (else the reconciler and the sweeper retry dead tokens); its timers died with it
        close_pauses(core, run_id, by="baton-local", cause=RESTART_REASON, stop_timers=False)
    return closed


class Persister:
    """Journals each write (`commit`), `fsync`s every `interval` s, compacts when the journal outgrows
    the snapshot, and once more on stop."""

    def __init__(self, path: Path, table_name: str, token: str, *, interval: float = 1.0) -> None:
        self.path, self.table_name, self.token, self.interval = path, table_name, token, interval
        self.journal = journal_of(path)
        self.encoded = 0  # items encoded since start (a count tests read)
        self._table: Any = None
        self._changed: set[tuple[Any, Any]] = set()
        self._texts: dict[tuple[Any, Any], str] = {}
        self._snapshot_bytes = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="baton-persist", daemon=True)
        self._hooked = contextlib.ExitStack()
        self._file_lock = threading.Lock()  # one compaction (or fsync) at a time: rotation closes the file

    def start(self) -> None:
        """Under the lock (no write falls between them): the snapshot written, the journal emptied, the hook on."""
        table = _table(self.table_name)
        with dynamodb_lock():
            changed = track_changes(table)
            if changed is None:
                raise RuntimeError("the journal needs the write hooks of baton.local.moto_scale.dynamodb_at_scale")
            changed.clear()
            self._table, self._changed = table, changed
            self._texts = {(i.hash_key, i.range_key): _item_text(i) for i in stored_items(table)}
            self.encoded += len(self._texts)
            self._write_snapshot(list(self._texts.values()))
            self.journal.open(truncate=True)
            self.journal.drop_old()
            self._hooked.enter_context(after_each_write(self.commit))
        self._thread.start()

    def commit(self) -> None:
        """The items the write just made changed, appended as one journal line (under the lock)."""
        if not self._changed:
            return
        puts, deletes = [], []
        while self._changed:
            key = self._changed.pop()
            item = stored_item(self._table, *key)
            if item is None:
                if self._texts.pop(key, None) is not None:
                    names = (self._table.hash_key_attr, self._table.range_key_attr)
                    attrs = {name: value.to_json() for name, value in zip(names, key, strict=True) if value is not None}
                    deletes.append(json.dumps(attrs, separators=(",", ":")))
            else:
                self._texts[key] = text = _item_text(item)
                self.encoded += 1
                puts.append(text)
        if puts or deletes:
            self.journal.append(line(puts, deletes))

    def compact(self) -> None:
        """The snapshot rewritten from the kept texts (cut under the lock), the journal it covers dropped."""
        with self._file_lock:
            with dynamodb_lock():
                texts = list(self._texts.values())
                self.journal.rotate()
            self._write_snapshot(texts)
            self.journal.drop_old()

    def _write_snapshot(self, texts: list[str]) -> None:
        save(self.path, self.token, texts)
        self._snapshot_bytes = sum(map(len, texts))

    def _loop(self) -> None:
        while not self._stopping.wait(self.interval):
            try:
                with self._file_lock:
                    self.journal.sync()
                if self.journal.bytes >= max(COMPACT_BYTES, self._snapshot_bytes):
                    self.compact()
            except Exception:
                log.exception("local stack: saving %s failed (will try again)", self.path)

    def stop(self) -> None:
        """The snapshot written once more (the journal stays open: a write still in flight is journaled)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self.compact()

    def close(self) -> None:  # after the emulator stopped
        self._hooked.close()
        self.journal.close()
