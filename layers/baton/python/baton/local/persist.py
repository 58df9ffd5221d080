"""What the local stack keeps across restarts: its DynamoDB table (every run, question, interrupt, review
thread and event) and the bearer token, in one file under the state dir (`.baton/local-data.json`).

The file is written whole to a temporary file beside it and renamed over it (a crash mid-write leaves the
previous file), from a snapshot taken under the lock every moto DynamoDB call holds (no write is ever
half in it): every second while anything changed, and on stop. Each item's text is kept between saves
and only the items written since the last one are encoded again (`moto_scale.track_changes`), so a
save's cost under the lock follows what changed, not the whole history. An answer is in the file once the next
snapshot after its 200 is written (within a second; longer only for a table so big that copying it
takes more than a tenth of a second), and stays there.

Step Functions executions live in moto's memory and cannot be saved: on restart every hosted run that
was running or paused is marked failed with `RESTART_REASON` (and a `run_failed` event), its pending
interactions are cancelled and its parked waits released, so nothing looks answerable that is not.
External runs (agents that talk to the API) have no execution: their questions and interrupts stay
pending and answerable with the same token.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from baton.events import RunFailed
from baton.local.moto_fixes import dynamodb_lock, dynamodb_writes
from baton.local.moto_scale import track_changes
from baton.models import status_of
from baton.workflows.table import ALL_PENDING_PK, ALL_PENDING_PK_ATTRIBUTE, ALL_PENDING_SK_ATTRIBUTE

if TYPE_CHECKING:
    from pathlib import Path

    from baton.services.core import Core

DATA_FILE = "local-data.json"
FORMAT = 1
RESTART_REASON = "the local stack restarted; executions do not survive a restart"
_OPEN_RUN_STATES = frozenset({"created", "running", "paused_waiting_human"})
log = logging.getLogger("baton")


@dataclass
class Saved:
    token: str
    items: list[dict[str, Any]] = field(default_factory=list)  # the table's items, in DynamoDB JSON


def load(path: Path) -> Saved | None:
    """The saved data, or None when there is none (or it cannot be read: then say so and start clean)."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_hook=_binary_back)
        if data.get("format") != FORMAT or not isinstance(data.get("token"), str):
            raise ValueError(f"unknown format {data.get('format')!r}")
        return Saved(token=data["token"], items=list(data.get("items", [])))
    except (OSError, ValueError, TypeError, AttributeError) as err:
        log.warning("local stack: %s is unreadable (%s); starting with an empty table", path, err)
        return None


def save(path: Path, token: str, item_texts: list[str]) -> None:
    """Write the whole file (`item_texts`: each item as JSON text) to a temporary one beside it, then
    rename it over the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds the bearer token
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(f'{{"format":{FORMAT},"token":{json.dumps(token)},"items":[')
            out.write(",\n".join(item_texts))
            out.write("]}\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


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


def _stored_items(table: Any) -> list[Any]:
    stored = table.items.values()
    return [i for p in stored for i in p.values()] if table.range_key_attr else list(stored)


def snapshot(table_name: str) -> list[str]:
    """Every item of the table as DynamoDB JSON text, read under the DynamoDB lock (a consistent cut)."""
    table = _table(table_name)
    with dynamodb_lock():
        return [_item_text(item) for item in _stored_items(table)]


class _KeptTexts:
    """The table's item texts, kept between snapshots: each one after the first encodes only the items
    written since (or takes a whole snapshot when the writes are not tracked)."""

    def __init__(self, table_name: str) -> None:
        self.table_name = table_name
        self._table: Any = None
        self._texts: dict[tuple[Any, Any], str] = {}
        self._changed: set[tuple[Any, Any]] | None = None

    def snapshot(self) -> list[str]:
        table = _table(self.table_name)
        with dynamodb_lock():
            if table is not self._table or self._changed is None:
                self._changed = track_changes(table)
                if self._changed is None:
                    return [_item_text(item) for item in _stored_items(table)]
                self._changed.clear()
                self._table = table
                self._texts = {(i.hash_key, i.range_key): _item_text(i) for i in _stored_items(table)}
            while self._changed:
                key = self._changed.pop()
                item = _stored_item(table, *key)
                if item is None:
                    self._texts.pop(key, None)
                else:
                    self._texts[key] = _item_text(item)
            return list(self._texts.values())


def _stored_item(table: Any, hash_key: Any, range_key: Any) -> Any:
    try:
        return table.get_item(hash_key, range_key)
    except (KeyError, ValueError):  # a key the write refused: nothing stored under it
        return None


def _parked_gates(items: list[dict[str, Any]]) -> tuple[dict[tuple[str, str], str], dict[str, list[tuple[str, str]]]]:
    """The parked waits of saved items: the gate of each interaction a wait names, by (PK, id), and each
    run's await gates with the node their scope is from ("" for every node)."""
    named: dict[tuple[str, str], str] = {}
    awaits: dict[str, list[tuple[str, str]]] = {}
    for attrs in items:
        if attrs.get("record", {}).get("S") != "wait" or attrs.get("status", {}).get("S") != "parked":
            continue
        pk, gate = attrs["PK"]["S"], attrs["gate"]["S"]
        for iid in attrs.get("interaction_ids", {}).get("L", []):
            named[(pk, iid["S"])] = gate
        if attrs.get("kind", {}).get("S") == "await":
            scope = json.loads(attrs.get("scope", {}).get("S") or "{}")
            awaits.setdefault(pk, []).append((gate, scope.get("from") or ""))
    return named, awaits


def _with_blocks(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A pending interaction saved before items carried what they hold up (`Interaction.blocks`) gets the
    gate of its run's parked wait that waits on it, as the park would have written it."""
    named, awaits = _parked_gates(items)
    upgraded = []
    for attrs in items:
        sk, pk = attrs.get("SK", {}).get("S", ""), attrs.get("PK", {}).get("S", "")
        if sk.startswith("INT#") and attrs.get("status", {}).get("S") == "pending" and "blocks" not in attrs:
            node = attrs.get("node", {}).get("S")
            gate = named.get((pk, sk.removeprefix("INT#"))) or next(
                (
                    g
                    for g, src in awaits.get(pk, [])
                    if attrs.get("kind", {}).get("S") == "question" and src in ("", node)
                ),
                None,
            )
            if gate is not None:
                attrs = {**attrs, "blocks": {"S": gate}}
        upgraded.append(attrs)
    return upgraded


def with_current_indexes(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Saved items as the current key layout has them: a pending item saved before the all-pending index
    (`baton/workflows/table.py`, GSI3) gets its keys, so the inbox's every-kind page lists it, and what
    it holds up (`_with_blocks`)."""
    upgraded = []
    for attrs in _with_blocks(items):
        pending = attrs.get("GSI1PK", {}).get("S", "")
        if pending.startswith("PENDING#") and ALL_PENDING_PK_ATTRIBUTE not in attrs and "GSI1SK" in attrs:
            attrs = {
                **attrs,
                ALL_PENDING_PK_ATTRIBUTE: {"S": ALL_PENDING_PK},
                ALL_PENDING_SK_ATTRIBUTE: attrs["GSI1SK"],
            }
        upgraded.append(attrs)
    return upgraded


def restore(table_name: str, items: list[dict[str, Any]]) -> None:
    """Put the saved items back into the (new, empty) table, in the current key layout."""
    table = _table(table_name)
    with dynamodb_lock():
        for attrs in with_current_indexes(items):
            table.put_item(attrs, overwrite=True)


def close_interrupted_runs(core: Core, items: list[dict[str, Any]]) -> list[str]:
    """Mark every hosted run that was running or paused as failed (executions did not survive), cancel
    its pending interactions and release its parked waits. Returns the run ids it closed."""
    closed = []
    for attrs in items:
        if attrs.get("SK", {}).get("S") != "RUN" or not attrs.get("hosted", {}).get("BOOL"):
            continue
        if attrs.get("status", {}).get("S") not in _OPEN_RUN_STATES:
            continue
        run_id = attrs["PK"]["S"].removeprefix("RUN#")
        if core.set_run_status(run_id, "failed", allowed_from=set(_OPEN_RUN_STATES), reason=RESTART_REASON):
            core.record(run_id, RunFailed(reason=RESTART_REASON))
            closed.append(run_id)
        _close_waiting(core, run_id)
    return closed


def _close_waiting(core: Core, run_id: str) -> None:
    """Nothing of a run whose execution is gone stays answerable: pending interactions are cancelled,
    parked waits released (the reconciler would otherwise try their dead tokens every minute)."""
    now = core.now()
    for interaction in core.store.list_run_interactions(run_id, status="pending"):
        closed = status_of(interaction.state, "cancelled", by="baton-local", at=now, reason=RESTART_REASON)
        with contextlib.suppress(Exception):  # someone moved it meanwhile: it is not pending any more
            core.store.transition_interaction(interaction, closed)
    for wait in core.store.list_run_waits(run_id):
        if wait.status == "parked":
            core.store.release_wait(wait, "released")


class Persister:
    """Saves the table (and the token) every `interval` seconds while it changes, and once more on stop."""

    def __init__(self, path: Path, table_name: str, token: str, *, interval: float = 1.0) -> None:
        self.path, self.table_name, self.token, self.interval = path, table_name, token, interval
        self._saved_at_write = -1
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="baton-persist", daemon=True)
        self._save_lock = threading.Lock()
        self._texts = _KeptTexts(table_name)

    def start(self) -> None:
        self.save_if_changed()
        self._thread.start()

    def save_if_changed(self) -> bool:
        with self._save_lock:
            writes = dynamodb_writes()
            if writes == self._saved_at_write:
                return False
            save(self.path, self.token, self._texts.snapshot())
            self._saved_at_write = writes
            return True

    def _loop(self) -> None:
        pause = self.interval
        while not self._stopping.wait(pause):
            started = time.monotonic()
            try:
                self.save_if_changed()
            except Exception:
                log.exception("local stack: saving %s failed (will try again)", self.path)
            # a big table takes a while to copy under the DynamoDB lock: keep that under ~10% of the time
            pause = max(self.interval, 10 * (time.monotonic() - started))

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self.save_if_changed()
