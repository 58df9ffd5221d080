"""Scale fixes for moto as Baton's local AWS (the lock they rely on is `baton.local.moto_fixes`).

moto's DynamoDB has costs that grow with the table, which a long-lived local stack hits
(`dynamodb_at_scale`):
* `TransactWriteItems` deep-copies every table it touches before writing, to roll back on failure:
  0.8 s and tens of MB per call at 3k items. Here only the items the transaction names are copied.
* a table `Query` walks and sorts every item of the table to find one partition, and a GSI `Query`
  walks the whole table. Here the table query reads its partition, and each GSI keeps a map from its
  partition key to the items in it, maintained on every write.
* within its partition a table `Query` with a sort key condition (`SK >= :from`, `begins_with`) still
  compared every item of the partition (a run's whole history, for a read of its few open items). Here
  each queried partition keeps its sort keys in order (maintained on every write, like the GSI maps), and
  the query is given the slice the condition can match, found by bisection; moto's own comparison still
  decides every item of it (`baton.local.moto_sort_keys`).
* an UpdateItem (alone or in a transaction) deep-copies the stored item before changing it, to hand the
  old image to the table's stream; a table without a stream never reads that copy. Here it is not made
  for such a table (a transaction's rollback keeps its own copy of the items it updates, above).
* a transaction evaluates each item's ConditionExpression against the stored item, then hands the item to
  put_item / update_item / delete_item with the same condition, which read the item again and evaluate it
  again. Under the lock, with no item named twice in one transaction (moto refuses that), the second
  verdict is the first one: here the write is handed the item without its condition (once decided).
All keep moto's own code doing the work: they only narrow what moto looks at. The same write hooks tell
the local stack's saver which items changed (`track_changes`), so a save re-encodes only those.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from baton.local.moto_fixes import dynamodb_lock, patched
from baton.local.moto_sort_keys import in_sort_range, resort

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_scope = threading.local()  # the items Table.all_items returns to the query running on this thread


def _key_of(table: Any, op_type: str, op: dict[str, Any]) -> tuple[Any, Any]:
    from moto.dynamodb.models.dynamo_type import DynamoType

    attrs = op["Item"] if op_type == "Put" else op["Key"]
    range_attr = table.range_key_attr
    range_value = DynamoType(attrs[range_attr]) if range_attr and range_attr in attrs else None
    return DynamoType(attrs[table.hash_key_attr]), range_value


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
    """(table, hash, range, the item as it is before or None) for every item the transaction names. Only
    an Update changes the stored item in place, so only its item is copied: a Put stores a new item and a
    Delete removes it, leaving the stored one unchanged for the rollback to put back."""
    touched = []
    for entry in transact_items:
        op_type, op = next(iter(entry.items()))
        table = backend.tables.get(op.get("TableName"))
        if table is None:
            continue
        try:
            hash_key, range_key = _key_of(table, op_type, op)
        except (KeyError, TypeError, AttributeError):
            continue  # a malformed key: moto raises its own validation error before writing anything
        current = table.get_item(hash_key, range_key) if (range_key is not None or not table.range_key_attr) else None
        touched.append((table, hash_key, range_key, copy.deepcopy(current) if op_type == "Update" else current))
    return touched


_updating = threading.local()  # set while moto's update_item runs on a table without a stream
ITEM_COPIES_SKIPPED = [0]  # old images of updated items not copied (tests count it)


class _NoTableCopy:
    """Stands in for the `copy` module inside moto's DynamoDB backend: a Table is not deep-copied
    (the transaction's own items are, by `_transact_write_items`), nor the old image of an item updated
    on a table without a stream (update_item's only copy, read by the stream alone); everything else is."""

    def __init__(self, table_type: type, item_type: type) -> None:
        self._table_type = table_type
        self._item_type = item_type

    def deepcopy(self, value: Any, memo: Any = None) -> Any:
        if isinstance(value, self._table_type):
            return value  # moto's rollback then puts the same table back: a no-op
        if getattr(_updating, "streamless", False) and isinstance(value, self._item_type):
            ITEM_COPIES_SKIPPED[0] += 1
            return value  # update_item's `orig_item`: handed only to a stream, which this table has not
        return copy.deepcopy(value, memo)

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


_transacting = threading.local()  # set while moto's transact_write_items runs on this thread
CONDITIONS_DECIDED_ONCE = [0]  # transaction writes handed over without their (decided) condition


def _transact_write_items(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> Any:
        with dynamodb_lock():
            touched = _touched_items(self, transact_items)
            _transacting.on = True
            try:
                return original(self, transact_items)
            except Exception:
                for table, hash_key, range_key, item in reversed(touched):
                    _put_back(table, hash_key, range_key, item)
                raise
            finally:
                _transacting.on = False

    return transact_write_items


def _decided_once(original: Callable[..., Any]) -> Callable[..., Any]:
    """A backend write called by the transaction, its condition already decided: not evaluated again."""

    @functools.wraps(original)
    def write(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(_transacting, "on", False) and kwargs.get("condition_expression") is not None:
            CONDITIONS_DECIDED_ONCE[0] += 1
            kwargs["condition_expression"] = None
        return original(self, *args, **kwargs)

    return write


def _index_partition(table: Any, index: Any, item: Any) -> tuple[Any, ...] | None:
    values = []
    for key in index.schema:
        if key["KeyType"] == "HASH":
            value = item.attrs.get(key["AttributeName"])
            if value is None:
                return None
            values.append(value)
    return tuple(values)


def _gsi_maps(table: Any) -> dict[str, dict[tuple[Any, ...], dict[tuple[Any, Any], Any]]]:
    """Per GSI: its partition → {(hash, range) of the table item: the item}. Built on the table's first
    write or GSI query by one walk of the table (empty, on a new table), then kept current by every write
    (`_reindex`): no query or scheduled sweep ever pays for a walk of a table grown big."""
    maps: dict[str, dict[tuple[Any, ...], dict[tuple[Any, Any], Any]]] | None = table.__dict__.get("_baton_gsi")
    if maps is None:
        maps = {index.name: {} for index in table.global_indexes or []}
        where: dict[tuple[Any, Any], dict[str, tuple[Any, ...]]] = {}
        for item in _all_stored(table):
            key = (item.hash_key, item.range_key)
            for index in table.global_indexes or []:
                into = _index_partition(table, index, item)
                if into is not None:
                    maps[index.name].setdefault(into, {})[key] = item
                    where.setdefault(key, {})[index.name] = into
        table.__dict__["_baton_gsi_of"] = where
        table.__dict__["_baton_gsi"] = maps
    return maps


def _all_stored(table: Any) -> list[Any]:
    if table.range_key_attr:
        return [item for partition in table.items.values() for item in partition.values()]
    return list(table.items.values())


def track_changes(table: Any) -> set[tuple[Any, Any]] | None:
    """The (hash, range) keys of the table's items written from now on (deletes included), as a set the
    caller takes keys out of; None when `dynamodb_at_scale` is not open (its hooks are what add them)."""
    from moto.dynamodb.models.table import Table

    if not getattr(Table.all_items, "_baton_scaled", False):
        return None
    changed: set[tuple[Any, Any]] = table.__dict__.setdefault("_baton_changed", set())
    return changed


def _written(table: Any, hash_key: Any, range_key: Any) -> None:
    """After any write of one item: the GSI maps and the partition's sort key order follow it, and a
    change tracker hears of it."""
    changed = table.__dict__.get("_baton_changed")
    if changed is not None:
        changed.add((hash_key, range_key))
    _reindex(table, hash_key, range_key)
    if range_key is not None:
        resort(table, hash_key, range_key)


def _reindex(table: Any, hash_key: Any, range_key: Any) -> None:
    """Move one table item's entries in the GSI maps to where its current attributes put it."""
    maps = table.__dict__.get("_baton_gsi")
    if maps is None:
        return  # not built yet: the first GSI query builds it from the table as it is then
    where: dict[tuple[Any, Any], dict[str, tuple[Any, ...]]] = table.__dict__["_baton_gsi_of"]
    key = (hash_key, range_key)
    for name, partition in where.pop(key, {}).items():
        bucket = maps[name].get(partition)
        if bucket is not None:
            bucket.pop(key, None)
            if not bucket:
                del maps[name][partition]
    item = table.get_item(hash_key, range_key) if (range_key is not None or not table.range_key_attr) else None
    if item is None:
        return
    placed = {}
    for index in table.global_indexes or []:
        into = _index_partition(table, index, item)
        if into is not None:
            maps[index.name].setdefault(into, {})[key] = item
            placed[index.name] = into
    if placed:
        where[key] = placed


def _table_candidates(table: Any, hash_key: Any, sort: Any) -> list[Any] | None:
    if hash_key is None:
        return None
    partition = table.items.get(hash_key)
    if partition is None:
        return []
    if not table.range_key_attr:
        return [partition]
    narrowed = in_sort_range(table, hash_key, *sort) if sort else None
    return list(partition.values()) if narrowed is None else narrowed


def _candidates(table: Any, hash_key: Any, index_name: str | None, conditions: Any, sort: Any) -> list[Any] | None:
    """The items a query can match, or None to let moto walk the whole table. `sort`: the query's
    (comparison, values) on the table's sort key, when it has one."""
    if index_name is None:
        return _table_candidates(table, hash_key, sort)
    index = next((i for i in table.global_indexes or [] if i.name == index_name), None)
    if index is None or not conditions:
        return None
    given = dict(conditions)
    names = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
    if any(name not in given for name in names):
        return None
    return list(_gsi_maps(table)[index_name].get(tuple(given[name] for name in names), {}).values())


def _range_attr(table: Any, index_name: str | None, range_conditions: Any) -> str | None:
    """The attribute moto compares a query's range condition on (None: leave it all to moto)."""
    if range_conditions and len(range_conditions) > 1:
        return None  # a multi-attribute range key: moto's own rules
    if range_conditions:
        return str(range_conditions[-1][0])
    if index_name is None:
        return table.range_key_attr  # type: ignore[no-any-return]
    index = next(i for i in table.global_indexes if i.name == index_name)
    return next((k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE"), None)


def _in_range(item: Any, attr: str, comparison: str, values: list[Any]) -> bool:
    value = item.attrs.get(attr)
    return value is not None and bool(value.compare(comparison, values))


def _query(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[6] if len(args) > 6 else None)
        range_attr = _range_attr(self, index_name, kwargs.get("range_key_conditions"))
        on_sort_key = args and args[0] and index_name is None and range_attr == self.range_key_attr
        sort = (args[0], args[1]) if on_sort_key else None
        candidates = _candidates(self, hash_key, index_name, kwargs.get("hash_key_conditions"), sort)
        if candidates is None:
            return original(self, hash_key, *args, **kwargs)
        if args and args[0] and range_attr:  # moto sorts every candidate before comparing: compare first
            candidates = [i for i in candidates if _in_range(i, range_attr, args[0], args[1])]
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


def _reindexing(original: Callable[..., Any], key_of: Callable[..., tuple[Any, Any]]) -> Callable[..., Any]:
    @functools.wraps(original)
    def write(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        finally:
            with _suppress_key_errors():
                _gsi_maps(self)
                _written(self, *key_of(self, *args, **kwargs))

    return write


def _suppress_key_errors() -> contextlib.suppress:
    """A write refused for its key stored nothing to index."""
    return contextlib.suppress(KeyError, TypeError, AttributeError, ValueError)


def _put_key(table: Any, item_attrs: dict[str, Any], *_: Any, **__: Any) -> tuple[Any, Any]:
    return _key_of(table, "Put", {"Item": item_attrs})


def _delete_key(table: Any, hash_key: Any, range_key: Any = None, *_: Any, **__: Any) -> tuple[Any, Any]:
    return hash_key, range_key


def _update_item(original: Callable[..., Any]) -> Callable[..., Any]:
    """moto's update_item changes the stored item in place: re-index it afterwards."""

    @functools.wraps(original)
    def update_item(self: Any, table_name: str, key: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        table = self.tables.get(table_name)
        with dynamodb_lock():
            outer = getattr(_updating, "streamless", False)
            _updating.streamless = table is not None and table.stream_shard is None
            try:
                return original(self, table_name, key, *args, **kwargs)
            finally:
                _updating.streamless = outer
                _reindex_updated(self, table_name, key)

    return update_item


def _reindex_updated(backend: Any, table_name: str, key: dict[str, Any]) -> None:
    table = backend.tables.get(table_name)
    if table is not None:
        with _suppress_key_errors():
            _gsi_maps(table)
            _written(table, *_key_of(table, "Update", {"Key": key}))


@contextmanager
def dynamodb_at_scale() -> Iterator[None]:
    """While open, moto's DynamoDB transactions and queries cost what the items they touch cost, not
    what the table holds. Enter it inside `atomic_dynamodb_writes` (the index maps rely on the lock)."""
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.models.table import Table

    if getattr(Table.all_items, "_baton_scaled", False):
        yield
        return
    table_methods = {
        "query": _query(Table.query),
        "all_items": _all_items(Table.all_items),
        "put_item": _reindexing(Table.put_item, _put_key),
        "delete_item": _reindexing(Table.delete_item, _delete_key),
    }
    table_methods["all_items"]._baton_scaled = True  # type: ignore[attr-defined]
    backend_methods = {
        "transact_write_items": _transact_write_items(DynamoDBBackend.transact_write_items),
        "update_item": _update_item(_decided_once(DynamoDBBackend.update_item)),
        "put_item": _decided_once(DynamoDBBackend.put_item),
        "delete_item": _decided_once(DynamoDBBackend.delete_item),
    }
    # moto's backend module calls `copy.deepcopy(table)`; the name `copy` there is what it looks up.
    with (
        patched(models, {"copy": _NoTableCopy(Table, Item)}),
        patched(Table, table_methods),
        patched(DynamoDBBackend, backend_methods),
    ):
        yield
