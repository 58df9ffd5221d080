"""moto's DynamoDB at the cost of the items a call touches, not of the table (a long-lived local stack's
table grows past where moto's own costs are usable; the lock this relies on is `baton.local.moto_fixes`):
* `TransactWriteItems` deep-copies every table it touches to roll back (0.8 s a call at 3k items): here
  only the items the transaction names are copied, and put back on failure.
* a `Query` walks every item of the table: here a table query reads its partition, and each GSI keeps a
  map from its partition key to its items, kept current by every write (which `track_changes` reports).
moto's own code still does the work; these only narrow what it looks at."""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from contextlib import contextmanager
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast
from unittest.mock import patch

from baton.local.moto_fixes import dynamodb_lock

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_scope = threading.local()  # the items Table.all_items returns to the query running on this thread
_KEY_ERRORS = (KeyError, TypeError, AttributeError, ValueError)  # a write refused for its key: nothing to index
Key = tuple[Any, Any]  # an item's (hash, range) DynamoTypes; range None for a hash-only table
GsiMaps = dict[str, dict[tuple[Any, ...], dict[Key, Any]]]  # GSI -> its partition -> {key: item}


def _key_of(table: Any, attrs: dict[str, Any]) -> Key:  # of an item, or a key, in DynamoDB JSON
    from moto.dynamodb.models.dynamo_type import DynamoType

    range_attr = table.range_key_attr
    range_value = DynamoType(attrs[range_attr]) if range_attr and range_attr in attrs else None
    return DynamoType(attrs[table.hash_key_attr]), range_value


def stored_item(table: Any, hash_key: Any, range_key: Any) -> Any:
    """The item stored under this key, or None (a key the write refused stored nothing)."""
    if range_key is None and table.range_key_attr:
        return None
    try:
        return table.get_item(hash_key, range_key)
    except (KeyError, ValueError):
        return None


def stored_items(table: Any) -> list[Any]:
    if table.range_key_attr:
        return [item for partition in table.items.values() for item in partition.values()]
    return list(table.items.values())


def _put_back(table: Any, hash_key: Any, range_key: Any, item: Any) -> None:
    """Restore one item as it was before a transaction (None: it did not exist)."""
    if item is None:
        if range_key is not None:
            table.items.get(hash_key, {}).pop(range_key, None)
        else:
            table.items.pop(hash_key, None)
    elif range_key is not None:
        table.items[hash_key][range_key] = item
    else:
        table.items[hash_key] = item
    _written(table, hash_key, range_key)


def _touched_items(backend: Any, transact_items: list[dict[str, Any]]) -> list[tuple[Any, Any, Any, Any]]:
    """(table, hash, range, the item before or None) for every item the transaction names; only an Update
    changes the stored item in place, so only its item is copied."""
    touched = []
    for entry in transact_items:
        op_type, op = next(iter(entry.items()))
        table = backend.tables.get(op.get("TableName"))
        if table is None:
            continue
        try:
            hash_key, range_key = _key_of(table, op["Item"] if op_type == "Put" else op["Key"])
        except (KeyError, TypeError, AttributeError):
            continue  # a malformed key: moto raises its own validation error before writing anything
        current = stored_item(table, hash_key, range_key)
        touched.append((table, hash_key, range_key, copy.deepcopy(current) if op_type == "Update" else current))
    return touched


def _transact_write_items(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> Any:
        with dynamodb_lock():
            touched = _touched_items(self, transact_items)
            try:
                return original(self, transact_items)
            except Exception:
                for table, hash_key, range_key, item in reversed(touched):
                    _put_back(table, hash_key, range_key, item)
                raise

    return transact_write_items


def _hash_names(index: Any) -> list[str]:
    return [key["AttributeName"] for key in index.schema if key["KeyType"] == "HASH"]


def _gsi_maps(table: Any) -> GsiMaps:
    """Built by one walk of the table at its first write or GSI query, then kept current by every write."""
    if "_baton_gsi" not in table.__dict__:
        table.__dict__["_baton_gsi"] = {index.name: {} for index in table.global_indexes or []}
        table.__dict__["_baton_gsi_of"] = {}  # (hash, range) -> {GSI: the partition it is in}
        for item in stored_items(table):
            _place(table, (item.hash_key, item.range_key), item)
    return cast("GsiMaps", table.__dict__["_baton_gsi"])


def _place(table: Any, key: Key, item: Any) -> None:
    maps, where = table.__dict__["_baton_gsi"], table.__dict__["_baton_gsi_of"]
    for index in table.global_indexes or []:
        into = tuple(item.attrs.get(name) for name in _hash_names(index))
        if all(value is not None for value in into):
            maps[index.name].setdefault(into, {})[key] = item
            where.setdefault(key, {})[index.name] = into


def track_changes(table: Any) -> set[Key] | None:
    """The (hash, range) keys of the table's items written from now on (deletes included), as a set the
    caller takes keys out of; None when `dynamodb_at_scale` is not open (its hooks are what add them)."""
    from moto.dynamodb.models.table import Table

    if not getattr(Table.all_items, "_baton_scaled", False):
        return None
    return cast("set[Key]", table.__dict__.setdefault("_baton_changed", set()))


def _written(table: Any, hash_key: Any, range_key: Any) -> None:
    """After any write of one item: a change tracker hears of it, and its GSI entries move to where its
    current attributes put it (when the maps are built: else the first GSI query builds them)."""
    key = (hash_key, range_key)
    table.__dict__.get("_baton_changed", set()).add(key)
    maps = table.__dict__.get("_baton_gsi")
    if maps is None:
        return
    for name, partition in table.__dict__["_baton_gsi_of"].pop(key, {}).items():
        bucket = maps[name].get(partition)
        if bucket is not None:
            bucket.pop(key, None)
            if not bucket:
                del maps[name][partition]
    item = stored_item(table, hash_key, range_key)
    if item is not None:
        _place(table, key, item)


def _candidates(table: Any, hash_key: Any, index_name: str | None, conditions: Any) -> list[Any] | None:
    """The items a query can match, or None to let moto walk the whole table."""
    if index_name is None:
        if hash_key is None:
            return None
        partition = table.items.get(hash_key)
        if partition is None:
            return []
        return list(partition.values()) if table.range_key_attr else [partition]
    index = next((i for i in table.global_indexes or [] if i.name == index_name), None)
    if index is None or not conditions:
        return None
    given = dict(conditions)
    names = _hash_names(index)
    if any(name not in given for name in names):
        return None
    return list(_gsi_maps(table)[index_name].get(tuple(given[name] for name in names), {}).values())


def _query(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[6] if len(args) > 6 else None)
        candidates = _candidates(self, hash_key, index_name, kwargs.get("hash_key_conditions"))
        if candidates is None:
            return original(self, hash_key, *args, **kwargs)
        _scope.table, _scope.items = self, candidates
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            _scope.table = _scope.items = None

    return query


def _all_items(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def all_items(self: Any) -> Any:
        if getattr(_scope, "table", None) is self:
            return _scope.items  # the query sorts what it is given
        return original(self)

    return all_items


def _reindexing(original: Callable[..., Any], written: Callable[..., tuple[Any, Key]]) -> Callable[..., Any]:
    """`original` (a write) followed by `_written` on the (table, key) `written` finds in its arguments."""

    @functools.wraps(original)
    def write(self: Any, *args: Any, **kwargs: Any) -> Any:
        with dynamodb_lock():
            try:
                return original(self, *args, **kwargs)
            finally:
                with contextlib.suppress(*_KEY_ERRORS):
                    table, key = written(self, *args, **kwargs)
                    _gsi_maps(table)
                    _written(table, *key)

    return write


def _put(table: Any, item_attrs: dict[str, Any], *_: Any, **__: Any) -> tuple[Any, Key]:
    return table, _key_of(table, item_attrs)


def _delete(table: Any, hash_key: Any, range_key: Any = None, *_: Any, **__: Any) -> tuple[Any, Key]:
    return table, (hash_key, range_key)


def _update(backend: Any, table_name: str, key: dict[str, Any], *_: Any, **__: Any) -> tuple[Any, Key]:
    table = backend.tables[table_name]  # moto's update_item changes the stored item in place
    return table, _key_of(table, key)


@contextmanager
def dynamodb_at_scale() -> Iterator[None]:
    """While open, moto's DynamoDB transactions and queries cost what the items they touch cost, not
    what the table holds. Enter it inside `atomic_dynamodb_writes` (the index maps rely on the lock)."""
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    if getattr(Table.all_items, "_baton_scaled", False):
        yield
        return
    table_methods: dict[str, Any] = {
        "query": _query(Table.query),
        "all_items": _all_items(Table.all_items),
        "put_item": _reindexing(Table.put_item, _put),
        "delete_item": _reindexing(Table.delete_item, _delete),
    }
    table_methods["all_items"]._baton_scaled = True
    backend_methods: dict[str, Any] = {
        "transact_write_items": _transact_write_items(DynamoDBBackend.transact_write_items),
        "update_item": _reindexing(DynamoDBBackend.update_item, _update),
    }

    def deepcopy(value: Any, memo: Any = None) -> Any:  # a Table is the same one: moto's rollback is a no-op
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    # moto's backend module calls `copy.deepcopy(table)` through its name `copy`: there, the module with a
    # deepcopy that copies no Table (a transaction's own items are copied by `_transact_write_items`).
    with (
        patch.object(models, "copy", SimpleNamespace(**{**vars(copy), "deepcopy": deepcopy})),
        patch.multiple(Table, **table_methods),
        patch.multiple(DynamoDBBackend, **backend_methods),
    ):
        yield
