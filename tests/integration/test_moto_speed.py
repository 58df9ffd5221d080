"""moto's item values copied past its serializer (baton.local.moto_speed): moto's own bytes, with less work
than plain moto, counted (`fast=False` runs plain moto, showing the work it does); and a transaction under
`dynamodb_at_scale` copies only the item it updates."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import boto3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws
from moto.core import serialize
from moto.core.utils import get_service_model

from baton.local import moto_speed
from baton.local.moto_fixes import atomic_dynamodb_writes
from baton.local.moto_scale import dynamodb_at_scale
from baton.workflows.table import create_table_kwargs
from tests.counting import CallsCounted
from tests.dynamo_values import ATTRIBUTE_VALUES

TABLE = "speed-table"
ITEMS = 40
ATTRIBUTES = 8
# Every kind of attribute value, nested, with the edge cases of the wire form (empty strings, unicode,
# a binary, which goes through moto's own serializer).
TRICKY = {
    "S": {"S": 'héllo \u2603 "quoted"'},
    "empty": {"S": ""},
    "N": {"N": "-12.50"},
    "SS": {"SS": ["a", "b"]},
    "NS": {"NS": ["1", "2.5"]},
    "B": {"B": b"\x00\xffbinary"},
    "BS": {"BS": [b"x", b"y"]},
    "NULL": {"NULL": True},
    "BOOL": {"BOOL": False},
    "L": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"deep": {"L": [{"BOOL": True}, {"B": b"\x01"}]}}}]},
    "M": {"M": {"a": {"S": "1"}, "b": {"M": {}}, "c": {"L": []}}},
}


@pytest.fixture
def db(aws_env: None) -> Iterator[Any]:
    with mock_aws(), atomic_dynamodb_writes(), dynamodb_at_scale():
        client = boto3.client("dynamodb")
        client.create_table(**create_table_kwargs(TABLE))
        yield client


def _raw_bodies(client: Any) -> list[bytes]:
    """Collects the raw response body of every call the client makes."""
    bodies: list[bytes] = []

    def capture(response_dict: dict[str, Any], **_: Any) -> None:
        bodies.append(bytes(response_dict["body"]))

    client.meta.events.register("before-parse.dynamodb.*", capture, unique_id="baton-test-capture")
    return bodies


def _reads(db: Any) -> None:
    key = {"PK": {"S": "RUN#tricky"}, "SK": {"S": "ITEM"}}
    db.get_item(TableName=TABLE, Key=key)
    db.query(
        TableName=TABLE,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": "RUN#tricky"}},
    )
    db.scan(TableName=TABLE)
    db.batch_get_item(RequestItems={TABLE: {"Keys": [key]}})
    db.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}}])
    db.update_item(
        TableName=TABLE,
        Key=key,
        UpdateExpression="SET #n = :n",
        ExpressionAttributeNames={"#n": "N"},
        ExpressionAttributeValues={":n": {"N": "-12.50"}},
        ReturnValues="ALL_NEW",
    )


def test_fast_item_values_write_the_same_bytes_as_moto(db: Any) -> None:
    db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#tricky"}, "SK": {"S": "ITEM"}, **TRICKY})
    plain = _raw_bodies(db)
    _reads(db)
    db.meta.events.unregister("before-parse.dynamodb.*", unique_id="baton-test-capture")
    fast_before = moto_speed.FAST_VALUES[0]
    with moto_speed.fast_attribute_values():
        fast = _raw_bodies(db)
        _reads(db)
    assert moto_speed.FAST_VALUES[0] > fast_before  # the fast path was taken
    assert len(fast) == len(plain) == 6
    assert fast == plain


def _serialized(result: dict[str, Any]) -> str:
    operation = get_service_model("dynamodb").operation_model("GetItem")
    serializer = serialize.get_serializer_class("dynamodb", "json")(
        operation_model=operation, pretty_print=False, value_picker=serialize.XFormedAttributePicker()
    )
    return str(serializer.serialize(result)["body"])


@settings(max_examples=150, deadline=None)
@given(item=st.dictionaries(st.text(min_size=1, max_size=4), ATTRIBUTE_VALUES, min_size=1, max_size=4))
def test_any_attribute_value_serializes_as_moto_does(item: dict[str, Any]) -> None:
    plain = _serialized({"Item": item})
    with moto_speed.fast_attribute_values():
        fast = _serialized({"Item": item})
    assert fast == plain


def _picked() -> CallsCounted:
    """How many times moto's serializer asked its attribute picker for a value."""
    return CallsCounted((serialize.AttributePicker, "__call__"))


@pytest.mark.parametrize("fast", [False, True])
def test_a_query_response_does_not_pick_every_member_of_every_value(db: Any, fast: bool) -> None:
    for n in range(ITEMS):
        extra = {f"a{k}": {"S": f"value {k}"} for k in range(ATTRIBUTES)}
        db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#many"}, "SK": {"S": f"INT#{n:03d}"}, **extra})
    with ExitStack() as stack:
        if fast:
            stack.enter_context(moto_speed.fast_attribute_values())
        picked = stack.enter_context(_picked())
        found = db.query(
            TableName=TABLE,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": "RUN#many"}},
        )["Items"]
    assert len(found) == ITEMS
    values = ITEMS * (ATTRIBUTES + 2)
    if fast:
        assert picked.count < 20  # the output structure's own members, whatever the items hold
    else:
        assert picked.count >= 10 * values  # plain moto: every member of every value


def _park(db: Any, sk: str) -> None:
    """A parked wait as the park stores it (what `_release` then releases)."""
    parked = {"status": {"S": "parked"}, "version": {"N": "1"}, "GSI1PK": {"S": "PARKED"}}
    db.put_item(TableName=TABLE, Item={"PK": {"S": "RUN#upd"}, "SK": {"S": sk}, **parked})


def _release(db: Any, sk: str) -> dict[str, Any]:
    """The release's shape: one Update in a transaction, then the item as stored."""
    key = {"PK": {"S": "RUN#upd"}, "SK": {"S": sk}}
    db.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": TABLE,
                    "Key": key,
                    "UpdateExpression": "SET #st = :new, #ver = #ver + :one REMOVE GSI1PK",
                    "ConditionExpression": "#st = :parked",
                    "ExpressionAttributeNames": {"#st": "status", "#ver": "version"},
                    "ExpressionAttributeValues": {
                        ":new": {"S": "released"},
                        ":parked": {"S": "parked"},
                        ":one": {"N": "1"},
                    },
                }
            }
        ]
    )
    return dict(db.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"])


def _item_copies() -> CallsCounted:
    """How many stored items moto (or a fix) deep-copied."""
    from moto.dynamodb.models.dynamo_type import Item

    return CallsCounted((Item, "__deepcopy__"))


@pytest.mark.parametrize("scaled", [False, True])
def test_an_update_copies_the_stored_item_once_for_its_rollback(aws_env: None, scaled: bool) -> None:
    with mock_aws(), atomic_dynamodb_writes(), ExitStack() as stack:
        if scaled:
            stack.enter_context(dynamodb_at_scale())
        db = boto3.client("dynamodb")
        db.create_table(**create_table_kwargs(TABLE))
        for n in range(ITEMS):
            _park(db, f"WAIT#{n}")
        with _item_copies() as copies:
            stored = _release(db, "WAIT#0")
        assert stored["status"] == {"S": "released"}
    if scaled:
        assert copies.count == 2  # the transaction's rollback copy of the item, and update_item's old image
    else:
        assert copies.count >= ITEMS + 1  # plain moto: the whole table, and the item's old image again
