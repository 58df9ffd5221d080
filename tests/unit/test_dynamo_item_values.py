"""The store's own attribute-value conversion (`to_item` / `from_item` in baton/adapters/dynamo_items.py)
gives what boto3's TypeSerializer / TypeDeserializer (and `plain`) give, for every value: the fast
path for strings, booleans, ints, maps and lists changes no byte of an item, and everything else (and
every error) is still boto3's."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from hypothesis import given
from hypothesis import strategies as st

from baton.adapters.dynamo_items import from_item, plain, to_item
from tests.dynamo_values import ATTRIBUTE_VALUES

_ser, _de = TypeSerializer(), TypeDeserializer()

PYTHON_LEAVES = st.one_of(
    st.text(max_size=5),
    st.booleans(),
    st.integers(),  # past 38 digits too: boto3 refuses those, and so must the store
    st.integers(min_value=-(10**38), max_value=10**38),
    st.none(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.binary(max_size=4),
    st.sets(st.text(max_size=3), min_size=1, max_size=3),
    st.sets(st.integers(min_value=-999, max_value=999), min_size=1, max_size=3),
    st.floats(allow_nan=False),  # refused by both
)
PYTHON_VALUES = st.recursive(
    PYTHON_LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=12,
)


def _outcome(convert: Any, value: Any) -> Any:
    try:
        return ("ok", convert(value))
    except Exception as err:  # the same refusal, by type
        return ("error", type(err))


@given(st.dictionaries(st.text(min_size=1, max_size=3), PYTHON_VALUES, max_size=4))
def test_to_item_is_the_type_serializer(values: dict[str, Any]) -> None:
    expected = _outcome(lambda v: {k: _ser.serialize(x) for k, x in v.items() if x is not None}, values)
    assert _outcome(to_item, values) == expected


@given(st.dictionaries(st.text(min_size=1, max_size=3), ATTRIBUTE_VALUES, max_size=4))
def test_from_item_is_the_type_deserializer(item: dict[str, Any]) -> None:
    expected = _outcome(lambda i: {k: plain(_de.deserialize(v)) for k, v in i.items()}, item)
    assert _outcome(from_item, item) == expected


@pytest.mark.parametrize("value", [10**38 - 1, -(10**38) + 1, 10**38, -(10**38), 0, True, Decimal("1.50"), "", [], {}])
def test_edge_values_round_trip_as_boto3_writes_them(value: Any) -> None:
    assert _outcome(to_item, {"v": value}) == _outcome(lambda v: {"v": _ser.serialize(v["v"])}, {"v": value})
    if _outcome(to_item, {"v": value})[0] == "ok":
        item = to_item({"v": value})
        assert from_item(item) == {"v": plain(_de.deserialize(item["v"]))}
