"""Sort keys kept in order per queried partition, so a table Query with a sort key condition reads the
slice it can match (`baton.local.moto_scale` gives moto's query that slice; moto's own comparison still
decides every item in it).

moto keeps a partition as a dict in insertion order and compares every item of it with the condition: a
run's read of its few open items (`SK >= "PEND#"`) compared its whole answered history. Here the first
query of a partition sorts its keys once; every write then inserts or removes one key (`resort`, from the
write hooks of `moto_scale`). A partition whose sort keys are not all strings or all numbers is not
kept (moto walks it). Strings are ordered by code point, which is the UTF-8 byte order DynamoDB uses.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

_SORTABLE = frozenset({"S", "N"})


def _sorted_keys(table: Any, hash_key: Any) -> tuple[list[Any], list[Any], str] | None:
    """A partition's sort key values in order, the keys themselves, and their type; built on the first
    query of the partition, then kept by every write (`resort`). None: not all strings or all numbers."""
    kept: dict[Any, tuple[list[Any], list[Any], str]] = table.__dict__.setdefault("_baton_sorted", {})
    entry = kept.get(hash_key)
    if entry is None:
        keys = list(table.items.get(hash_key) or {})
        kinds = {key.type for key in keys}
        if len(kinds) != 1 or not kinds <= _SORTABLE:
            return None
        keys.sort(key=lambda k: k.cast_value)
        entry = ([key.cast_value for key in keys], keys, kinds.pop())
        kept[hash_key] = entry
    return entry


def resort(table: Any, hash_key: Any, range_key: Any) -> None:
    """After a write of one item of a partition: its sort key is in the kept order iff it is stored."""
    kept = table.__dict__.get("_baton_sorted")
    entry = kept.get(hash_key) if kept else None
    if entry is None:
        return
    values, keys, kind = entry
    if range_key.type != kind:
        del kept[hash_key]  # another type of sort key: the partition is not kept (moto walks it)
        return
    value = range_key.cast_value
    at = bisect.bisect_left(values, value)
    listed = at < len(values) and values[at] == value
    stored = range_key in (table.items.get(hash_key) or {})
    if stored and not listed:
        values.insert(at, value)
        keys.insert(at, range_key)
    elif listed and not stored:
        del values[at], keys[at]


def _slice(values: list[Any], comparison: str, bounds: list[Any]) -> tuple[int, int] | None:
    """Where in sorted `values` the items a sort key condition can match are (None: not a known one)."""
    low, high = bounds[0], bounds[-1]
    spans: dict[str, Callable[[], tuple[int, int]]] = {
        "EQ": lambda: (bisect.bisect_left(values, low), bisect.bisect_right(values, low)),
        "LT": lambda: (0, bisect.bisect_left(values, low)),
        "LE": lambda: (0, bisect.bisect_right(values, low)),
        "GT": lambda: (bisect.bisect_right(values, low), len(values)),
        "GE": lambda: (bisect.bisect_left(values, low), len(values)),
        "BETWEEN": lambda: (bisect.bisect_left(values, low), bisect.bisect_right(values, high)),
    }
    name = _COMPARISON_NAMES.get(comparison.upper(), comparison.upper())
    if name == "BEGINS_WITH":
        start = end = bisect.bisect_left(values, low)
        while end < len(values) and values[end].startswith(low):
            end += 1
        return start, end
    span = spans.get(name)
    return span() if span is not None else None


_COMPARISON_NAMES = {"=": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}


def in_sort_range(table: Any, hash_key: Any, comparison: str, range_values: list[Any]) -> list[Any] | None:
    """The partition's items whose sort key the condition can match, by bisection (None: walk them all)."""
    entry = _sorted_keys(table, hash_key)
    if entry is None or not range_values or any(v.type != entry[2] for v in range_values):
        return None
    if comparison.upper() == "BEGINS_WITH" and entry[2] != "S":
        return None
    span = _slice(entry[0], comparison, [v.cast_value for v in range_values])
    if span is None:
        return None
    partition = table.items[hash_key]
    return [partition[key] for key in entry[1][span[0] : span[1]]]
