"""DynamoDB capacity units of the calls a bench makes, computed from the items' sizes by DynamoDB's own
rules (moto reports fixed figures, so its `ConsumedCapacity` says nothing). On-demand read and write
request units follow the same rules as provisioned capacity units, so the figures price either mode.

The rules (DynamoDB developer guide, "Item sizes and formats" and "Read/write capacity mode"):
* an item's size is the UTF-8 length of each attribute name plus its value's size: a string's UTF-8
  length, a number's (significant digits + 1) // 2 + 1 bytes, a binary's length, 1 byte for a boolean or
  null, 3 bytes for a list or map plus 1 byte per element plus the elements, the sum of a set's elements;
* a write costs ceil(size / 1 KB) units (min 1) of the larger of the item before and after it; an item in
  a transaction costs twice that, a transaction's ConditionCheck too; a delete of no item still costs 1;
* a GetItem costs ceil(size / 4 KB) units (min 1), half when eventually consistent; a Query sums the sizes
  of what it read and rounds once; TransactGetItems costs twice;
* each global secondary index the write touches (projection ALL: the whole item) costs a write of its own:
  one when an item enters, leaves or changes in the index, two when its index key changes (a delete and a
  put). Index writes made after a transaction are plain writes (they propagate outside it).

The sizes before and after each write are read by the meter itself with a consistent GetItem that is not
counted among the bench's calls. A Query with a filter is measured by the items it returned: `filtered`
counts those queries (their figure is a lower bound)."""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from baton.workflows.table import GLOBAL_SECONDARY_INDEXES, PK, SK

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

KB = 1024
_WRITE_OPS = ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem")
_meter_reading = threading.local()


def value_size(value: Mapping[str, Any]) -> int:
    """The size of one attribute value in DynamoDB's wire form (`{"S": "x"}`)."""
    [(kind, inner)] = value.items()
    if kind == "L":
        return 3 + sum(1 + value_size(v) for v in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + value_size(v) for k, v in inner.items())
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: v}) for v in inner)
    return _SCALAR_SIZES[kind](inner)


def number_size(text: str) -> int:
    """A number's size: about one byte per two significant digits, plus one."""
    digits = Decimal(text).normalize().as_tuple().digits
    return (len(digits) + 1) // 2 + 1


_SCALAR_SIZES: dict[str, Callable[[Any], int]] = {
    "S": lambda text: len(text.encode()),
    "N": number_size,
    "B": lambda data: len(data) if isinstance(data, bytes) else len(data.encode()),
    "BOOL": lambda _: 1,
    "NULL": lambda _: 1,
}


def item_size(item: Mapping[str, Mapping[str, Any]] | None) -> int:
    """An item's size in bytes (0 for no item)."""
    return sum(len(name.encode()) + value_size(v) for name, v in (item or {}).items())


def write_units(before: int, after: int) -> int:
    return max(1, math.ceil(max(before, after) / KB))


def read_units(size: int, *, consistent: bool) -> float:
    units = max(1, math.ceil(size / 4 / KB))
    return float(units) if consistent else units / 2


def index_writes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> int:
    """Write units the table's indexes take for one item going from `before` to `after`."""
    units = 0
    for gsi in GLOBAL_SECONDARY_INDEXES:
        keys = (gsi["partition_key"], gsi["sort_key"])
        was = before is not None and all(k in before for k in keys)
        now = after is not None and all(k in after for k in keys)
        if was and now and any(before[k] != after[k] for k in keys):  # type: ignore[index]
            units += write_units(0, item_size(before)) + write_units(0, item_size(after))
        elif was and now:
            if before != after:
                units += write_units(item_size(before), item_size(after))
        elif was:
            units += write_units(0, item_size(before))
        elif now:
            units += write_units(0, item_size(after))
    return units


class CapacityMeter:
    """Read and write units by operation, for every DynamoDB call made by clients it is `attach`ed to
    while `counting` is set."""

    def __init__(self, reader: Any, include: Callable[[], bool] = lambda: True) -> None:
        self.reader = reader  # a client of the same table, whose own calls the meter does not count
        self.include = include  # whether the call being made is one the bench measures
        self.reads: Counter[str] = Counter()
        self.writes: Counter[str] = Counter()
        self.filtered = 0
        self.counting = threading.Event()

    @staticmethod
    def is_meter_call() -> bool:
        return bool(getattr(_meter_reading, "on", False))

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-call.dynamodb.*", self._before)
        client.meta.events.register("after-call.dynamodb.*", self._after)

    def reset(self) -> None:
        self.reads.clear()
        self.writes.clear()
        self.filtered = 0

    def _get(self, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        _meter_reading.on = True
        try:
            item: dict[str, Any] | None = self.reader.get_item(TableName=table, Key=key, ConsistentRead=True).get(
                "Item"
            )
            return item
        finally:
            _meter_reading.on = False

    @staticmethod
    def _writes(op: str, body: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any], bool]]:
        """(table, action, key, transactional) of each item a write names."""

        def key_of(item: Mapping[str, Any]) -> dict[str, Any]:
            return {PK: item[PK], SK: item[SK]}

        if op == "PutItem":
            return [(body["TableName"], "Put", key_of(body["Item"]), False)]
        if op in ("UpdateItem", "DeleteItem"):
            return [(body["TableName"], op.removesuffix("Item"), dict(body["Key"]), False)]
        if op == "BatchWriteItem":
            return [
                (
                    table,
                    "Put" if "PutRequest" in r else "Delete",
                    key_of(r["PutRequest"]["Item"]) if "PutRequest" in r else dict(r["DeleteRequest"]["Key"]),
                    False,
                )
                for table, requests in body["RequestItems"].items()
                for r in requests
            ]
        found = []
        for entry in body["TransactItems"]:
            [(action, spec)] = entry.items()
            key = key_of(spec["Item"]) if action == "Put" else dict(spec["Key"])
            found.append((spec["TableName"], action, key, True))
        return found

    def _before(self, model: Any, params: Mapping[str, Any], context: dict[str, Any], **_: Any) -> None:
        """Keep what `_after` needs in the call's context: a read's request (its consistency), the items a
        write names as they were before it."""
        if not self.counting.is_set() or self.is_meter_call() or not self.include():
            return
        body = json.loads(params.get("body") or b"{}")
        if model.name in _WRITE_OPS:
            context["capacity_before"] = [(w, self._get(w[0], w[2])) for w in self._writes(model.name, body)]
        else:
            context["capacity_request"] = body

    def _after(self, model: Any, http_response: Any, context: dict[str, Any], **_: Any) -> None:
        if not self.counting.is_set() or self.is_meter_call() or not self.include():
            return
        if http_response.status_code != 200:
            return
        op = model.name
        if op in _WRITE_OPS:
            for (table, action, key, transactional), before in context.get("capacity_before", []):
                size_before = item_size(before)
                if action == "ConditionCheck":
                    self.writes[op] += 2 * write_units(size_before, 0)
                    continue
                after = self._get(table, key)
                self.writes[op] += (2 if transactional else 1) * write_units(size_before, item_size(after))
                self.writes[f"{op} (indexes)"] += index_writes(before, after)
            return
        body = json.loads(http_response.content or b"{}")
        request = context.get("capacity_request", {})
        if op == "GetItem":
            consistent = bool(request.get("ConsistentRead"))
            self.reads[op] += read_units(item_size(body.get("Item")), consistent=consistent)
        elif op == "Query":
            consistent = bool(request.get("ConsistentRead")) and "IndexName" not in request
            self.reads[op] += read_units(sum(item_size(i) for i in body.get("Items", [])), consistent=consistent)
            self.filtered += int(body.get("ScannedCount", 0) > body.get("Count", 0))
        elif op == "TransactGetItems":
            self.reads[op] += sum(2 * read_units(item_size(r.get("Item")), consistent=True) for r in body["Responses"])
        elif op == "BatchGetItem":
            for table, items in body.get("Responses", {}).items():
                consistent = bool(request.get("RequestItems", {}).get(table, {}).get("ConsistentRead"))
                self.reads[op] += sum(read_units(item_size(i), consistent=consistent) for i in items)

    def figures(self) -> dict[str, Any]:
        return {
            "read_units": round(sum(self.reads.values()), 1),
            "write_units": sum(self.writes.values()),
            "reads_by_operation": dict(sorted(self.reads.items())),
            "writes_by_operation": dict(sorted(self.writes.items())),
            "filtered_queries": self.filtered,
        }
